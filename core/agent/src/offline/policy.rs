//! [`OfflineExecutionPolicy`]: the Worker's bounded buffering while disconnected (§11.5,
//! digest 2.17 "DISCONNECTED, within grace").

use std::collections::BTreeMap;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::Value;

use super::outbox::{OfflineOutbox, OutboxError};
use super::rebase::{sign, with_binding};
use missionweaveprotocol_kernel::offline::{OFFLINE_EXECUTION_EXTENSION, is_reversible};
use missionweaveprotocol_kernel::offline::{OfflineError, OfflineLimits, OfflineProgressBinding};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The active, owned, leased WorkItem the Worker was executing when it lost the Group service
/// (reference: the `WorkItem` argument, which must be active, owned and leased).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfflineAssignment {
    /// The Worker.
    pub agent_id: String,
    /// The Group.
    pub group_id: String,
    /// The WorkItem.
    pub work_item_id: String,
    /// The WorkItem Conversation, if known: Messages must stay inside it (§11.5).
    pub conversation_id: Option<String>,
    /// The Session Epoch the work ran under.
    pub session_epoch: u64,
    /// The Ownership Epoch.
    pub ownership_epoch: u64,
    /// The live Execution Lease.
    pub execution_lease_id: String,
    /// Its expiry.
    pub execution_lease_expires_at: UnixMillis,
}

/// Payload member names that carry secrets, compared case-insensitively without `_`/`-`
/// (§12: tokens and secrets never appear in Messages or Events).
const SECRET_MEMBERS: [&str; 12] = [
    "token",
    "accesstoken",
    "capabilitytoken",
    "sessiontoken",
    "bearertoken",
    "secret",
    "clientsecret",
    "password",
    "credential",
    "credentials",
    "apikey",
    "privatekey",
];

fn secret_member(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::Object(object) => object.iter().find_map(|(name, v)| {
            let name = name.as_str().unwrap_or_default();
            let folded: String = name
                .chars()
                .filter(|c| *c != '_' && *c != '-')
                .flat_map(char::to_lowercase)
                .collect();
            let here = format!("{path}/{name}");
            if SECRET_MEMBERS.contains(&folded.as_str()) {
                Some(here)
            } else {
                secret_member(v, &here)
            }
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| secret_member(v, &format!("{path}/{i}"))),
        _ => None,
    }
}

/// Bounded, reversible, signed buffering for one assignment (reference
/// `OfflineExecutionPolicy`). Each [`buffer`](Self::buffer) is checked in full, then signed and
/// queued; a refused Command changes no count and queues nothing.
#[derive(Clone, Debug)]
pub struct OfflineExecutionPolicy {
    assignment: OfflineAssignment,
    disconnected_at: UnixMillis,
    limits: OfflineLimits,
    grace_deadline: UnixMillis,
    /// Action ID → (the Command as offered, its signed buffered form).
    buffered: BTreeMap<String, (Value, Value)>,
    order: Vec<String>,
    cumulative_usage: Resources,
}

impl OfflineExecutionPolicy {
    /// Starts an offline window at `disconnected_at`. The grace deadline is
    /// `min(disconnected_at + max grace, lease expiry)`; a lease that had already lapsed at the
    /// disconnect allows nothing ([`OfflineError::LeaseClosed`]).
    pub fn new(
        assignment: OfflineAssignment,
        disconnected_at: UnixMillis,
        limits: OfflineLimits,
    ) -> Result<Self, OfflineError> {
        limits.validate()?;
        for (name, id) in [
            ("agent_id", &assignment.agent_id),
            ("group_id", &assignment.group_id),
            ("work_item_id", &assignment.work_item_id),
            ("execution_lease_id", &assignment.execution_lease_id),
        ] {
            if id.trim().is_empty() {
                return Err(OfflineError::InvalidArgument(name));
            }
        }
        if assignment.session_epoch == 0 || assignment.ownership_epoch == 0 {
            return Err(OfflineError::NotActive);
        }
        if disconnected_at >= assignment.execution_lease_expires_at {
            return Err(OfflineError::LeaseClosed { reason: "expired" });
        }
        let grace_deadline = disconnected_at
            .saturating_add_ms(limits.max_disconnect_grace_ms)
            .min(assignment.execution_lease_expires_at);
        Ok(Self {
            assignment,
            disconnected_at,
            limits,
            grace_deadline,
            buffered: BTreeMap::new(),
            order: Vec::new(),
            cumulative_usage: Resources::ZERO,
        })
    }

    /// The assignment.
    pub fn assignment(&self) -> &OfflineAssignment {
        &self.assignment
    }

    /// When the window began.
    pub fn disconnected_at(&self) -> UnixMillis {
        self.disconnected_at
    }

    /// The limits.
    pub fn limits(&self) -> &OfflineLimits {
        &self.limits
    }

    /// The end of the window.
    pub fn grace_deadline(&self) -> UnixMillis {
        self.grace_deadline
    }

    /// Buffered Commands (signed), in buffer order.
    pub fn buffered_actions(&self) -> Vec<Value> {
        self.order
            .iter()
            .filter_map(|id| self.buffered.get(id).map(|(_, signed)| signed.clone()))
            .collect()
    }

    /// Cumulative usage of the buffered Commands.
    pub fn cumulative_usage(&self) -> Resources {
        self.cumulative_usage
    }

    /// Checks `command` (a wire Command, signed or not) against the window, the assignment and
    /// the bounds; attaches the critical binding; re-signs it with `signer`; queues it in
    /// `outbox`. Buffering the same Command again returns the same signed document and counts
    /// nothing (idempotent per Action ID); other content under a buffered Action ID is a
    /// collision.
    pub fn buffer(
        &mut self,
        outbox: &mut dyn OfflineOutbox,
        signer: &dyn Signer,
        command: &Value,
        usage: Resources,
        now: UnixMillis,
    ) -> Result<Value, OfflineError> {
        let object = command
            .as_object()
            .ok_or(OfflineError::InvalidArgument("command"))?;
        let action_id = object
            .get("actionId")
            .and_then(Value::as_str)
            .ok_or(OfflineError::InvalidArgument("actionId"))?
            .to_owned();
        let mut offered = object.clone();
        offered.remove("signature");
        let offered = Value::Object(offered);
        if let Some((previous, signed)) = self.buffered.get(&action_id) {
            return if previous.json_eq(&offered) {
                Ok(signed.clone())
            } else {
                Err(OfflineError::ActionIdCollision { action_id })
            };
        }
        if now < self.disconnected_at || now > self.grace_deadline {
            return Err(OfflineError::OutsideGrace {
                at: now,
                grace_deadline: self.grace_deadline,
            });
        }
        self.check_command(&offered)?;
        if usage.get(Dimension::ExternalSideEffects) != 0 {
            return Err(OfflineError::ExternalEffect {
                detail: "externalActions".to_owned(),
            });
        }
        if self.order.len() >= self.limits.max_actions as usize {
            return Err(OfflineError::TooManyActions {
                max_actions: self.limits.max_actions,
            });
        }
        let cumulative = self
            .cumulative_usage
            .checked_add(&usage)
            .map_err(OfflineError::UsageExceeded)?;
        if let Some(d) = cumulative.first_exceeding(&self.limits.max_usage) {
            return Err(OfflineError::UsageExceeded(d));
        }
        let a = &self.assignment;
        let binding = OfflineProgressBinding {
            agent_id: a.agent_id.clone(),
            group_id: a.group_id.clone(),
            work_item_id: a.work_item_id.clone(),
            session_epoch: a.session_epoch,
            ownership_epoch: a.ownership_epoch,
            execution_lease_id: a.execution_lease_id.clone(),
            disconnected_at: self.disconnected_at,
            buffered_at: now,
            grace_deadline: self.grace_deadline,
            execution_lease_expires_at: a.execution_lease_expires_at,
            resource_usage_delta: usage,
        };
        binding.validate()?;
        let bound = with_binding(offered.as_object().unwrap_or(object), &binding)?;
        let signed = sign(bound, signer)?;
        outbox
            .enqueue_action(&a.agent_id, &action_id, &signed)
            .map_err(|e| match e {
                OutboxError::Collision { action_id } => {
                    OfflineError::ActionIdCollision { action_id }
                }
                OutboxError::Backend(detail) => OfflineError::Outbox { detail },
            })?;
        self.cumulative_usage = cumulative;
        self.order.push(action_id.clone());
        self.buffered.insert(action_id, (offered, signed.clone()));
        Ok(signed)
    }

    /// The Command's kind, addressing and content fit the assignment (§11.5).
    fn check_command(&self, command: &Value) -> Result<(), OfflineError> {
        let kind = command
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !is_reversible(kind) {
            return Err(OfflineError::NotReversible {
                kind: kind.to_owned(),
            });
        }
        if command
            .get("extensions")
            .and_then(|e| e.get(OFFLINE_EXECUTION_EXTENSION))
            .is_some()
        {
            // The binding is the policy's to write, never the caller's.
            return Err(OfflineError::binding(
                "the Command already carries a binding",
            ));
        }
        let a = &self.assignment;
        let text = |pointer: &str| command.pointer(pointer).and_then(Value::as_str);
        if text("/actor/type") != Some("agent") || text("/actor/id") != Some(&a.agent_id) {
            return Err(OfflineError::OutsideAssignment { member: "actor" });
        }
        if text("/groupId") != Some(&a.group_id) {
            return Err(OfflineError::OutsideAssignment { member: "groupId" });
        }
        let work_item = text("/workItemId").or_else(|| text("/payload/workItemId"));
        if work_item != Some(&a.work_item_id) {
            return Err(OfflineError::OutsideAssignment {
                member: "workItemId",
            });
        }
        if let (Some(expected), Some(conversation)) = (&a.conversation_id, text("/conversationId"))
            && conversation != expected
        {
            return Err(OfflineError::OutsideAssignment {
                member: "conversationId",
            });
        }
        if kind == "work.checkpoint" {
            if text("/payload/leaseId") != Some(&a.execution_lease_id) {
                return Err(OfflineError::OutsideAssignment { member: "leaseId" });
            }
            let epoch = command
                .pointer("/payload/ownershipEpoch")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64());
            if epoch != Some(a.ownership_epoch) {
                return Err(OfflineError::OutsideAssignment {
                    member: "ownershipEpoch",
                });
            }
        }
        if let Some(session) = command
            .get("sessionEpoch")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
            && session != a.session_epoch
        {
            return Err(OfflineError::OutsideAssignment {
                member: "sessionEpoch",
            });
        }
        if let Some(path) = command
            .get("payload")
            .and_then(|p| secret_member(p, "/payload"))
        {
            return Err(OfflineError::ExternalEffect { detail: path });
        }
        Ok(())
    }
}
