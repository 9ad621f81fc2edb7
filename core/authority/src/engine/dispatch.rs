//! Which aggregates a Command kind reads and which pure decision answers it.
//!
//! Each family adds one arm: read its aggregates through the store, then call its pure
//! `decide`: Mission kinds (`mission`), Membership kinds (`membership`), WorkItem kinds
//! (`engine/work`), Artifact kinds (`artifact`); session kinds join here as they are built. Every kind is first fenced by
//! the sender's Membership Epoch (`membership::fence`).

use super::decision::Decision;
use super::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::store::Store;
use crate::unix_millis::UnixMillis;
use crate::{artifact, membership, mission};
use missionweaveprotocol::json::Value;

/// Reads what `command` needs from `store` and decides.
/// `manifest`: the payload's signed Artifact manifest, verified by
/// `Engine::perform_with_resolver` (§13.1); `None` on the plain `perform` path.
pub(crate) fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    manifest: Option<&Value>,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    // §8, §15.1: a stale or revoked Membership Epoch is refused before anything else is read.
    let fence = membership::fence(store, command)?;
    let decision = decide_kind(store, command, manifest, now)?;
    Ok(match fence {
        Some(fence) => fence.guard(decision),
        None => decision,
    })
}

fn decide_kind(
    store: &dyn Store,
    command: &VerifiedCommand,
    manifest: Option<&Value>,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let kind = command.kind();
    if mission::handles(kind) {
        let read = mission::read(store, command)?;
        return mission::decide(&read, command, now);
    }
    if membership::handles(kind) {
        let read = membership::read(store, command)?;
        return membership::decide(&read, command, now);
    }
    if artifact::handles(kind) {
        // §13.1: the manifest was verified by `Engine::perform_with_resolver` and passed down.
        let manifest = manifest.ok_or_else(|| {
            EngineError::invalid(
                "resolver_required",
                "artifact.publish carries a signed manifest: use Engine::perform_with_resolver",
            )
        })?;
        return artifact::decide(store, command, manifest, now);
    }
    if super::work::handles(kind) {
        return super::work::decide(store, command, now);
    }
    Err(EngineError::invalid(
        "unsupported_kind",
        format!("the engine does not implement {kind} yet"),
    ))
}
