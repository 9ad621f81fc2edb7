//! Stage-4 failures. They all map to `AUTH_INVALID_SIGNATURE` on the wire; the reason is kept
//! for the protected audit record only (§6.4).

use core::fmt;

/// The specific stage-4 reason (protected diagnostic vocabulary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegistryErrorReason {
    EvidenceUnavailable,
    EvidenceIncomplete,
    MalformedEvidence,
    OrganizationId,
    NoBindings,
    BindingShape,
    KeyIdNotUri,
    PrincipalShape,
    Algorithm,
    PublicKeyEncoding,
    PublicKeyPoint,
    ValidFrom,
    HistoryShape,
    HistoryTimestamp,
    KeyIdReused,
    PublicKeyReused,
    KeyIdAlias,
    HistorySequence,
    HistoryOrder,
    HistoryMovedLater,
    UnknownKey,
    SignerMismatch,
    NotYetValid,
    Expired,
    Revoked,
}

impl RegistryErrorReason {
    /// A stable kebab-case name for audit records.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::EvidenceUnavailable => "registry-evidence-unavailable",
            Self::EvidenceIncomplete => "registry-evidence-incomplete",
            Self::MalformedEvidence => "registry-evidence-malformed",
            Self::OrganizationId => "organization-id-invalid",
            Self::NoBindings => "no-bindings",
            Self::BindingShape => "binding-shape",
            Self::KeyIdNotUri => "key-id-invalid",
            Self::PrincipalShape => "principal-invalid",
            Self::Algorithm => "algorithm-unsupported",
            Self::PublicKeyEncoding => "public-key-encoding",
            Self::PublicKeyPoint => "public-key-point",
            Self::ValidFrom => "valid-from-malformed",
            Self::HistoryShape => "validity-history-shape",
            Self::HistoryTimestamp => "validity-history-timestamp",
            Self::KeyIdReused => "key-id-reused",
            Self::PublicKeyReused => "public-key-reused",
            Self::KeyIdAlias => "key-id-alias",
            Self::HistorySequence => "validity-history-sequence",
            Self::HistoryOrder => "validity-history-order",
            Self::HistoryMovedLater => "validity-boundary-moved-later",
            Self::UnknownKey => "unknown-key",
            Self::SignerMismatch => "signer-mismatch",
            Self::NotYetValid => "key-not-yet-valid",
            Self::Expired => "key-expired",
            Self::Revoked => "key-revoked",
        }
    }
}

/// A stage-4 (`key-resolution`) failure with its protected reason and detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    pub reason: RegistryErrorReason,
    pub detail: String,
}

impl RegistryError {
    pub(crate) fn new(reason: RegistryErrorReason, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason.as_str(), self.detail)
    }
}

impl std::error::Error for RegistryError {}
