//! `Engine::perform_with_resolver`: Commands whose payload carries a signed document the
//! engine must verify against Registry evidence (`artifact.publish`, §13.1).
//!
//! Design (least invasive): `perform` keeps its signature and stays resolver-free. This entry
//! verifies the manifest with the six-stage verifier (Artifact profile) against the caller's
//! `KeyResolver` — the same Registry evidence ingress used for the Command — then runs the
//! ordinary flow with the verified manifest passed down to the decision. `perform` on an
//! `artifact.publish` is refused `INVALID_COMMAND` (`resolver_required`): an unverified manifest
//! never reaches a decision.

use missionweaveprotocol::{KeyResolver, SignedDocumentCodec, SignedDocumentKind};

use super::core::{Engine, Performed};
use super::error::EngineError;
use missionweaveprotocol::crypto::Signer;

use crate::artifact;
use crate::events::EventIdSource;
use crate::ingress::VerifiedCommand;
use crate::store::Store;
use crate::unix_millis::UnixMillis;

impl<S: Store, G: Signer, I: EventIdSource> Engine<S, G, I> {
    /// [`perform`](Self::perform), first verifying the signed documents the Command's payload
    /// carries (the `artifact.publish` manifest: six-stage verifier, Artifact profile, signer =
    /// `producer.agentId`) against `resolver`. A rejected manifest answers with the verifier's
    /// own wire code (`AUTH_INVALID_SIGNATURE`, `SCHEMA_VALIDATION_FAILED`, …; §6.4).
    pub fn perform_with_resolver(
        &self,
        command: &VerifiedCommand,
        now: UnixMillis,
        resolver: &dyn KeyResolver,
    ) -> Result<Performed, EngineError> {
        if !artifact::handles(command.kind()) {
            return self.perform(command, now);
        }
        let manifest = artifact::manifest_of(command)?.clone();
        let verified = SignedDocumentCodec::new()
            .verify_value(SignedDocumentKind::Artifact, manifest, resolver)
            .map_err(EngineError::Manifest)?;
        self.perform_verified(command, now, Some(&verified.document))
    }
}
