//! Group Events: built from plain inputs and signed by the Group Authority (§15.2, §16, §6.4).
//!
//! An Event is a normative signed document of the `event` profile: its expected signer is the
//! `acceptedBy` Principal, so the authority's Registry key must be bound to exactly that
//! Principal. Signing goes through [`missionweaveprotocol::crypto::Signer`] (the trait
//! `SignedDocumentCodec::sign` takes), so an HSM-backed signer plugs in unchanged. Events are
//! signed once and schema-validated (`sign_once.rs`); debug and test builds, and issuers built
//! `with_self_check(true)`, also verify the signature of every Event, and the tests verify every
//! built Event with the six-stage verifier.
//!
//! No state machine here: the engine decides the kind, payload, sequence and revision; this
//! module only shapes and signs.

mod draft;
mod error;
mod event_id;
mod issuer;
mod random_ids;
mod sign_once;

pub use draft::{Cause, CauseType, EventDraft, GroupPosition};
pub use error::EventBuildError;
pub use event_id::{EventIdSource, SequentialEventIds};
pub use issuer::{EventIssuer, SignedEvent};
pub use random_ids::{RandomEventIds, uuid_v4_urn};
