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
use crate::error::EngineError;
use crate::organization;
use missionweaveprotocol::crypto::Signer;

use crate::artifact;
use crate::events::EventIdSource;
use crate::ingress::VerifiedCommand;
use crate::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

impl<S: Store, G: Signer, I: EventIdSource> Engine<S, G, I> {
    /// [`perform`](Self::perform), first verifying the signed documents the Command's payload
    /// carries against `resolver`: the `artifact.publish` manifest (six-stage verifier, Artifact
    /// profile, signer = `producer.agentId`) or the `…registry.agent_card_register` Agent Card
    /// (Agent Card profile, signer = a `service` principal). A rejected manifest answers with the verifier's
    /// own wire code (`AUTH_INVALID_SIGNATURE`, `SCHEMA_VALIDATION_FAILED`, …; §6.4).
    pub fn perform_with_resolver(
        &self,
        command: &VerifiedCommand,
        now: UnixMillis,
        resolver: &dyn KeyResolver,
    ) -> Result<Performed, EngineError> {
        // §21: undefined payload members are refused before the carried document is verified.
        crate::input::members::check(command.kind(), command.payload())?;
        if command.kind() == organization::AGENT_CARD_REGISTER {
            // The Agent Card profile: signer = a `service` principal of the Registry (§6.4).
            let card = organization::agent_card::card_of(command)?.clone();
            let verified = SignedDocumentCodec::new()
                .verify_value(SignedDocumentKind::AgentCard, card, resolver)
                .map_err(EngineError::AgentCard)?;
            return self.perform_verified(command, now, Some(verified.document()));
        }
        if crate::archive::handles(command.kind()) {
            // §7.4: the Group Snapshot profile, creator = the snapshot authority.
            return self.perform_archive(command, now, resolver);
        }
        if !artifact::handles(command.kind()) {
            return self.perform(command, now);
        }
        let manifest = artifact::manifest_of(command)?.clone();
        let verified = SignedDocumentCodec::new()
            .verify_value(SignedDocumentKind::Artifact, manifest, resolver)
            .map_err(EngineError::Manifest)?;
        self.perform_verified(command, now, Some(verified.document()))
    }
}
