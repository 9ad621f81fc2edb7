//! Group Events: built from plain inputs and signed by the Group Authority (§15.2, §16, §6.4).
//!
//! An Event is a normative signed document of the `event` profile: its expected signer is the
//! `acceptedBy` Principal, so the authority's Registry key must be bound to exactly that
//! Principal. Signing goes through [`missionweaveprotocol::crypto::Signer`] (the trait
//! `SignedDocumentCodec::sign` takes), so an HSM-backed signer plugs in unchanged. Signing refuses
//! any document that would fail the schema or the envelope rules, and the tests verify every
//! built Event with the six-stage verifier.
//!
//! No state machine here: the engine decides the kind, payload, sequence and revision; this
//! module only shapes and signs.

mod draft;
mod error;
mod event_id;
mod issuer;

pub use draft::{Cause, CauseType, EventDraft, GroupPosition};
pub use error::EventBuildError;
pub use event_id::{EventIdSource, SequentialEventIds};
pub use issuer::{EventIssuer, SignedEvent};
