//! Where bundle bytes come from: the embedded pinned bundle, or a directory (the CLI's `--root`).

use std::borrow::Cow;

/// Read access to a protocol bundle root. Paths are relative, `/`-separated.
pub trait BundleSource {
    /// The bytes of one regular file, or `None` if it does not exist or is not a regular file.
    fn read(&self, path: &str) -> Option<Cow<'_, [u8]>>;
    /// Every regular file below the directory `prefix` (e.g. `cryptography/`), sorted.
    fn list(&self, prefix: &str) -> Vec<String>;
    /// A short description for reports (`embedded` or a directory).
    fn describe(&self) -> String;
}

/// The bundle embedded at build time (checked against `protocol.pin`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EmbeddedBundle;

impl BundleSource for EmbeddedBundle {
    fn read(&self, path: &str) -> Option<Cow<'_, [u8]>> {
        crate::bundle::embedded_file(path).map(Cow::Borrowed)
    }

    fn list(&self, prefix: &str) -> Vec<String> {
        let mut paths: Vec<String> = crate::bundle::embedded_files()
            .filter(|(path, _)| path.starts_with(prefix))
            .map(|(path, _)| path.to_owned())
            .collect();
        paths.sort();
        paths
    }

    fn describe(&self) -> String {
        format!("embedded bundle at {}", crate::bundle::SOURCE_COMMIT)
    }
}
