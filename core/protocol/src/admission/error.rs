//! Admission failures: one wire code, a stable protected reason (admission manifest vocabulary).

use core::fmt;

use crate::error::{Stage, WireCode};

/// The protected reason of an admission failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdmissionReason {
    RecordMissing,
    RecordBindingMismatch,
    TrustedTimeOutsideKeyInterval,
    MalformedTrustedTime,
    RecordConflict,
    RecordSchemaInvalid,
    LogAuthenticationFailed,
    AppendIntegrityNotEstablished,
    LogUnavailable,
    LogIndeterminate,
    CommitFailed,
    EventSelfAnchoring,
}

impl AdmissionReason {
    /// Every reason, in the manifest schema's order.
    pub const ALL: [AdmissionReason; 12] = [
        Self::RecordMissing,
        Self::RecordBindingMismatch,
        Self::TrustedTimeOutsideKeyInterval,
        Self::MalformedTrustedTime,
        Self::RecordConflict,
        Self::RecordSchemaInvalid,
        Self::LogAuthenticationFailed,
        Self::AppendIntegrityNotEstablished,
        Self::LogUnavailable,
        Self::LogIndeterminate,
        Self::CommitFailed,
        Self::EventSelfAnchoring,
    ];

    /// The manifest's reason name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::RecordMissing => "record-missing",
            Self::RecordBindingMismatch => "record-binding-mismatch",
            Self::TrustedTimeOutsideKeyInterval => "trusted-time-outside-key-interval",
            Self::MalformedTrustedTime => "malformed-trusted-time",
            Self::RecordConflict => "record-conflict",
            Self::RecordSchemaInvalid => "record-schema-invalid",
            Self::LogAuthenticationFailed => "log-authentication-failed",
            Self::AppendIntegrityNotEstablished => "append-integrity-not-established",
            Self::LogUnavailable => "log-unavailable",
            Self::LogIndeterminate => "log-indeterminate",
            Self::CommitFailed => "commit-failed",
            Self::EventSelfAnchoring => "event-self-anchoring",
        }
    }

    /// Parses a manifest reason name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.as_str() == text)
    }
}

/// An admission failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionError {
    pub reason: AdmissionReason,
    pub detail: String,
}

impl AdmissionError {
    pub(crate) fn new(reason: AdmissionReason, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }

    /// The failure of a step-wise flow whose result was taken before it finished: fail closed.
    pub fn unfinished() -> Self {
        Self::new(
            AdmissionReason::LogIndeterminate,
            "the admission flow did not finish",
        )
    }

    /// Always `admission`.
    pub fn stage(&self) -> Stage {
        Stage::Admission
    }

    /// Always `AUTH_INVALID_SIGNATURE` (§6.4).
    pub fn wire_code(&self) -> WireCode {
        WireCode::AuthInvalidSignature
    }

    /// The protected diagnostic.
    pub fn protected(&self) -> String {
        format!("admission/{}: {}", self.reason.as_str(), self.detail)
    }
}

impl fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            self.wire_code(),
            crate::signed_documents::WIRE_MESSAGE
        )
    }
}

impl std::error::Error for AdmissionError {}
