//! Verification and signing errors. On the wire a verification failure shows only its code and
//! a fixed message: stages 3, 4, 6 and admission are indistinguishable (§6.4); the stage and the
//! specific reason stay in the protected diagnostic.

use core::fmt;

use crate::json::{Limit, ParseError, ParseErrorKind};

use crate::error::{Stage, WireCode};

/// The fixed wire message of every verification failure.
pub const WIRE_MESSAGE: &str = "signed document rejected";

/// A failed verification: first failing semantic stage, protected reason and detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationError {
    pub stage: Stage,
    /// Stable kebab-case reason for the protected audit record.
    pub reason: &'static str,
    /// Human-readable protected detail (may name keys; never send it on the wire).
    pub detail: String,
}

impl VerificationError {
    pub(crate) fn new(stage: Stage, reason: &'static str, detail: impl Into<String>) -> Self {
        Self {
            stage,
            reason,
            detail: detail.into(),
        }
    }

    /// The wire code (§6.4, last paragraphs).
    pub fn wire_code(&self) -> WireCode {
        self.stage.wire_code()
    }

    /// What may be sent to the peer: code and the fixed message only.
    pub fn wire_message(&self) -> &'static str {
        WIRE_MESSAGE
    }

    /// Never retryable unchanged (§19).
    pub fn retryable(&self) -> bool {
        false
    }
}

impl fmt::Display for VerificationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Display is the wire view; use `protected()` for the audit view.
        write!(f, "{}: {WIRE_MESSAGE}", self.wire_code())
    }
}

impl std::error::Error for VerificationError {}

impl VerificationError {
    /// The protected diagnostic: `stage/reason: detail`.
    pub fn protected(&self) -> String {
        format!("{}/{}: {}", self.stage, self.reason, self.detail)
    }
}

/// Why a document cannot be signed: signing refuses what would not verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningError {
    /// The stage at which the produced document would fail.
    pub stage: Stage,
    pub detail: String,
    /// The stage-1 limit the produced bytes pass (`json::ParseLimits`), when that is why: the
    /// error then describes itself as the verifier's stage-1 `limit-exceeded` (§6.4).
    pub limit: Option<(Limit, usize)>,
}

impl SigningError {
    /// A document that would fail at `stage`.
    pub fn new(stage: Stage, detail: impl Into<String>) -> Self {
        Self {
            stage,
            detail: detail.into(),
            limit: None,
        }
    }

    /// The produced bytes would be refused at stage 1 by every verifier's `limits` (§6.4):
    /// `error` is the strict parser's verdict on them.
    pub fn limit_exceeded(error: &ParseError) -> Self {
        let limit = match error.kind {
            ParseErrorKind::LimitExceeded { limit, maximum } => Some((limit, maximum)),
            _ => None,
        };
        Self {
            stage: Stage::Parse,
            detail: format!("the signed document would exceed the receivers' limits: {error}"),
            limit,
        }
    }
}

impl fmt::Display for SigningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot sign: would fail at {}: {}",
            self.stage, self.detail
        )
    }
}

impl std::error::Error for SigningError {}
