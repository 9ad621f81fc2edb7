//! The MissionOwner's page and any other static file of the npm package, served under
//! [`APP_PREFIX`] from the directory given by `--app-dir` (docs/network.md "The approval
//! page"): a deployer points it at the installed package (`node_modules/missionweaveprotocol`,
//! whose `page/` and `dist/` the page loads), so the page and its WebAssembly build always
//! come from the same release, and the server binary does not embed a JavaScript build.
//!
//! Only regular files below the directory are served, named by a path whose every segment is
//! a plain name: no `..`, no `.`, no hidden names, no empty segments, no backslash or NUL
//! (checked after percent-decoding), and the file's canonical path must still lie below the
//! canonical directory (a symbolic link cannot lead out). Only the types of [`TYPES`] are
//! served, at most [`MAX_FILE_BYTES`] each; no directory listings. `GET /app/config.json` is
//! generated: what the page needs to verify what it receives (the Registry snapshot the
//! server verifies with, the Group Authority, the WebSocket path).

use std::path::{Path, PathBuf};

use missionweaveprotocol::Principal;
use missionweaveprotocol::json::{self, Object, Value};

/// Where the files are served.
pub const APP_PREFIX: &str = "/app/";
/// The page `/app` and `/app/` redirect to.
pub const APP_HOME: &str = "/app/page/approve.html";
/// The generated configuration's path.
pub const CONFIG_PATH: &str = "/app/config.json";
/// The largest file served (the WebAssembly build is a few MiB).
pub const MAX_FILE_BYTES: u64 = 32 << 20;

/// The served extensions and their content types.
pub const TYPES: [(&str, &str); 9] = [
    ("html", "text/html; charset=utf-8"),
    ("mjs", "text/javascript; charset=utf-8"),
    ("js", "text/javascript; charset=utf-8"),
    ("cjs", "text/javascript; charset=utf-8"),
    ("css", "text/css; charset=utf-8"),
    ("wasm", "application/wasm"),
    ("json", "application/json"),
    ("png", "image/png"),
    ("svg", "image/svg+xml"),
];

/// The Content-Security-Policy of every page served: scripts and styles of this origin only,
/// WebAssembly compiled from them, WebSockets to this origin ('self' covers ws/wss here).
pub const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
     base-uri 'none'; form-action 'none'";

/// What a request under [`APP_PREFIX`] resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A file to send, with its content type.
    File(PathBuf, &'static str),
    /// The generated configuration.
    Config,
    /// Redirect to [`APP_HOME`].
    Home,
    /// Not served (absent, outside, hidden, a directory, another type, too large).
    NotFound,
    /// A path that does not decode.
    BadRequest,
}

/// The static files of one directory and the generated configuration.
#[derive(Debug, Clone)]
pub struct AppFiles {
    root: PathBuf,
    config: Vec<u8>,
}

impl AppFiles {
    /// Serves `dir` (canonicalized now: it must exist); `config` is the body of
    /// [`CONFIG_PATH`] ([`config_json`]).
    pub fn new(dir: &Path, config: Vec<u8>) -> std::io::Result<Self> {
        let root = dir.canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Self { root, config })
    }

    /// The generated configuration's bytes.
    pub fn config(&self) -> &[u8] {
        &self.config
    }

    /// Resolves the request path (with its query, as in the request line). Touches the file
    /// system (canonicalize, metadata): call it where blocking is allowed.
    pub fn resolve(&self, target: &str) -> Resolved {
        let path = target.split(['?', '#']).next().unwrap_or_default();
        if path == "/app" || path == APP_PREFIX {
            return Resolved::Home;
        }
        if path == CONFIG_PATH {
            return Resolved::Config;
        }
        let Some(rest) = path.strip_prefix(APP_PREFIX) else {
            return Resolved::NotFound;
        };
        let Some(decoded) = percent_decode(rest) else {
            return Resolved::BadRequest;
        };
        let mut relative = PathBuf::new();
        for segment in decoded.split('/') {
            if !plain_segment(segment) {
                return Resolved::NotFound;
            }
            relative.push(segment);
        }
        let Some(content_type) = content_type(&decoded) else {
            return Resolved::NotFound;
        };
        let Ok(full) = self.root.join(&relative).canonicalize() else {
            return Resolved::NotFound;
        };
        if !full.starts_with(&self.root) {
            return Resolved::NotFound;
        }
        match std::fs::metadata(&full) {
            Ok(meta) if meta.is_file() && meta.len() <= MAX_FILE_BYTES => {
                Resolved::File(full, content_type)
            }
            _ => Resolved::NotFound,
        }
    }
}

/// A name that stays where it is: not empty, not `.`/`..` nor hidden, no separator of another
/// platform, no NUL or other control character.
fn plain_segment(segment: &str) -> bool {
    !segment.is_empty()
        && !segment.starts_with('.')
        && !segment
            .chars()
            .any(|c| c == '\\' || c == ':' || c.is_control())
}

/// The content type of `path`'s extension, if it is served.
pub fn content_type(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next()?;
    let (_, extension) = name.rsplit_once('.')?;
    TYPES
        .iter()
        .find(|(ext, _)| ext.eq_ignore_ascii_case(extension))
        .map(|(_, t)| *t)
}

/// `%XX` escapes decoded; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The body of [`CONFIG_PATH`]: `{"websocketPath", "groupAuthority": {type, id}, "registry"}`
/// (RFC 8785 bytes), `registry` the Registry snapshot's document as the server read it.
pub fn config_json(
    websocket_path: &str,
    authority: &Principal,
    registry_snapshot: &[u8],
) -> Result<Vec<u8>, String> {
    let registry = json::parse(registry_snapshot).map_err(|e| e.to_string())?;
    let mut config = Object::new();
    config.insert("websocketPath", Value::string(websocket_path));
    config.insert("groupAuthority", authority.to_value());
    config.insert("registry", registry);
    json::canonical_bytes(&Value::Object(config)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn files() -> (tempfile::TempDir, AppFiles) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("package");
        std::fs::create_dir_all(root.join("page")).unwrap();
        std::fs::create_dir_all(root.join("dist/wasm-web")).unwrap();
        std::fs::write(root.join("page/approve.html"), "<!doctype html>").unwrap();
        std::fs::write(root.join("dist/wasm-web/x_bg.wasm"), b"\0asm").unwrap();
        std::fs::write(root.join("page/.secret.json"), "{}").unwrap();
        std::fs::write(root.join("page/notes.txt"), "no").unwrap();
        std::fs::write(dir.path().join("outside.json"), "{}").unwrap();
        let app = AppFiles::new(&root, b"{}".to_vec()).unwrap();
        (dir, app)
    }

    #[test]
    fn files_below_the_directory_are_served_with_their_type() {
        let (_dir, app) = files();
        let Resolved::File(path, kind) = app.resolve("/app/page/approve.html?group=x") else {
            panic!()
        };
        assert!(path.ends_with("page/approve.html"));
        assert_eq!(kind, "text/html; charset=utf-8");
        assert!(matches!(
            app.resolve("/app/dist/wasm-web/x_bg.wasm"),
            Resolved::File(_, "application/wasm")
        ));
        assert!(matches!(
            app.resolve("/app/page/approve%2Ehtml"),
            Resolved::File(..)
        ));
        assert_eq!(app.resolve("/app"), Resolved::Home);
        assert_eq!(app.resolve("/app/"), Resolved::Home);
        assert_eq!(app.resolve("/app/config.json"), Resolved::Config);
    }

    #[test]
    fn nothing_outside_hidden_or_unlisted_is_served() {
        let (dir, app) = files();
        for target in [
            "/app/../outside.json",
            "/app/page/../../outside.json",
            "/app/%2e%2e/outside.json",
            "/app/page/%2e%2e/%2e%2e/outside.json",
            "/app/page%2f..%2f..%2foutside.json",
            "/app/page/..%5c..%5coutside.json",
            "/app/page/.secret.json",
            "/app/page//approve.html",
            "/app/./page/approve.html",
            "/app/page/notes.txt",
            "/app/page",
            "/app/page/",
            "/app/page/missing.html",
            "/app/page/approve.html%00.png",
            "/application.json",
        ] {
            assert_eq!(app.resolve(target), Resolved::NotFound, "{target}");
        }
        assert_eq!(app.resolve("/app/%zz.html"), Resolved::BadRequest);
        assert_eq!(app.resolve("/app/%ff%fe.html"), Resolved::BadRequest);
        // A symbolic link inside that leads outside is not followed out.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(
                dir.path().join("outside.json"),
                dir.path().join("package/page/link.json"),
            )
            .unwrap();
            assert_eq!(app.resolve("/app/page/link.json"), Resolved::NotFound);
        }
    }

    #[test]
    fn a_missing_directory_is_refused_at_start() {
        assert!(AppFiles::new(Path::new("/nonexistent/mwp-app"), Vec::new()).is_err());
        let file = tempfile::NamedTempFile::new().unwrap();
        assert!(AppFiles::new(file.path(), Vec::new()).is_err());
    }

    #[test]
    fn the_configuration_carries_the_registry_and_the_authority() {
        let authority = Principal::new(
            missionweaveprotocol::PrincipalType::Service,
            "urn:missionweaveprotocol:service:group-authority",
        );
        let body = config_json("/ws", &authority, br#"{"b": 1, "a": [2]}"#).unwrap();
        assert_eq!(
            String::from_utf8(body).unwrap(),
            r#"{"groupAuthority":{"id":"urn:missionweaveprotocol:service:group-authority","type":"service"},"registry":{"a":[2],"b":1},"websocketPath":"/ws"}"#
        );
        assert!(config_json("/ws", &authority, b"{not json").is_err());
    }
}
