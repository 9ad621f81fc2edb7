//! The decision of `ext.missionweaveprotocol.core.group_archive` (§7.4, §15.2, digest 2.8).
//!
//! Pure apart from its reads (the Group, its Mission, the Group's head and Event IDs); the
//! snapshot was verified by [`super::perform`] before.

use missionweaveprotocol::PrincipalType;
use missionweaveprotocol::json::{self, Number, Object, Value};
use missionweaveprotocol::schema::SchemaCatalog;

use super::{GROUP_ARCHIVED, SNAPSHOT_CREATED, SNAPSHOT_KIND};
use crate::archive::snapshot::group_event_ids;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND, Mission};
use crate::store::{AggregateKey, Store};
use crate::stored::parsed;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The pseudo-aggregate a stale snapshot conflicts with: the Group's log, whose revision is
/// its head sequence.
const GROUP_LOG: &str = "group_log";

fn text<'a>(snapshot: &'a Value, name: &str) -> Result<&'a str, EngineError> {
    // The verifier checked the schema: these members exist with these types.
    snapshot.get(name).and_then(Value::as_str).ok_or_else(|| {
        EngineError::invalid("invalid_member", format!("snapshot.{name} is not a string"))
    })
}

/// Decides the archival of `command`'s Group with the verified `snapshot` at `now`.
pub fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    snapshot: &Value,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    // §15.2: an Organization-owned Command (the reference: SYSTEM actor only).
    if command.actor().kind != PrincipalType::Service {
        return Err(EngineError::forbidden(
            "archive_needs_service",
            "only an Organization service archives a Group (§15.2)",
        ));
    }
    let group_id = command
        .group_id()
        .ok_or_else(|| EngineError::invalid("missing_group", "group_archive needs groupId"))?;
    let not_found = || EngineError::GroupNotFound {
        group: group_id.to_owned(),
    };
    let group_key = AggregateKey::new(GROUP_KIND, group_id);
    let stored_group = store.aggregate(&group_key)?.ok_or_else(not_found)?;
    let group = parsed(store, &group_key, &stored_group)?.0.clone();
    let state = group.get("state").and_then(Value::as_str).unwrap_or("");
    if state != "active" {
        return Err(EngineError::InvalidStateTransition {
            aggregate: GROUP_KIND,
            id: group_id.to_owned(),
            state: state.to_owned(),
            command: command.kind().to_owned(),
        });
    }
    let mission_id = group
        .get("missionId")
        .and_then(Value::as_str)
        .ok_or_else(not_found)?
        .to_owned();
    let mission_id = mission_id.as_str();
    let mission_key = AggregateKey::new(MISSION_KIND, mission_id);
    let stored_mission = store.aggregate(&mission_key)?.ok_or_else(not_found)?;
    let mission = Mission::from_stored(&mission_key, &stored_mission)?;
    // §7.4, digest 2.8: only a final history is archived; approved, cancelled and failed are
    // the terminal Mission states (§7.1).
    if !mission.state().is_terminal() {
        return Err(EngineError::InvalidStateTransition {
            aggregate: MISSION_KIND,
            id: mission_id.to_owned(),
            state: mission.state().as_str().to_owned(),
            command: command.kind().to_owned(),
        });
    }
    // §15.3: `expectedRevision` names the Group's revision.
    if let Some(expected) = command.expected_revision()
        && expected != stored_group.revision
    {
        return Err(EngineError::RevisionConflict {
            key: group_key,
            expected,
            current: stored_group.revision,
        });
    }
    // The snapshot is of this Group …
    let snapshot_group = text(snapshot, "groupId")?;
    if snapshot_group != group_id {
        return Err(EngineError::invalid(
            "snapshot_wrong_group",
            format!("the snapshot is of Group {snapshot_group}, not {group_id}"),
        ));
    }
    // … through its head (a snapshot of an older head is stale: rebuild it) …
    let head = store.head(group_id)?.last_sequence();
    let through = snapshot
        .get("throughSequence")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .ok_or_else(|| EngineError::invalid("invalid_member", "snapshot.throughSequence"))?;
    if through != head {
        return Err(EngineError::RevisionConflict {
            key: AggregateKey::new(GROUP_LOG, group_id),
            expected: through,
            current: head,
        });
    }
    // … and names exactly the Events 1..head, in order.
    let named: Vec<&str> = snapshot
        .get("eventIds")
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let logged = group_event_ids(store, group_id)?;
    if named.len() != logged.len() || named.iter().zip(&logged).any(|(a, b)| *a != b.as_str()) {
        return Err(EngineError::invalid(
            "snapshot_history_mismatch",
            format!(
                "the snapshot's {} eventIds are not the Group's Events 1..{head}",
                named.len()
            ),
        ));
    }
    let snapshot_id = text(snapshot, "snapshotId")?;
    let bytes = json::canonical_bytes(snapshot)
        .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))?;
    let artifact_hash = json::sha256_prefixed(&bytes);
    let archived_at = now.to_rfc3339().unwrap_or_else(|| now.0.to_string());

    let mut archived = match group {
        Value::Object(o) => o,
        _ => Object::new(),
    };
    archived.insert("state", Value::string("archived"));
    archived.insert("archivedAt", Value::string(&archived_at));
    archived.insert("archiveSnapshotId", Value::string(snapshot_id));
    let archived = Value::Object(archived);
    // Digest 2.8, vector `group-archived-without-snapshot`: the document must conform.
    SchemaCatalog::embedded()
        .validate("group", &archived)
        .map_err(|issue| EngineError::SchemaInvalid {
            schema: "group",
            detail: issue.to_string(),
        })?;
    let group_bytes = json::canonical_bytes(&archived)
        .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))?;
    let group_revision = stored_group.revision + 1;

    let mut created = Object::new();
    created.insert("groupId", Value::string(group_id));
    created.insert("missionId", Value::string(mission_id));
    created.insert("snapshotId", Value::string(snapshot_id));
    created.insert("throughSequence", Value::Number(Number::from_u64(through)));
    created.insert("snapshotArtifactHash", Value::string(&artifact_hash));
    created.insert("snapshot", snapshot.clone());
    let mut done = Object::new();
    done.insert("groupId", Value::string(group_id));
    done.insert("missionId", Value::string(mission_id));
    done.insert("state", Value::string("archived"));
    done.insert("archivedAt", Value::string(&archived_at));
    done.insert("archiveSnapshotId", Value::string(snapshot_id));
    done.insert("snapshotArtifactHash", Value::string(&artifact_hash));
    done.insert("throughSequence", Value::Number(Number::from_u64(through)));
    done.insert("group", archived);

    // §15.2: both Events atomically, with the snapshot and the archived Group.
    Ok(Decision::default()
        .put(AggregateKey::new(SNAPSHOT_KIND, group_id), 0, bytes.into())
        .put(group_key, stored_group.revision, group_bytes.into())
        .check(mission_key, stored_mission.revision)
        .event(
            EventDraft::for_command(command, SNAPSHOT_CREATED, created),
            group_id,
            1,
        )
        .event(
            EventDraft::for_command(command, GROUP_ARCHIVED, done),
            group_id,
            group_revision,
        ))
}
