//! From a WorkItem [`Transition`] to the engine's [`Decision`]: the Events with their Group and
//! `aggregateRevision` (§15.2), and the aggregate write with the revision read (§15.3).

use missionweaveprotocol::json::{Object, Value, sha256_prefixed};

use super::read::{index_key, index_row};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::store::{AggregateKey, Blob};
use crate::work::{
    document::AGGREGATE_KIND,
    state::{LeaseGrant, WorkEvent, WorkItem},
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Appends `events` of `item` (already at its new revision) and the write of `item` over
/// `read_revision` to `decision`. Every Event names the WorkItem (envelope `workItemId`) even
/// when the Command did not (a Mission Command propagating, §10.2 row 18).
pub(crate) fn put_item(
    decision: Decision,
    command: &VerifiedCommand,
    item: &WorkItem,
    read_revision: u64,
    events: Vec<WorkEvent>,
) -> Result<Decision, EngineError> {
    // The index row moves with the item, at the same revisions (created together at 1,
    // written together ever after): the row's read revision is the item's.
    let mut decision = decision
        .put(
            AggregateKey::new(AGGREGATE_KIND, &item.work_item_id),
            read_revision,
            Blob::from(item.to_canonical_bytes()?),
        )
        .put(
            index_key(&item.mission_id, &item.work_item_id),
            read_revision,
            index_row(item),
        );
    for event in events {
        decision = decision.event(
            draft(command, event, Some(&item.work_item_id)),
            &item.group_id,
            item.revision,
        );
    }
    Ok(decision)
}

/// The Event draft of one WorkItem Event, caused by `command`.
pub(crate) fn draft(
    command: &VerifiedCommand,
    event: WorkEvent,
    work_item_id: Option<&str>,
) -> EventDraft {
    let payload = match event.payload {
        Value::Object(o) => o,
        other => {
            let mut o = Object::new();
            o.insert("value", other);
            o
        }
    };
    let mut draft = EventDraft::for_command(command, event.kind, payload);
    if draft.work_item_id.is_none() {
        draft.work_item_id = work_item_id.map(str::to_owned);
    }
    draft
}

/// A new lease, deterministic in the Command: its ID hashes the receipt key (actor type, actor
/// ID, Action ID — unique per applied Command, §15.1) and `purpose`, so two engines fed the same
/// Commands grant the same IDs; it starts at `now` and lasts `seconds`.
pub(crate) fn lease_grant(
    command: &VerifiedCommand,
    purpose: &str,
    now: UnixMillis,
    seconds: u64,
) -> LeaseGrant {
    LeaseGrant {
        lease_id: derived_lease_id(command, purpose, purpose),
        expires_at: after(now, seconds),
    }
}

/// `urn:missionweaveprotocol:lease:<purpose>-<32 hex>`: the hex is a SHA-256 of the receipt key
/// (actor type, actor ID, Action ID: unique per applied Command, §15.1) and `seed_tail`, so two
/// engines fed the same Commands derive the same lease IDs and no two Commands collide.
pub(crate) fn derived_lease_id(
    command: &VerifiedCommand,
    seed_tail: &str,
    purpose: &str,
) -> String {
    let actor = command.actor();
    let seed = format!(
        "{}\n{}\n{}\n{seed_tail}",
        actor.kind.as_str(),
        actor.id,
        command.action_id()
    );
    let hash = sha256_prefixed(seed.as_bytes());
    let hex = hash.strip_prefix("sha256:").unwrap_or(&hash);
    format!(
        "urn:missionweaveprotocol:lease:{purpose}-{}",
        &hex[..32.min(hex.len())]
    )
}

/// `now + seconds`, saturating.
pub(crate) fn after(now: UnixMillis, seconds: u64) -> UnixMillis {
    let millis = i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
    UnixMillis(now.0.saturating_add(millis))
}
