//! The archival entry of `Engine::perform_with_resolver` (`crate::archive`): verify the snapshot, perform, then
//! move the archived history out of the online log.

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{KeyResolver, SignedDocumentCodec, SignedDocumentKind};

use crate::engine::core::{Engine, Performed};
use crate::error::EngineError;
use crate::events::EventIdSource;
use crate::ingress::VerifiedCommand;
use crate::store::{SnapshotPointer, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The payload's `snapshot` member, or `INVALID_COMMAND` (`missing_member`).
pub(crate) fn snapshot_of(command: &VerifiedCommand) -> Result<&Value, EngineError> {
    command
        .payload()
        .get("snapshot")
        .ok_or_else(|| EngineError::invalid("missing_member", "group_archive needs a snapshot"))
}

impl<S: Store, G: Signer, I: EventIdSource> Engine<S, G, I> {
    /// `…core.group_archive`: the snapshot passes the six-stage verifier (Group Snapshot
    /// profile, against `resolver`; a rejection answers with the verifier's own code, e.g.
    /// `AUTH_INVALID_SIGNATURE`) and its creator must be the snapshot authority, this engine's
    /// Group Authority (`AUTH_FORBIDDEN` `not_snapshot_authority`, §6.4 "an authorized archival
    /// service"). Then the ordinary flow decides (`archive::decide`). Once the archival is
    /// committed (also when this is a duplicate of it), Events `1..=throughSequence` leave the
    /// online log; if that step fails the error is returned and an unchanged retry, a
    /// duplicate, completes it (the archived Group is already final either way).
    pub(crate) fn perform_archive(
        &self,
        command: &VerifiedCommand,
        now: UnixMillis,
        resolver: &dyn KeyResolver,
    ) -> Result<Performed, EngineError> {
        let snapshot = snapshot_of(command)?.clone();
        let verified = SignedDocumentCodec::new()
            .verify_value(SignedDocumentKind::GroupSnapshot, snapshot, resolver)
            .map_err(EngineError::Manifest)?;
        if verified.principal != *self.issuer().accepted_by() {
            return Err(EngineError::forbidden(
                "not_snapshot_authority",
                format!(
                    "the snapshot is signed by {}, not the snapshot authority {}",
                    verified.principal.id,
                    self.issuer().accepted_by().id
                ),
            ));
        }
        let performed = self.perform_verified(command, now, Some(verified.document()))?;
        let group = command.group_id().unwrap_or_default();
        if let Some(archived) = crate::archive::snapshot::read_snapshot(self.store(), group)? {
            let head = self.store().head(group)?;
            if head.first_online <= archived.through_sequence {
                self.store().archive_before(
                    group,
                    archived.through_sequence + 1,
                    SnapshotPointer {
                        artifact_hash: archived.artifact_hash,
                    },
                )?;
            }
        }
        Ok(performed)
    }
}
