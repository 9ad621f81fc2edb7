//! [`ArtifactError`]: content-addressed bytes or their manifest refused (§13.1).
//!
//! A local store operation is not a wire event, but every error still names a §19 code
//! (`docs/errors.md`): bytes that do not match their manifest break the content-addressing
//! invariant of §13.1 (`PROTOCOL_VIOLATION`, never retryable unchanged); a manifest that cannot
//! be signed or does not verify carries the code of its §6.4 stage; a filesystem failure is
//! `INTERNAL_ERROR` (retryable: the store accepted nothing).

use core::fmt;

use missionweaveprotocol::signed_documents::VerificationError;
use missionweaveprotocol::{DescribeError, ErrorClass, Fields, Stage, WireCode};

/// Why Artifact bytes or a manifest were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactError {
    /// The content hash is not `sha256:<64 lowercase hex>` (the only algorithm of 0.1).
    UnsupportedHash { content_hash: String },
    /// The manifest metadata is not usable (not an object, sets a computed member, lacks
    /// `contentHash`/`sizeBytes`).
    Metadata { detail: String },
    /// The manifest cannot be signed: it would fail verification at `stage`.
    Manifest { stage: Stage, detail: String },
    /// The manifest failed six-stage verification (Artifact profile).
    Rejected(VerificationError),
    /// The stored bytes' SHA-256 is not the manifest's `contentHash` (tampered or corrupt).
    HashMismatch { expected: String, actual: String },
    /// The stored bytes' length is not the manifest's `sizeBytes`.
    SizeMismatch {
        content_hash: String,
        expected: u64,
        actual: u64,
    },
    /// The store holds no bytes for the hash.
    Missing { content_hash: String },
    /// The store already holds other bytes at the hash's path (tampering; a SHA-256 collision
    /// is not expected): nothing is overwritten.
    Conflict { content_hash: String },
    /// The filesystem refused an operation.
    Io {
        operation: &'static str,
        path: String,
        detail: String,
    },
}

impl ArtifactError {
    /// The stable reason slug (snake_case, the authority layer's convention).
    pub fn reason(&self) -> &'static str {
        match self {
            Self::UnsupportedHash { .. } => "unsupported_hash",
            Self::Metadata { .. } => "invalid_metadata",
            Self::Manifest { .. } => "unsignable_manifest",
            Self::Rejected(_) => "manifest_rejected",
            Self::HashMismatch { .. } => "hash_mismatch",
            Self::SizeMismatch { .. } => "size_mismatch",
            Self::Missing { .. } => "content_missing",
            Self::Conflict { .. } => "stored_bytes_conflict",
            Self::Io { .. } => "io",
        }
    }
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedHash { content_hash } => write!(
                f,
                "content hash {content_hash:?} is not sha256:<64 lowercase hex>"
            ),
            Self::Metadata { detail } => write!(f, "invalid Artifact manifest metadata: {detail}"),
            Self::Manifest { stage, .. } => write!(
                f,
                "the Artifact manifest cannot be signed: it would fail at stage {stage}"
            ),
            // The wire view only: the stage and reason are protected (§6.4).
            Self::Rejected(e) => write!(f, "{e}"),
            Self::HashMismatch { expected, actual } => write!(
                f,
                "the stored bytes hash to {actual}, not the manifest's {expected}"
            ),
            Self::SizeMismatch {
                content_hash,
                expected,
                actual,
            } => write!(
                f,
                "the stored bytes of {content_hash} are {actual} bytes long, not the manifest's \
                 {expected}"
            ),
            Self::Missing { content_hash } => write!(f, "no stored bytes for {content_hash}"),
            Self::Conflict { content_hash } => write!(
                f,
                "other bytes are already stored at the path of {content_hash}; nothing was \
                 overwritten"
            ),
            Self::Io {
                operation, path, ..
            } => write!(f, "the Artifact store could not {operation} {path}"),
        }
    }
}

impl std::error::Error for ArtifactError {}

impl DescribeError for ArtifactError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Artifact
    }

    fn wire_code(&self) -> WireCode {
        match self {
            Self::UnsupportedHash { .. } | Self::Metadata { .. } => {
                WireCode::SchemaValidationFailed
            }
            Self::Manifest { stage, .. } => stage.wire_code(),
            Self::Rejected(e) => e.wire_code(),
            Self::HashMismatch { .. }
            | Self::SizeMismatch { .. }
            | Self::Missing { .. }
            | Self::Conflict { .. } => WireCode::ProtocolViolation,
            Self::Io { .. } => WireCode::InternalError,
        }
    }

    fn reason(&self) -> &str {
        ArtifactError::reason(self)
    }

    fn stage(&self) -> Option<Stage> {
        match self {
            Self::Manifest { stage, .. } => Some(*stage),
            Self::Rejected(e) => Some(e.stage),
            _ => None,
        }
    }

    fn detail(&self) -> String {
        match self {
            Self::Manifest { detail, .. } | Self::Io { detail, .. } => detail.clone(),
            Self::Rejected(e) => e.protected(),
            _ => self.to_string(),
        }
    }

    fn fields(&self) -> Fields {
        match self {
            Self::UnsupportedHash { content_hash }
            | Self::Missing { content_hash }
            | Self::Conflict { content_hash } => Fields::new().text("content_hash", content_hash),
            Self::HashMismatch { expected, actual } => Fields::new()
                .text("content_hash", expected)
                .text("actual_hash", actual),
            Self::SizeMismatch {
                content_hash,
                expected,
                actual,
            } => Fields::new()
                .text("content_hash", content_hash)
                .integer(
                    "expected_size",
                    i64::try_from(*expected).unwrap_or(i64::MAX),
                )
                .integer("actual_size", i64::try_from(*actual).unwrap_or(i64::MAX)),
            Self::Rejected(e) => e.fields(),
            Self::Io {
                operation, path, ..
            } => Fields::new()
                .text("operation", *operation)
                .text("path", path),
            Self::Metadata { .. } | Self::Manifest { .. } => Fields::new(),
        }
    }

    fn retryable(&self) -> bool {
        matches!(self, Self::Io { .. })
    }
}
