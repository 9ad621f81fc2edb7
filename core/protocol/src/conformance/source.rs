//! Where bundle bytes come from: the embedded pinned bundle, or a directory (the CLI's `--root`).

use std::borrow::Cow;

use super::read_error::BundleReadError;

/// Read access to a protocol bundle root. Paths are relative, `/`-separated.
pub trait BundleSource {
    /// The bytes of one regular file, or why it cannot be read (missing, outside the root,
    /// unreadable, too large: see [`BundleReadError`]).
    fn read(&self, path: &str) -> Result<Cow<'_, [u8]>, BundleReadError>;
    /// Every regular file below the directory `prefix` (e.g. `cryptography/`), sorted; an
    /// error when the directory itself cannot be listed inside the root.
    fn list(&self, prefix: &str) -> Result<Vec<String>, BundleReadError>;
    /// A short description for reports (`embedded` or a directory).
    fn describe(&self) -> String;
}

/// The bundle embedded at build time (checked against `protocol.pin`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EmbeddedBundle;

impl BundleSource for EmbeddedBundle {
    fn read(&self, path: &str) -> Result<Cow<'_, [u8]>, BundleReadError> {
        crate::bundle::embedded_file(path)
            .map(Cow::Borrowed)
            .ok_or_else(|| BundleReadError::Missing {
                path: path.to_owned(),
            })
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, BundleReadError> {
        let mut paths: Vec<String> = crate::bundle::embedded_files()
            .filter(|(path, _)| path.starts_with(prefix))
            .map(|(path, _)| path.to_owned())
            .collect();
        paths.sort();
        Ok(paths)
    }

    fn describe(&self) -> String {
        format!("embedded bundle at {}", crate::bundle::SOURCE_COMMIT)
    }
}
