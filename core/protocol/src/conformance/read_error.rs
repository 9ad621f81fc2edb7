//! Why a bundle file could not be read (§22 bundles read from a directory root).
//!
//! A file that is absent, one that resolves outside the root, one that exists but cannot be
//! read and one larger than the size limit are distinct: a reader must never report an
//! unreadable or refused file as "missing".

use core::fmt;

use crate::error::{DescribeError, ErrorClass, Fields, WireCode};

/// The largest bundle file a directory source reads: 16 MiB. The largest file of the pinned
/// bundle (`cryptography/manifest.json`) is 66,535 bytes, so this leaves 250 × headroom while
/// refusing a huge or sparse file by its size before any byte of it is read.
pub const MAX_BUNDLE_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A bundle file could not be read. Every variant names the requested path (relative to the
/// bundle root, as the manifest spells it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleReadError {
    /// The path is not a plain relative `/`-separated path (`..`, `.`, empty segment,
    /// absolute, backslash or NUL).
    InvalidPath { path: String },
    /// Nothing exists at the path.
    Missing { path: String },
    /// The path resolves (through a symlink anywhere along it) to a place outside the root.
    OutsideRoot { path: String },
    /// Something exists at the path but it cannot be read as a regular file (a directory, a
    /// FIFO, a dangling symlink, a permission error, an I/O error).
    Unreadable { path: String, detail: String },
    /// The file is larger than the limit; refused from its metadata before it is read.
    TooLarge { path: String, size: u64, limit: u64 },
}

impl BundleReadError {
    /// The requested path.
    pub fn path(&self) -> &str {
        match self {
            Self::InvalidPath { path }
            | Self::Missing { path }
            | Self::OutsideRoot { path }
            | Self::Unreadable { path, .. }
            | Self::TooLarge { path, .. } => path,
        }
    }

    /// Whether nothing exists at the path (the only case a caller may call "missing").
    pub const fn is_missing(&self) -> bool {
        matches!(self, Self::Missing { .. })
    }
}

impl fmt::Display for BundleReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidPath { path } => {
                write!(f, "{path:?} is not a safe relative path in the bundle")
            }
            Self::Missing { path } => write!(f, "{path} is missing"),
            Self::OutsideRoot { path } => write!(f, "{path} resolves outside the bundle root"),
            Self::Unreadable { path, detail } => write!(f, "{path} is unreadable: {detail}"),
            Self::TooLarge { path, size, limit } => write!(
                f,
                "{path} is too large: {size} bytes, the limit is {limit} bytes"
            ),
        }
    }
}

impl std::error::Error for BundleReadError {}

impl DescribeError for BundleReadError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Bundle
    }
    /// A local fault: the bundle on disk is not usable.
    fn wire_code(&self) -> WireCode {
        WireCode::InternalError
    }
    fn reason(&self) -> &str {
        match self {
            Self::InvalidPath { .. } => "bundle-path-invalid",
            Self::Missing { .. } => "bundle-file-missing",
            Self::OutsideRoot { .. } => "bundle-file-outside-root",
            Self::Unreadable { .. } => "bundle-file-unreadable",
            Self::TooLarge { .. } => "bundle-file-too-large",
        }
    }
    fn fields(&self) -> Fields {
        let fields = Fields::new().text("path", self.path());
        match self {
            Self::TooLarge { size, limit, .. } => fields
                .integer("size", i64::try_from(*size).unwrap_or(i64::MAX))
                .integer("limit", i64::try_from(*limit).unwrap_or(i64::MAX)),
            _ => fields,
        }
    }
    /// Retrying cannot repair a bundle.
    fn retryable(&self) -> bool {
        false
    }
}
