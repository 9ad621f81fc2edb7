//! [`CoreReplaySource`]: an Agent's [`ReplaySource`] over an in-process [`Core`],
//! continuing across an archived Group's `CURSOR_TOO_OLD` (§16, digest 2.11).

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::{DescribeError, SignedDocumentCodec, SignedDocumentKind, WireCode};

use crate::replay::{
    traits::{ReplaySource, SourceError},
    types::{EventProjection, ReplayEvent, ReplaySnapshot, SourcePage},
};
use missionweaveprotocol_engine::archive::ArchivedSnapshot;
use missionweaveprotocol_engine::service::{Core, MAX_REPLAY_LIMIT, ReplayRead};
use missionweaveprotocol_engine::store::Store;

/// Reads pages of a Group from an [`Core`] ([`Core::replay_read`]). A
/// `CURSOR_TOO_OLD` answer carries the Group's signed snapshot; the source verifies it as §16
/// asks ("the Agent restores the snapshot, verifies its hash and signature") — the six-stage
/// verifier (Group Snapshot profile) against the core's Registry, its creator the Group
/// Authority, its Group the one asked for, its canonical bytes hashing to the pointer — and
/// hands it on as [`SourcePage::CursorTooOld`]. An archived Group's Mission is terminal, so the
/// snapshot holds no live WorkOffer for a Worker: its projection is empty.
#[derive(Debug)]
pub struct CoreReplaySource<'a, S, G> {
    core: &'a Core<S, G>,
    limit: i64,
}

impl<'a, S: Store, G: Signer> CoreReplaySource<'a, S, G> {
    /// A source over `core`, reading pages of the largest size (10,000 Events).
    pub fn new(core: &'a Core<S, G>) -> Self {
        Self {
            core,
            limit: MAX_REPLAY_LIMIT,
        }
    }

    /// The same source reading pages of `limit` Events (1 to 10,000).
    pub fn with_page_limit(mut self, limit: i64) -> Self {
        self.limit = limit;
        self
    }

    fn restore(
        &self,
        group_id: &str,
        snapshot: ArchivedSnapshot,
    ) -> Result<SourcePage, SourceError> {
        let refused = |detail: String| SourceError {
            code: WireCode::AuthInvalidSignature,
            detail,
        };
        let verified = SignedDocumentCodec::new()
            .verify(
                SignedDocumentKind::GroupSnapshot,
                &snapshot.bytes,
                self.core.registry(),
            )
            .map_err(|e| SourceError {
                code: e.wire_code(),
                detail: format!("the Group snapshot does not verify: {e}"),
            })?;
        if verified.signed_document_hash() != snapshot.artifact_hash {
            return Err(refused("the Group snapshot does not match its hash".into()));
        }
        if verified.principal != *self.core.engine().issuer().accepted_by() {
            return Err(refused(format!(
                "the Group snapshot is signed by {}, not the Group Authority",
                verified.principal.id
            )));
        }
        let of_group = verified.view().get("groupId").and_then(|v| v.as_str());
        if of_group != Some(group_id) {
            return Err(SourceError {
                code: WireCode::ProtocolViolation,
                detail: format!("the snapshot served for {group_id} is of another Group"),
            });
        }
        Ok(SourcePage::CursorTooOld(ReplaySnapshot {
            artifact_hash: snapshot.artifact_hash,
            through_sequence: snapshot.through_sequence,
            projection: EventProjection::default(),
        }))
    }
}

impl<S: Store, G: Signer> ReplaySource for CoreReplaySource<'_, S, G> {
    fn replay(&mut self, group_id: &str, after: u64) -> Result<SourcePage, SourceError> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let read = self
            .core
            .replay_read(group_id, after, self.limit)
            .map_err(|e| SourceError {
                code: e.wire_code(),
                detail: e.to_string(),
            })?;
        match read {
            ReplayRead::Page(page) => Ok(SourcePage::Events(
                page.events
                    .into_iter()
                    .map(|e| ReplayEvent::new(&e.event_id, group_id, e.sequence, e.body))
                    .collect(),
            )),
            ReplayRead::CursorTooOld(snapshot) => self.restore(group_id, snapshot),
        }
    }
}
