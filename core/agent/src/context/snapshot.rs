//! Group Snapshots as the archival service writes them (reference `SnapshotArchive`, §7.4):
//! the snapshot covers its Group's Events `1..n` in order, `stateHash` is the RFC 8785 hash of
//! the archived state, and the document is signed by the snapshot authority (the engine accepts
//! only the Group Authority's; [`missionweaveprotocol_engine::archive`]).

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{Value, canonical_bytes, sha256_prefixed};
use missionweaveprotocol::registry::KeyResolver;
use missionweaveprotocol::signed_documents::SignedDocument;
use missionweaveprotocol::{Principal, SignedDocumentCodec, SignedDocumentKind};

use super::error::ContextError;
use crate::context::package::SourceEvent;
use missionweaveprotocol_engine::archive::SnapshotDraft;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// What the archival service snapshots (reference `SnapshotArchive.archive` arguments).
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotRequest {
    /// `snapshotId`.
    pub snapshot_id: String,
    /// The Group.
    pub group_id: String,
    /// Its Events, sequences `1..n` in order.
    pub events: Vec<SourceEvent>,
    /// The archived final state; `stateHash` is its RFC 8785 `sha256:`.
    pub state: Value,
    /// The Policy Log entries (≥ 1, `group-snapshot.schema.json`).
    pub policy_log: Vec<Value>,
    /// `createdAt`.
    pub created_at: UnixMillis,
}

/// Signs the snapshot of `request` as `authority` with `key`.
pub fn archive(
    request: &SnapshotRequest,
    authority: &Principal,
    key: &dyn Signer,
) -> Result<SignedDocument, ContextError> {
    for (index, event) in request.events.iter().enumerate() {
        let expected = index as u64 + 1;
        if event.group_id != request.group_id {
            return Err(ContextError::EventOutsideGroup {
                event_id: event.event_id.clone(),
                group_id: event.group_id.clone(),
            });
        }
        if event.sequence != expected {
            return Err(ContextError::SnapshotCoverage {
                detail: format!(
                    "the Events must be sequences 1..n in order: {expected} expected, {} found",
                    event.sequence
                ),
            });
        }
    }
    if request.events.is_empty() {
        return Err(ContextError::SnapshotCoverage {
            detail: "a snapshot covers at least the Group's first Event".into(),
        });
    }
    let state = canonical_bytes(&request.state)
        .map_err(|e| ContextError::InvalidArgument(format!("state: {e}")))?;
    let draft = SnapshotDraft {
        snapshot_id: request.snapshot_id.clone(),
        group_id: request.group_id.clone(),
        event_ids: request.events.iter().map(|e| e.event_id.clone()).collect(),
        state_hash: sha256_prefixed(&state),
        policy_log: request.policy_log.clone(),
        created_at: request.created_at,
    };
    // The shortest time form, so the host's model re-renders the signed document exactly.
    let created_at = request
        .created_at
        .to_rfc3339_shortest()
        .ok_or_else(|| ContextError::InvalidArgument("created_at is out of range".into()))?;
    let mut document = draft.document(authority);
    if let Value::Object(o) = &mut document {
        o.insert("createdAt", Value::string(created_at));
    }
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::GroupSnapshot, &document, key)
        .map_err(ContextError::Signing)
}

/// A verified snapshot: the document and the `sha256:` of its canonical bytes (what
/// `group.snapshot.created` records as `snapshotArtifactHash`).
#[derive(Clone, Debug, PartialEq)]
pub struct VerifiedSnapshot {
    /// The document (signature included).
    pub document: Value,
    /// Its canonical bytes' hash.
    pub artifact_hash: String,
}

/// Verifies a snapshot's bytes (§6.4's six stages against `resolver`), that
/// `throughSequence` counts its `eventIds`, and, when given, that `authority` created it.
pub fn verify(
    bytes: &[u8],
    resolver: &dyn KeyResolver,
    authority: Option<&Principal>,
) -> Result<VerifiedSnapshot, ContextError> {
    let verified = SignedDocumentCodec::new()
        .verify(SignedDocumentKind::GroupSnapshot, bytes, resolver)
        .map_err(|e| ContextError::Verification(Box::new(e)))?;
    let document = verified.into_document();
    let through = document
        .get("throughSequence")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64());
    let count = document
        .get("eventIds")
        .and_then(Value::as_array)
        .map(|ids| ids.len() as u64);
    if through.is_none() || through != count {
        return Err(ContextError::SnapshotCoverage {
            detail: "throughSequence is not the number of eventIds".into(),
        });
    }
    if let Some(authority) = authority {
        let creator = document.pointer("/createdBy/id").and_then(Value::as_str);
        let kind = document.pointer("/createdBy/type").and_then(Value::as_str);
        if creator != Some(authority.id.as_str()) || kind != Some(authority.kind.as_str()) {
            return Err(ContextError::GeneratorMismatch {
                expected: authority.id.clone(),
                found: creator.unwrap_or_default().to_owned(),
            });
        }
    }
    let canonical =
        canonical_bytes(&document).map_err(|e| ContextError::InvalidArgument(e.to_string()))?;
    Ok(VerifiedSnapshot {
        artifact_hash: sha256_prefixed(&canonical),
        document,
    })
}
