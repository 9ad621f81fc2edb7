//! Writes after archival are refused (§7.4, digest 2.8: `archived` is the Group's last state).
//!
//! Checked in `engine/dispatch.rs` for every Group-scoped Command after dedup (a duplicate of
//! a Command applied before the archival still answers with its original Event, §15.1). No
//! commit-time guard is needed: every Group-scoped Command appends to its Group, so an archival
//! committed between its decision and its commit moves the head and the store's sequence check
//! makes it decide again, and be refused here. The Group read is one of the reads the engine
//! prefetches for every Group-scoped Command (`engine/prefetch.rs`), so a batching backend
//! pays no extra round trip.

use missionweaveprotocol::json::Value;

use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::mission::aggregate::GROUP_KIND;
use crate::store::{AggregateKey, Store};
use crate::stored::parsed;

/// `INVALID_STATE_TRANSITION` when `command`'s Group is archived.
pub fn fence(store: &dyn Store, command: &VerifiedCommand) -> Result<(), EngineError> {
    let Some(group) = command.group_id() else {
        return Ok(());
    };
    // The creation kinds name a Group that must not exist yet; their decision refuses any
    // existing one (archived included), so they skip this read.
    if matches!(
        command.kind(),
        "mission.create" | "mission.create_follow_up"
    ) {
        return Ok(());
    }
    let key = AggregateKey::new(GROUP_KIND, group);
    let Some(stored) = store.aggregate(&key)? else {
        return Ok(());
    };
    let document = parsed(store, &key, &stored)?;
    if document.0.get("state").and_then(Value::as_str) == Some("archived") {
        return Err(EngineError::InvalidStateTransition {
            aggregate: GROUP_KIND,
            id: group.to_owned(),
            state: "archived".into(),
            command: command.kind().to_owned(),
        });
    }
    Ok(())
}
