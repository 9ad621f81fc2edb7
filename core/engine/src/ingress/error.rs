//! Ingress errors and their §19 descriptions.
//!
//! `Display` is the wire view. Verification failures and freshness failures show only a code
//! and the verifier's fixed message: a wire response "MUST NOT reveal which key-resolution,
//! admission, or cryptographic check failed" (§6.4), and freshness shares
//! `AUTH_INVALID_SIGNATURE` with stages 3, 4 and 6 (`spec-digest.md` §3.13). The specific
//! reason is in [`DescribeError::reason`] and [`DescribeError::detail`], for the protected
//! audit record only.

use core::fmt;

use missionweaveprotocol::signed_documents::WIRE_MESSAGE;
use missionweaveprotocol::{DescribeError, ErrorClass, Fields, Stage, VerificationError, WireCode};

use super::authorizer::AuthorizationRefusal;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Which edge of the freshness window `issuedAt` lies beyond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreshnessViolation {
    /// Older than the maximum age.
    TooOld,
    /// Further ahead than the tolerated clock skew.
    InFuture,
}

impl FreshnessViolation {
    /// Stable kebab-case reason, in the verifier's reason style.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TooOld => "command-stale",
            Self::InFuture => "command-from-future",
        }
    }
}

/// `issuedAt` outside the freshness window (§6.4): `AUTH_INVALID_SIGNATURE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreshnessError {
    /// Which edge was passed.
    pub violation: FreshnessViolation,
    /// The Command's `issuedAt`, as signed.
    pub issued_at: String,
    /// The authority's time of the check.
    pub now: UnixMillis,
    /// The edge that was passed (earliest or latest acceptable instant).
    pub bound: UnixMillis,
}

impl FreshnessError {
    /// The protected diagnostic.
    pub fn protected(&self) -> String {
        match self.violation {
            FreshnessViolation::TooOld => format!(
                "issuedAt {} is before the earliest acceptable instant {} (now {})",
                self.issued_at, self.bound, self.now
            ),
            FreshnessViolation::InFuture => format!(
                "issuedAt {} is after the latest acceptable instant {} (now {})",
                self.issued_at, self.bound, self.now
            ),
        }
    }
}

impl fmt::Display for FreshnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The wire view, identical to a stage 3/4/6 verification failure's.
        write!(f, "{}: {WIRE_MESSAGE}", WireCode::AuthInvalidSignature)
    }
}

impl std::error::Error for FreshnessError {}

/// Why ingress refused a Command. Nothing was applied in every case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IngressError {
    /// Six-stage verification failed (the verifier's own error and wire view).
    Verification(VerificationError),
    /// `issuedAt` is outside the freshness and clock-skew window.
    Freshness(FreshnessError),
    /// The signer is not authorized for this Command (§6.4): `AUTH_FORBIDDEN`.
    Forbidden(AuthorizationRefusal),
}

impl fmt::Display for IngressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Verification(e) => fmt::Display::fmt(e, f),
            Self::Freshness(e) => fmt::Display::fmt(e, f),
            Self::Forbidden(_) => f.write_str("the signer is not authorized for this Command"),
        }
    }
}

impl std::error::Error for IngressError {}

impl From<VerificationError> for IngressError {
    fn from(e: VerificationError) -> Self {
        Self::Verification(e)
    }
}

impl DescribeError for IngressError {
    fn class(&self) -> ErrorClass {
        // Freshness and signer authorization both belong to accepting a signed document
        // (§6.4, "after admission"). The error vocabulary has no authorization family yet, so
        // `AUTH_FORBIDDEN` shares the verification family; the code tells them apart.
        ErrorClass::Verification
    }

    fn wire_code(&self) -> WireCode {
        match self {
            Self::Verification(e) => e.wire_code(),
            Self::Freshness(_) => WireCode::AuthInvalidSignature,
            Self::Forbidden(_) => WireCode::AuthForbidden,
        }
    }

    fn reason(&self) -> &str {
        match self {
            Self::Verification(e) => e.reason,
            Self::Freshness(e) => e.violation.as_str(),
            Self::Forbidden(e) => &e.reason,
        }
    }

    fn stage(&self) -> Option<Stage> {
        match self {
            Self::Verification(e) => Some(e.stage),
            // Freshness and authorization come after the six stages; neither is one of them.
            Self::Freshness(_) | Self::Forbidden(_) => None,
        }
    }

    fn detail(&self) -> String {
        match self {
            Self::Verification(e) => e.detail.clone(),
            Self::Freshness(e) => e.protected(),
            Self::Forbidden(e) => e.detail.clone(),
        }
    }

    fn fields(&self) -> Fields {
        match self {
            Self::Verification(e) => Fields::new()
                .integer("stage_number", i64::from(e.stage.number()))
                .text("wire_message", e.wire_message()),
            Self::Freshness(_) => Fields::new().text("wire_message", WIRE_MESSAGE),
            Self::Forbidden(_) => Fields::new(),
        }
    }

    fn retryable(&self) -> bool {
        // §19: AUTH_INVALID_SIGNATURE never unchanged; an expired Command needs a new Action
        // ID; AUTH_FORBIDDEN needs a policy change first.
        false
    }
}
