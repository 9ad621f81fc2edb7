//! First Admission and historical trust (§6.4, after the six stages). Admission is a separate
//! semantic layer — not a seventh cryptographic stage — with protected diagnostic stage
//! `admission`; every failure is `AUTH_INVALID_SIGNATURE` on the wire.

mod error;
mod flow;
mod log;
mod record;

pub use error::{AdmissionError, AdmissionReason};
pub use flow::{
    AdmissionFlow, AdmissionMode, AdmissionStep, AdmittedDocument, admit_first, replay_historical,
    validate_record,
};
pub use log::{
    AdmissionLog, AppendOutcome, AuthenticatedRecord, InMemoryAdmissionLog, LookupOutcome,
};
pub use record::{FirstAdmissionRecord, TrustedAcceptanceContext};
