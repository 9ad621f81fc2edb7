//! Embeds the pinned protocol bundle. The bytes come from `MWP_PROTOCOL_ROOT` (default
//! `../shared/protocol` beside the checkout) and must match `protocol.pin` exactly: path, byte
//! length and SHA-256. The bundle itself is never committed to this repository; only the
//! source distribution built by scripts/release.sh carries a copy (`core/protocol/bundle/`).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    eprintln!(
        "hint: point MWP_PROTOCOL_ROOT at a checkout of the MissionWeaveProtocol repository at the \
         commit named in core/protocol/protocol.pin (source-commit), e.g. \
         MWP_PROTOCOL_ROOT=/path/to/missionweaveprotocol cargo build"
    );
    std::process::exit(1);
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(64), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let pin_path = manifest_dir.join("protocol.pin");
    println!("cargo:rerun-if-changed={}", pin_path.display());
    println!("cargo:rerun-if-env-changed=MWP_PROTOCOL_ROOT");
    // A source distribution (scripts/release-sdist.py) carries the pinned files in `bundle/`
    // beside this manifest, so `pip install` of the sdist builds with nothing else on disk; a
    // checkout never has that directory (.gitignore) and reads the bundle beside the checkout.
    // Either way the bytes are checked against the pin below.
    let vendored = manifest_dir.join("bundle");
    let root = match env::var_os("MWP_PROTOCOL_ROOT") {
        Some(root) => PathBuf::from(root),
        None if vendored.is_dir() => vendored,
        None => manifest_dir.join("../../../shared/protocol"),
    };
    let root = root.canonicalize().unwrap_or_else(|_| {
        fail(&format!(
            "protocol bundle root {} does not exist",
            root.display()
        ))
    });
    let pin = fs::read_to_string(&pin_path)
        .unwrap_or_else(|_| fail("core/protocol/protocol.pin is missing"));

    let mut commit = String::new();
    let mut schemas = String::new();
    let mut others = String::new();
    let mut count = 0usize;
    for line in pin.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("source-commit ") {
            commit = rest.trim().to_owned();
            continue;
        }
        if line.starts_with("protocol-version ") {
            continue;
        }
        let mut fields = line.splitn(3, ' ');
        let (Some(sha), Some(length), Some(rel)) = (fields.next(), fields.next(), fields.next())
        else {
            fail(&format!("malformed pin line: {line}"));
        };
        let path: PathBuf = Path::new(&root).join(rel);
        println!("cargo:rerun-if-changed={}", path.display());
        let bytes = fs::read(&path).unwrap_or_else(|_| {
            fail(&format!(
                "pinned bundle file {rel} is missing under {}",
                root.display()
            ))
        });
        if bytes.len().to_string() != length || hex(&Sha256::digest(&bytes)) != sha {
            fail(&format!(
                "bundle file {rel} under {} differs from the pin (length {} sha256 {})",
                root.display(),
                bytes.len(),
                hex(&Sha256::digest(&bytes))
            ));
        }
        let entry = format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            path.display().to_string()
        );
        if rel.starts_with("schemas/") && rel.ends_with(".schema.json") {
            schemas.push_str(&entry);
        } else {
            others.push_str(&entry);
        }
        count += 1;
    }
    if commit.is_empty() || count == 0 {
        fail("protocol.pin names no source commit or no files");
    }
    let generated = format!(
        "/// The protocol commit the embedded bundle was pinned at.\n\
         pub const SOURCE_COMMIT: &str = {commit:?};\n\
         /// Number of pinned files.\n\
         pub const PINNED_FILE_COUNT: usize = {count};\n\
         /// The 22 normative schemas, always embedded.\n\
         pub static SCHEMA_FILES: &[(&str, &[u8])] = &[\n{schemas}];\n\
         /// Every other pinned file (structural, cryptography and admission bundles).\n\
         #[cfg(feature = \"conformance-bundle\")]\n\
         pub static BUNDLE_FILES: &[(&str, &[u8])] = &[\n{others}];\n\
         #[cfg(not(feature = \"conformance-bundle\"))]\n\
         pub static BUNDLE_FILES: &[(&str, &[u8])] = &[];\n"
    );
    let out = PathBuf::from(env::var("OUT_DIR").unwrap_or_default()).join("bundle_files.rs");
    fs::write(out, generated).unwrap_or_else(|_| fail("cannot write the generated bundle table"));
}
