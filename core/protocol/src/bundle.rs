//! The pinned protocol bundle, embedded at build time from `MWP_PROTOCOL_ROOT` after checking
//! every byte against `protocol.pin` (§22: implementations pin a protocol commit).

mod generated {
    include!(concat!(env!("OUT_DIR"), "/bundle_files.rs"));
}

pub use generated::{PINNED_FILE_COUNT, SOURCE_COMMIT};

/// The 22 embedded schema files as `(path, bytes)`.
pub fn schema_files() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    generated::SCHEMA_FILES.iter().copied()
}

/// Every embedded file (schemas first) as `(path, bytes)`.
pub fn embedded_files() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    generated::SCHEMA_FILES
        .iter()
        .chain(generated::BUNDLE_FILES.iter())
        .copied()
}

/// The bytes of one embedded file, by its path relative to the bundle root.
pub fn embedded_file(path: &str) -> Option<&'static [u8]> {
    embedded_files().find(|(p, _)| *p == path).map(|(_, bytes)| bytes)
}
