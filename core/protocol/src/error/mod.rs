//! Wire codes (§19) and the semantic verification stages (§6.4).

use core::fmt;

mod describe;
mod impls;

pub use describe::{ArgumentError, DescribeError, ErrorClass, FieldValue, Fields};

/// The 27 stable wire codes of spec §19 (`error.schema.json` `code` enum, closed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WireCode {
    UnsupportedVersion,
    AuthRequired,
    AuthInvalidSignature,
    AuthStaleSession,
    AuthStaleCoordinator,
    AuthForbidden,
    GroupNotFound,
    MembershipRequired,
    MembershipStale,
    SchemaValidationFailed,
    InvalidCommand,
    InvalidStateTransition,
    RevisionConflict,
    ActionIdCollision,
    UnknownCriticalExtension,
    WorkContractIncomplete,
    WorkOfferExpired,
    WorkAlreadyOwned,
    WorkLeaseExpired,
    WorkStaleOwnership,
    ApprovalRequired,
    BudgetExceeded,
    RateLimited,
    Backpressure,
    CursorTooOld,
    ProtocolViolation,
    InternalError,
}

impl WireCode {
    /// Every code, in the order of spec §19.
    pub const ALL: [WireCode; 27] = [
        Self::UnsupportedVersion,
        Self::AuthRequired,
        Self::AuthInvalidSignature,
        Self::AuthStaleSession,
        Self::AuthStaleCoordinator,
        Self::AuthForbidden,
        Self::GroupNotFound,
        Self::MembershipRequired,
        Self::MembershipStale,
        Self::SchemaValidationFailed,
        Self::InvalidCommand,
        Self::InvalidStateTransition,
        Self::RevisionConflict,
        Self::ActionIdCollision,
        Self::UnknownCriticalExtension,
        Self::WorkContractIncomplete,
        Self::WorkOfferExpired,
        Self::WorkAlreadyOwned,
        Self::WorkLeaseExpired,
        Self::WorkStaleOwnership,
        Self::ApprovalRequired,
        Self::BudgetExceeded,
        Self::RateLimited,
        Self::Backpressure,
        Self::CursorTooOld,
        Self::ProtocolViolation,
        Self::InternalError,
    ];

    /// The code as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::UnsupportedVersion => "UNSUPPORTED_VERSION",
            Self::AuthRequired => "AUTH_REQUIRED",
            Self::AuthInvalidSignature => "AUTH_INVALID_SIGNATURE",
            Self::AuthStaleSession => "AUTH_STALE_SESSION",
            Self::AuthStaleCoordinator => "AUTH_STALE_COORDINATOR",
            Self::AuthForbidden => "AUTH_FORBIDDEN",
            Self::GroupNotFound => "GROUP_NOT_FOUND",
            Self::MembershipRequired => "MEMBERSHIP_REQUIRED",
            Self::MembershipStale => "MEMBERSHIP_STALE",
            Self::SchemaValidationFailed => "SCHEMA_VALIDATION_FAILED",
            Self::InvalidCommand => "INVALID_COMMAND",
            Self::InvalidStateTransition => "INVALID_STATE_TRANSITION",
            Self::RevisionConflict => "REVISION_CONFLICT",
            Self::ActionIdCollision => "ACTION_ID_COLLISION",
            Self::UnknownCriticalExtension => "UNKNOWN_CRITICAL_EXTENSION",
            Self::WorkContractIncomplete => "WORK_CONTRACT_INCOMPLETE",
            Self::WorkOfferExpired => "WORK_OFFER_EXPIRED",
            Self::WorkAlreadyOwned => "WORK_ALREADY_OWNED",
            Self::WorkLeaseExpired => "WORK_LEASE_EXPIRED",
            Self::WorkStaleOwnership => "WORK_STALE_OWNERSHIP",
            Self::ApprovalRequired => "APPROVAL_REQUIRED",
            Self::BudgetExceeded => "BUDGET_EXCEEDED",
            Self::RateLimited => "RATE_LIMITED",
            Self::Backpressure => "BACKPRESSURE",
            Self::CursorTooOld => "CURSOR_TOO_OLD",
            Self::ProtocolViolation => "PROTOCOL_VIOLATION",
            Self::InternalError => "INTERNAL_ERROR",
        }
    }

    /// Parses a wire code; `None` for anything outside the closed enum.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|code| code.as_str() == text)
    }

    /// Whether an unchanged retry can succeed (§19): transient conditions only.
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            Self::RateLimited | Self::Backpressure | Self::InternalError
        )
    }
}

impl fmt::Display for WireCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The semantic stages of §6.4, plus `admission` (which is not a seventh cryptographic stage).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    Parse,
    Schema,
    SignatureEnvelope,
    KeyResolution,
    Canonicalization,
    Signature,
    Admission,
}

impl Stage {
    /// Every stage, in order (the six of §6.4, then `admission`).
    pub const ALL: [Stage; 7] = [
        Self::Parse,
        Self::Schema,
        Self::SignatureEnvelope,
        Self::KeyResolution,
        Self::Canonicalization,
        Self::Signature,
        Self::Admission,
    ];

    /// The stage name used by the manifests (`semanticStages`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Parse => "parse",
            Self::Schema => "schema",
            Self::SignatureEnvelope => "signature-envelope",
            Self::KeyResolution => "key-resolution",
            Self::Canonicalization => "canonicalization",
            Self::Signature => "signature",
            Self::Admission => "admission",
        }
    }

    /// Parses a manifest stage name (not `complete`).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|stage| stage.as_str() == text)
    }

    /// The wire code for a failure at this stage (§6.4, last paragraphs).
    pub const fn wire_code(self) -> WireCode {
        match self {
            Self::Parse | Self::Canonicalization => WireCode::ProtocolViolation,
            Self::Schema => WireCode::SchemaValidationFailed,
            Self::SignatureEnvelope | Self::KeyResolution | Self::Signature | Self::Admission => {
                WireCode::AuthInvalidSignature
            }
        }
    }

    /// The six-stage position (1–6); admission is 7 for ordering only.
    pub const fn number(self) -> u8 {
        match self {
            Self::Parse => 1,
            Self::Schema => 2,
            Self::SignatureEnvelope => 3,
            Self::KeyResolution => 4,
            Self::Canonicalization => 5,
            Self::Signature => 6,
            Self::Admission => 7,
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
