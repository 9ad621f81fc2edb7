//! The Artifact aggregate and `artifact.publish` (§13.1).
//!
//! An Artifact is immutable and content-addressed: its bytes live outside the Group log and the
//! log carries only its signed manifest (`artifact.schema.json`), a normative signed document
//! the engine verifies with the six-stage verifier, Artifact profile (signer = the manifest's
//! `producer.agentId`), before [`decide`] sees it (`Engine::perform_with_resolver`).
//!
//! Payload: `{manifest, ownershipEpoch, leaseId}` (§11.3: an Artifact publication cites the
//! current Lease ID of the manifest's WorkItem, which the actor owns).
//!
//! Store kind [`ARTIFACT_KIND`], ID = `artifactId`, value = the manifest's canonical bytes.
//! An `artifactId` is published once: publishing it again (same or other manifest) is
//! `INVALID_STATE_TRANSITION` (state `published`), since §13.1 makes Artifacts immutable; an
//! unchanged retry of the same signed Command is answered by the engine's dedup (§15.1).
//!
//! The bytes themselves: [`content`] (sans-IO content addressing and the signed manifest); the
//! filesystem store the bindings wrap is `missionweaveprotocol_host::LocalArtifactStore` (I/O
//! stays at the edges).

pub mod content;
pub mod error;

pub use error::ArtifactError;

use missionweaveprotocol::PrincipalType;
use missionweaveprotocol::json::{Object, Value, canonical_bytes};

use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND};
use crate::store::{AggregateKey, Store};
use crate::work::fencing::{WorkClaim, check_execution_claim};
use crate::work::state::WorkItem;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Store kind of Artifact manifests.
pub const ARTIFACT_KIND: &str = "artifact";

/// Store kind of the rows naming the content published for a WorkItem: ID
/// `"<workItemId> <contentHash>"`, value `{"artifactId": …}` (the first Artifact with those
/// bytes).
pub const PUBLISHED_KIND: &str = "work_item_artifact";

/// The row saying `content_hash` was published for WorkItem `work_item_id`.
pub fn published_key(work_item_id: &str, content_hash: &str) -> AggregateKey {
    AggregateKey::new(PUBLISHED_KIND, format!("{work_item_id} {content_hash}"))
}
/// The Command kind.
pub const PUBLISH: &str = "artifact.publish";
/// The Event kind (`event.schema.json`).
pub const PUBLISHED: &str = "artifact.published";

/// Whether `kind` is an Artifact Command.
pub fn handles(kind: &str) -> bool {
    kind == PUBLISH
}

/// The payload's `manifest` (`{"manifest": <signed Artifact document>}`).
pub fn manifest_of(command: &VerifiedCommand) -> Result<&Value, EngineError> {
    command
        .payload()
        .get("manifest")
        .filter(|m| m.as_object().is_some())
        .ok_or_else(|| {
            EngineError::invalid(
                "missing_manifest",
                "artifact.publish needs payload.manifest, a signed Artifact manifest",
            )
        })
}

/// The lease claim: the actor, its envelope Session Epoch and the payload's `ownershipEpoch`
/// and `leaseId` (the members every lease-bound Worker Command carries, `docs/work.md`).
fn claim(command: &VerifiedCommand) -> Result<WorkClaim, EngineError> {
    let payload = command.payload();
    let missing = |what: &str| {
        EngineError::invalid(
            "missing_lease_claim",
            format!("artifact.publish needs {what} (§11.3)"),
        )
    };
    Ok(WorkClaim {
        agent_id: command.actor().id.clone(),
        session_epoch: command
            .session_epoch()
            .ok_or_else(|| missing("sessionEpoch"))?,
        ownership_epoch: payload
            .get("ownershipEpoch")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
            .ok_or_else(|| missing("payload.ownershipEpoch"))?,
        lease_id: payload
            .get("leaseId")
            .and_then(Value::as_str)
            .ok_or_else(|| missing("payload.leaseId"))?
            .to_owned(),
    })
}

fn text<'a>(manifest: &'a Value, name: &str) -> &'a str {
    // Present and a string: the verifier checked the manifest against artifact.schema.json.
    manifest.get(name).and_then(Value::as_str).unwrap_or("")
}

/// Decides `artifact.publish` for a manifest that passed the six-stage verifier.
pub fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    manifest: &Value,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    // §13.1 "producer Agent": the Agent publishing is the producer that signed the manifest.
    let producer = manifest
        .get("producer")
        .and_then(|p| p.get("agentId"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let actor = command.actor();
    if actor.kind != PrincipalType::Agent || actor.id != producer {
        return Err(EngineError::forbidden(
            "producer_not_actor",
            format!("the manifest's producer {producer} is not the Command's actor"),
        ));
    }
    // §13.1 "Binary content MUST be stored outside the Group Event log": a `data:` URI would
    // put the bytes in the log (the schema already refuses any other member).
    let uri = text(manifest, "uri");
    if uri
        .get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("data:"))
    {
        return Err(EngineError::invalid(
            "inline_content",
            "an Artifact's content is stored outside the log; a data: URI is inline content",
        ));
    }
    let read = crate::mission::read::read(store, command)?;
    let group = read
        .group
        .as_ref()
        .ok_or_else(|| EngineError::GroupNotFound {
            group: read.group_id.clone(),
        })?;
    if text(manifest, "groupId") != read.group_id {
        return Err(EngineError::invalid(
            "artifact_wrong_group",
            "the manifest's groupId is not the Command's Group",
        ));
    }
    let mission = read
        .mission
        .as_ref()
        .filter(|m| m.mission_id() == text(manifest, "missionId"))
        .ok_or_else(|| {
            EngineError::invalid(
                "artifact_wrong_mission",
                "the manifest's missionId is not the Group's Mission",
            )
        })?;
    if mission.state().is_terminal() {
        return Err(EngineError::InvalidStateTransition {
            aggregate: "mission",
            id: mission.mission_id().to_owned(),
            state: mission.state().as_str().to_owned(),
            command: PUBLISH.to_owned(),
        });
    }
    // §13.1 "Mission, Group and WorkItem IDs": the WorkItem is one of this Mission's, and
    // §11.3 "every … Artifact publication … MUST reference the current Lease ID": the actor
    // owns it under the current Ownership Epoch and cites its live Execution Lease.
    let work_id = text(manifest, "workItemId");
    let work_key = AggregateKey::new(crate::work::document::AGGREGATE_KIND, work_id);
    let work = store.aggregate(&work_key)?;
    let item = match &work {
        Some(stored) => Some(WorkItem::from_json(&stored.value)?),
        None => None,
    };
    let item = item
        .filter(|i| i.mission_id == mission.mission_id())
        .ok_or_else(|| {
            EngineError::invalid(
                "artifact_wrong_work_item",
                "the manifest's workItemId is not a WorkItem of the Mission",
            )
        })?;
    if command.work_item_id().is_some_and(|id| id != work_id) {
        return Err(EngineError::invalid(
            "artifact_wrong_work_item",
            "the envelope's workItemId is not the manifest's",
        ));
    }
    check_execution_claim(&item, &claim(command)?, now)?;
    let artifact_id = text(manifest, "artifactId");
    let key = AggregateKey::new(ARTIFACT_KIND, artifact_id);
    let current = store.aggregate(&key)?.map_or(0, |a| a.revision);
    if let Some(expected) = command.expected_revision()
        && expected != current
    {
        return Err(EngineError::RevisionConflict {
            key,
            expected,
            current,
        });
    }
    if current != 0 {
        return Err(EngineError::InvalidStateTransition {
            aggregate: "artifact",
            id: artifact_id.to_owned(),
            state: "published".to_owned(),
            command: PUBLISH.to_owned(),
        });
    }
    let bytes = canonical_bytes(manifest).map_err(|e| EngineError::Corrupt {
        key: key.clone(),
        detail: e.to_string(),
    })?;
    let mut payload = Object::new();
    payload.insert("missionId", Value::string(mission.mission_id()));
    payload.insert("artifact", manifest.clone());
    let mut draft = EventDraft::for_command(command, PUBLISHED, payload);
    // The Event is about the manifest's WorkItem, whether or not the envelope named it.
    draft.work_item_id = Some(work_id.to_owned());
    // §13.1 / §13.2: `work.submit` may cite only content published for its WorkItem; the row
    // says so. Another Artifact with the same bytes for the same WorkItem keeps the first row.
    let content_hash = text(manifest, "contentHash");
    let row_key = published_key(work_id, content_hash);
    let decision = match store.aggregate(&row_key)? {
        Some(row) => Decision::default().check(row_key, row.revision),
        None => {
            let mut row = Object::new();
            row.insert("artifactId", Value::string(artifact_id));
            let row = canonical_bytes(&Value::Object(row)).map_err(|e| EngineError::Corrupt {
                key: row_key.clone(),
                detail: e.to_string(),
            })?;
            Decision::default().put(row_key, 0, row.into())
        }
    };
    Ok(decision
        .event(draft, &read.group_id, 1)
        .put(key, 0, bytes.into())
        .check(
            AggregateKey::new(GROUP_KIND, &read.group_id),
            group.revision,
        )
        .check(
            AggregateKey::new(MISSION_KIND, mission.mission_id()),
            mission.revision(),
        )
        .check(work_key, work.map_or(0, |w| w.revision)))
}
