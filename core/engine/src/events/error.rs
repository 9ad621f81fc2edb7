//! Why an Event could not be built. The engine must then append nothing: §19
//! `INTERNAL_ERROR`, "the authority failed without accepting the transition".

use core::fmt;

use missionweaveprotocol::signed_documents::SigningError;
use missionweaveprotocol::{DescribeError, ErrorClass, Fields, Stage, WireCode};

use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// An Event the authority cannot sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventBuildError {
    /// `now` lies outside years 0001–9999 (§2 timestamp profile).
    UnrenderableTime(UnixMillis),
    /// The document would not verify (schema, envelope, key) or the signer failed.
    Signing(SigningError),
}

impl fmt::Display for EventBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnrenderableTime(now) => {
                write!(f, "occurredAt {now} lies outside years 0001-9999")
            }
            Self::Signing(e) => write!(f, "the Event cannot be signed: {}", e.detail),
        }
    }
}

impl std::error::Error for EventBuildError {}

impl DescribeError for EventBuildError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::UnrenderableTime(_) => ErrorClass::Timestamp,
            Self::Signing(_) => ErrorClass::Signing,
        }
    }
    fn wire_code(&self) -> WireCode {
        match self {
            // The Command asks for an Event no receiver could read (§6.4 stage-1 limits): the
            // sender's to fix, not the authority's failure.
            Self::Signing(e) if e.limit.is_some() => e.wire_code(),
            _ => WireCode::InternalError,
        }
    }
    fn reason(&self) -> &str {
        match self {
            Self::UnrenderableTime(_) => "unrenderable_timestamp",
            Self::Signing(e) if e.limit.is_some() => e.reason(),
            Self::Signing(_) => "event_unsignable",
        }
    }
    fn stage(&self) -> Option<Stage> {
        match self {
            Self::UnrenderableTime(_) => None,
            Self::Signing(e) => Some(e.stage),
        }
    }
    fn fields(&self) -> Fields {
        match self {
            Self::Signing(e) if e.limit.is_some() => e.fields(),
            _ => Fields::new(),
        }
    }
}
