//! The signed Group Snapshot (`group-snapshot.schema.json`, §7.4): building and signing one as
//! the snapshot authority, reading the Group's Event IDs it must cover, and reading the
//! snapshot an archived Group keeps.

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{self, Number, Object, Value};
use missionweaveprotocol::signed_documents::{SignedDocument, SigningError};
use missionweaveprotocol::{Principal, SignedDocumentCodec, SignedDocumentKind};

use super::SNAPSHOT_KIND;
use crate::error::EngineError;
use crate::store::{AggregateKey, Blob, Store, StoreError};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Replay page size used to read a Group's Event IDs.
const PAGE: usize = 4_096;

/// The Event IDs of `group`'s log, sequences `1..=head`, in order (what a snapshot's
/// `eventIds` must be). History already moved offline is `CURSOR_TOO_OLD`.
pub fn group_event_ids(store: &dyn Store, group: &str) -> Result<Vec<String>, StoreError> {
    let mut ids = Vec::new();
    let mut after = 0;
    loop {
        let page = store.replay(group, after, PAGE)?;
        ids.extend(page.events.iter().map(|e| e.event_id.to_string()));
        match page.continuation {
            Some(next) => after = next,
            None => return Ok(ids),
        }
    }
}

/// An unsigned Group Snapshot: what the snapshot authority signs.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotDraft {
    /// `snapshotId`.
    pub snapshot_id: String,
    /// `groupId`.
    pub group_id: String,
    /// `eventIds`: the Group's Event IDs `1..=throughSequence` (`throughSequence` is their
    /// count).
    pub event_ids: Vec<String>,
    /// `stateHash`: the archival service's `sha256:` of the final state it archived (§7.4
    /// "decisions, WorkItems, approvals and Artifact references").
    pub state_hash: String,
    /// `policyLog` (≥ 1 entries `{entryId, decision, actor, occurredAt, details}`).
    pub policy_log: Vec<Value>,
    /// `createdAt`, the protected time.
    pub created_at: UnixMillis,
}

impl SnapshotDraft {
    /// The unsigned document with `createdBy` = `authority`.
    pub fn document(&self, authority: &Principal) -> Value {
        let mut created_by = Object::new();
        created_by.insert("type", Value::string(authority.kind.as_str()));
        created_by.insert("id", Value::string(&authority.id));
        let mut o = Object::new();
        o.insert("snapshotId", Value::string(&self.snapshot_id));
        o.insert("groupId", Value::string(&self.group_id));
        o.insert(
            "throughSequence",
            Value::Number(Number::from_u64(self.event_ids.len() as u64)),
        );
        o.insert(
            "eventIds",
            Value::Array(self.event_ids.iter().map(Value::string).collect()),
        );
        o.insert("stateHash", Value::string(&self.state_hash));
        o.insert("policyLog", Value::Array(self.policy_log.clone()));
        o.insert("createdBy", Value::Object(created_by));
        o.insert(
            "createdAt",
            Value::string(
                self.created_at
                    .to_rfc3339()
                    .unwrap_or_else(|| self.created_at.0.to_string()),
            ),
        );
        Value::Object(o)
    }

    /// Signs the snapshot as `authority` with `signer` (Group Snapshot profile; the strict
    /// signer refuses anything that would not verify, e.g. an empty policy log).
    pub fn sign(
        &self,
        authority: &Principal,
        signer: &dyn Signer,
    ) -> Result<SignedDocument, SigningError> {
        SignedDocumentCodec::new().sign(
            SignedDocumentKind::GroupSnapshot,
            &self.document(authority),
            signer,
        )
    }
}

/// The snapshot an archived Group keeps (§16: what `CURSOR_TOO_OLD` points to).
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivedSnapshot {
    /// `snapshotArtifactHash`: `sha256:` of the signed snapshot's canonical bytes.
    pub artifact_hash: String,
    /// The last Group sequence it covers.
    pub through_sequence: u64,
    /// The signed snapshot document.
    pub document: Value,
    /// Its canonical bytes (signature included).
    pub bytes: Blob,
}

/// The snapshot `group` was archived with, or `None` if it was not archived.
pub fn read_snapshot(
    store: &dyn Store,
    group: &str,
) -> Result<Option<ArchivedSnapshot>, EngineError> {
    let key = AggregateKey::new(SNAPSHOT_KIND, group);
    let Some(stored) = store.aggregate(&key)? else {
        return Ok(None);
    };
    let corrupt = |detail: String| EngineError::Corrupt {
        key: key.clone(),
        detail,
    };
    let document = json::parse_state(&stored.value).map_err(|e| corrupt(e.to_string()))?;
    let through_sequence = document
        .get("throughSequence")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .ok_or_else(|| corrupt("no throughSequence".into()))?;
    Ok(Some(ArchivedSnapshot {
        artifact_hash: json::sha256_prefixed(&stored.value),
        through_sequence,
        document,
        bytes: stored.value,
    }))
}
