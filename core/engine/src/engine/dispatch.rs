//! Which aggregates a Command kind reads and which pure decision answers it.
//!
//! Each family adds one arm: read its aggregates through the store, then call its pure
//! `decide`: Mission kinds (`mission`), Membership kinds (`membership`), WorkItem kinds
//! (`work`), Artifact kinds (`artifact`), the Organization-scoped bootstrap service kinds
//! (`organization`). Every kind is first fenced by the sender's Session Epoch (Agents,
//! `organization::session::fence`) and Membership Epoch (`membership::fence`).

use crate::artifact;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::membership;
use crate::message;
use crate::mission;
use crate::organization;
use crate::store::Store;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Reads what `command` needs from `store` and decides.
/// `manifest`: the payload's signed document (the Artifact manifest of `artifact.publish`,
/// §13.1, or the Agent Card of `…agent_card_register`), verified by
/// `Engine::perform_with_resolver`; `None` on the plain `perform` path.
pub(crate) fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    manifest: Option<&Value>,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    // §6.3, §4 invariant 4: every state-changing Agent Command carries the Agent's current
    // Session Epoch; §8, §15.1: a stale or revoked Membership Epoch is refused. Both before
    // anything else is read, and both re-checked at commit.
    let session = organization::session::fence(store, command)?;
    let fence = membership::fence(store, command)?;
    // §7.4: an archived Group accepts nothing more.
    crate::archive::fence::fence(store, command)?;
    // §4 invariant 2: no Command of any kind takes a Message as its authority.
    message::refuse_message_authority(store, command)?;
    let mut decision = decide_kind(store, command, manifest, now)?;
    if let Some(session) = session {
        decision = session.guard(decision);
    }
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
    if message::handles(kind) {
        return message::decide(store, command, now);
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
    if kind == organization::SESSION_OPEN {
        return organization::session::open(store, command, now);
    }
    if kind == organization::AGENT_CARD_REGISTER {
        // §6.4: the Agent Card was verified by `Engine::perform_with_resolver`.
        let card = manifest.ok_or_else(|| {
            EngineError::invalid(
                "resolver_required",
                "agent_card_register carries a signed Agent Card: use Engine::perform_with_resolver",
            )
        })?;
        return organization::agent_card::register(store, command, card);
    }
    if crate::archive::handles(kind) {
        // §7.4: the snapshot was verified by `Engine::perform_with_resolver`.
        let snapshot = manifest.ok_or_else(|| {
            EngineError::invalid(
                "resolver_required",
                "group_archive carries a signed Group Snapshot: use Engine::perform_with_resolver",
            )
        })?;
        return crate::archive::decide::decide(store, command, snapshot, now);
    }
    if crate::approval::handles(kind) {
        return crate::approval::grant::grant(store, command, now);
    }
    if crate::work::commands::handles(kind) {
        return crate::work::commands::decide(store, command, now);
    }
    if crate::delegation::handles(kind) {
        return crate::delegation::decide(store, command, now);
    }
    if crate::cooperation_override::handles(kind) {
        return crate::cooperation_override::decide(store, command, now);
    }
    Err(EngineError::invalid(
        "unsupported_kind",
        format!("the engine does not implement {kind} yet"),
    ))
}
