//! Which aggregates a Command kind reads and which pure decision answers it.
//!
//! Each family adds one arm: read its aggregates through the store, then call its pure
//! `decide`: Mission kinds (`mission`), WorkItem kinds (`engine/work`). Membership and session
//! kinds join here as they are built.

use super::decision::Decision;
use super::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::mission;
use crate::store::Store;
use crate::unix_millis::UnixMillis;

/// Reads what `command` needs from `store` and decides.
pub(crate) fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let kind = command.kind();
    if mission::handles(kind) {
        let read = mission::read(store, command)?;
        return mission::decide(&read, command, now);
    }
    if super::work::handles(kind) {
        return super::work::decide(store, command, now);
    }
    Err(EngineError::invalid(
        "unsupported_kind",
        format!("the engine does not implement {kind} yet"),
    ))
}
