//! `ext.missionweaveprotocol.identity.session_open` and Session Epoch fencing (§6.3, §4
//! invariant 4, §11.3; digest 2.10).
//!
//! The Agent's Session Epoch is stored under kind [`SESSION_KIND`], ID = Agent ID, value
//! `{"agentId": …, "sessionEpoch": n}`; the store revision equals `n` (one write per opening).

use std::collections::BTreeSet;

use missionweaveprotocol::PrincipalType;
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::schema_formats::is_protocol_id;

use super::lease_index::LeaseIndex;
use super::{SESSION_KIND, SESSION_OPENED, blob};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::text;
use crate::store::{AggregateKey, Store};
use crate::stored::parsed;
use crate::work::plan::{after, derived_lease_id, put_item};
use crate::work::read::read_item;
use crate::work::transitions::session::{ReplaceSessionInput, replace_session};
use crate::work::{document::AGGREGATE_KIND, state::LeaseGrant};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// How long the ownership lease lasts that replaces a revoked Execution Lease (the default
/// lease length of `work.checkpoint`, docs/work.md "Lease IDs and lengths").
pub const REPLACEMENT_LEASE_SECONDS: u64 = 300;

/// The store key of `agent_id`'s Session Epoch.
pub fn session_key(agent_id: &str) -> AggregateKey {
    AggregateKey::new(SESSION_KIND, agent_id)
}

/// `agent_id`'s current Session Epoch with its store revision, if a session was ever opened.
pub(crate) fn read_epoch(
    store: &dyn Store,
    agent_id: &str,
) -> Result<Option<(u64, u64)>, EngineError> {
    let key = session_key(agent_id);
    // Parsed once per stored revision (the store's memo): every Agent Command reads it.
    let Some(stored) = store.aggregate(&key)? else {
        return Ok(None);
    };
    let revision = stored.revision;
    let value = parsed(store, &key, &stored)?;
    let epoch = value
        .0
        .get("sessionEpoch")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .ok_or_else(|| EngineError::Corrupt {
            key,
            detail: "sessionEpoch is missing".into(),
        })?;
    Ok(Some((revision, epoch)))
}

/// The Agent's session a Command was fenced against: its revision is checked at commit, so a
/// `session_open` committed meanwhile makes the Command decide again and fail as stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionFence {
    key: AggregateKey,
    revision: u64,
}

impl SessionFence {
    /// Adds the commit-time check of the Agent's session to `decision`.
    pub fn guard(&self, decision: Decision) -> Decision {
        if decision.writes.iter().any(|w| w.key == self.key) {
            decision
        } else {
            decision.check(self.key.clone(), self.revision)
        }
    }
}

/// Session Epoch fencing (§6.3 "The Group Authority MUST validate the Session Epoch on every
/// state-changing Agent Command"; §4 invariant 4). Every Command the engine performs changes
/// state, so every Agent Command is fenced; human and service Commands carry no Session Epoch
/// (§6.3, schema) and are not.
///
/// * no session ever opened for the Agent → `AUTH_REQUIRED` (§19 "Authentication is absent":
///   no epoch was issued, so none can be "fenced"; the reference answers `stale_session_epoch`
///   against an implicit epoch 0);
/// * `sessionEpoch` ≠ the current epoch (lower: fenced by a newer session; higher: never
///   issued) → `AUTH_STALE_SESSION`.
pub(crate) fn fence(
    store: &dyn Store,
    command: &VerifiedCommand,
) -> Result<Option<SessionFence>, EngineError> {
    if command.actor().kind != PrincipalType::Agent {
        return Ok(None);
    }
    let agent = command.actor().id.as_str();
    let Some((revision, current)) = read_epoch(store, agent)? else {
        return Err(EngineError::SessionRequired {
            agent: agent.to_owned(),
        });
    };
    // `command.schema.json` requires `sessionEpoch` of every Agent Command (digest A.1).
    let presented = command.session_epoch().unwrap_or(0);
    if presented != current {
        return Err(EngineError::StaleSession {
            agent: agent.to_owned(),
            presented,
            current,
        });
    }
    Ok(Some(SessionFence {
        key: session_key(agent),
        revision,
    }))
}

/// `session_open` `{agentId}` → `session_opened` `{agentId, sessionEpoch}` with epoch =
/// previous + 1 (first 1), plus one `…core.work_execution_lease_revoked` per WorkItem on which
/// the Agent held a live lease, in that WorkItem's Group (§11.3; `work::transitions::session`).
pub(crate) fn open(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let agent_id = text(command.payload(), "agentId")?;
    if !is_protocol_id(agent_id) {
        return Err(EngineError::invalid(
            "invalid_member",
            "agentId must be an absolute URI (common.schema.json id)",
        ));
    }
    let key = session_key(agent_id);
    let (revision, previous) = read_epoch(store, agent_id)?.unwrap_or((0, 0));
    // §15.3: `expectedRevision` names the aggregate's revision (0: absent).
    if let Some(expected) = command.expected_revision().filter(|e| *e != revision) {
        return Err(EngineError::RevisionConflict {
            key,
            expected,
            current: revision,
        });
    }
    let epoch = previous.checked_add(1).ok_or_else(|| {
        EngineError::invalid("session_epoch_exhausted", "the Session Epoch cannot grow")
    })?;
    let mut stored = Object::new();
    stored.insert("agentId", Value::string(agent_id));
    stored.insert("sessionEpoch", Value::Number(Number::from_u64(epoch)));
    let stored = blob(&key, &Value::Object(stored))?;
    let mut payload = Object::new();
    payload.insert("agentId", Value::string(agent_id));
    payload.insert("sessionEpoch", Value::Number(Number::from_u64(epoch)));
    let decision = Decision::default()
        .organization_event(EventDraft::for_command(command, SESSION_OPENED, payload))
        .put(key, revision, stored);
    revoke_leases(store, command, decision, agent_id, epoch, now)
}

/// §11.3: "Opening a replacement Agent Session MUST revoke that Agent's active leases and return
/// affected WorkItems to `queued` before the new runtime may start them under new leases."
fn revoke_leases(
    store: &dyn Store,
    command: &VerifiedCommand,
    mut decision: Decision,
    agent_id: &str,
    epoch: u64,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let index = LeaseIndex::read(store, agent_id)?;
    let mut kept = BTreeSet::new();
    for id in &index.items {
        let item_key = AggregateKey::new(AGGREGATE_KIND, id);
        let Some((item_revision, item)) = read_item(store, &item_key)? else {
            continue;
        };
        let input = ReplaceSessionInput {
            agent_id: agent_id.to_owned(),
            session_epoch: epoch,
            replacement: replacement_grant(command, id, now),
        };
        match replace_session(&item, &input, now)? {
            Some(transition) => {
                decision = put_item(
                    decision,
                    command,
                    &transition.state,
                    item_revision,
                    transition.events,
                )?;
                kept.insert(id.clone());
            }
            // No live lease of this Agent: dropped from the index; a concurrent grant on the
            // item must invalidate this decision.
            None => decision = decision.check(item_key, item_revision),
        }
    }
    if index.revision == 0 && kept.is_empty() {
        // Nothing indexed: checking the absence keeps a concurrent first grant ordered.
        return Ok(decision.check(index.key, 0));
    }
    index.write(decision, &kept)
}

/// The replacement lease of `work_item_id`: its ID hashes the receipt key (unique per applied
/// Command, §15.1) and the WorkItem, so two engines fed the same Commands grant the same IDs.
fn replacement_grant(command: &VerifiedCommand, work_item_id: &str, now: UnixMillis) -> LeaseGrant {
    LeaseGrant {
        lease_id: derived_lease_id(
            command,
            &format!("session-replacement\n{work_item_id}"),
            "ownership",
        ),
        expires_at: after(now, REPLACEMENT_LEASE_SECONDS),
    }
}
