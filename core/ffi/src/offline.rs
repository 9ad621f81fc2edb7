//! Bounded offline execution (§11.5) for the npm package's `OfflineExecutionPolicy`,
//! `offlineCommandToWire`, `OfflineProgressBinding` and `InMemoryOutbox` (Node entry only).
//! The rules are `missionweaveprotocol_agent::offline`; this reads the call's JSON
//! argument array and writes the answer, as `bindings/python/src/offline.rs` does for Python.
//! Every refusal is the core's `OfflineError` description (`OfflinePolicyError`, §19 code,
//! reason = the reference's `kind`).
//!
//! The outbox is the caller's ([`OfflineOutbox`]): the Node binding passes an adapter that
//! calls the JavaScript store. Signing uses the Agent's `SigningKey` seed, as `sign` does.

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol_agent::offline::{
    self as core_offline, InMemoryOutbox, OfflineAssignment, OfflineExecutionPolicy, OfflineOutbox,
    OutboxError, RebaseInput,
};
use missionweaveprotocol_kernel::offline::{OfflineError, OfflineLimits, OfflineProgressBinding};
use missionweaveprotocol_kernel::resources::Resources;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::envelope::{Failure, Obj, finish};
use crate::shapes::common::{Millis, ResourceAmounts, ResourceInput, Safe};
use crate::shapes::{Call, Res, answer, run};

fn offline_failure(e: &OfflineError) -> Failure {
    Failure::error(e)
}

/// The WorkItem the Worker was executing: `{agentId, groupId, workItemId, conversationId?,
/// sessionEpoch, ownershipEpoch, executionLeaseId, executionLeaseExpiresAt}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AssignmentInput {
    agent_id: String,
    group_id: String,
    work_item_id: String,
    conversation_id: Option<String>,
    session_epoch: Safe,
    ownership_epoch: Safe,
    execution_lease_id: String,
    execution_lease_expires_at: Millis,
}

/// `{maxDisconnectGraceMs, maxActions, maxUsage}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LimitsInput {
    max_disconnect_grace_ms: Safe,
    max_actions: u32,
    max_usage: Option<ResourceInput>,
}

impl From<LimitsInput> for OfflineLimits {
    fn from(l: LimitsInput) -> Self {
        Self {
            max_disconnect_grace_ms: l.max_disconnect_grace_ms.0,
            max_actions: l.max_actions,
            max_usage: l.max_usage.unwrap_or_default().into(),
        }
    }
}

/// `{sessionEpoch, membershipEpoch, issuedAt, executionLeaseId?}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RebaseArgs {
    session_epoch: Safe,
    membership_epoch: Safe,
    issued_at: Millis,
    execution_lease_id: Option<String>,
}

/// A JSON document argument (a Command, binding data), read by the core's lossless parser.
fn json_arg(a: &Call<'_>, index: usize, name: &str) -> Res<Value> {
    let raw: Box<RawValue> = a.arg(index, name)?;
    parse(raw.get().as_bytes()).map_err(|e| Failure::error(&e))
}

fn usage_value(r: Resources) -> Res<Value> {
    answer(&ResourceAmounts::from(r))
}

fn key_of(key_id: &str, seed: &[u8]) -> Res<SigningKey> {
    let seed: &[u8; 32] = seed
        .try_into()
        .map_err(|_| Failure::argument("the signing seed must be exactly 32 bytes"))?;
    Ok(SigningKey::from_seed(key_id, seed))
}

/// `[limits]`: the core's check of the bounds (`maxDisconnectGraceMs > 0`, `maxActions ≥ 1`).
pub fn validate_limits(args: &str) -> Res<Value> {
    let a = Call::parse(args)?;
    let limits = OfflineLimits::from(a.arg::<LimitsInput>(0, "limits")?);
    limits.validate().map_err(|e| offline_failure(&e))?;
    Ok(Value::Null)
}

/// `[command, key-independent rebase {sessionEpoch, membershipEpoch, issuedAt,
/// executionLeaseId?}]`: the buffered Command rebased onto the current session and re-signed
/// by `key_id`/`seed` (the binding is kept unchanged).
pub fn rebase(key_id: &str, seed: &[u8], args: &str) -> Res<Value> {
    let a = Call::parse(args)?;
    let command = json_arg(&a, 0, "command")?;
    let r: RebaseArgs = a.arg(1, "rebase")?;
    let key = key_of(key_id, seed)?;
    let input = RebaseInput {
        session_epoch: r.session_epoch.0,
        membership_epoch: r.membership_epoch.0,
        issued_at: r.issued_at.0,
        execution_lease_id: r.execution_lease_id.as_deref(),
    };
    core_offline::rebase_offline_command(&command, &key, &input).map_err(|e| offline_failure(&e))
}

/// `[command]`: the binding's JSON form the Command carries, or `null`; an extension that is
/// present but not critical, of another version or malformed is `invalid_binding`.
pub fn binding_of(args: &str) -> Res<Value> {
    let a = Call::parse(args)?;
    let command = json_arg(&a, 0, "command")?;
    match core_offline::offline_binding_of(&command).map_err(|e| offline_failure(&e))? {
        None => Ok(Value::Null),
        Some(binding) => binding.to_value().map_err(|e| offline_failure(&e)),
    }
}

/// `[data]`: validates an `OfflineProgressBinding`'s JSON form (strict members, ordered
/// window, no external actions) and returns its normalized form.
pub fn validate_binding(args: &str) -> Res<Value> {
    let a = Call::parse(args)?;
    let data = json_arg(&a, 0, "binding")?;
    OfflineProgressBinding::from_value(&data)
        .and_then(|b| b.to_value())
        .map_err(|e| offline_failure(&e))
}

/// The extension URI, its version and the reversible kinds (§11.5).
pub fn constants() -> String {
    finish(Ok(Obj::new()
        .str("extension", core_offline::OFFLINE_EXECUTION_EXTENSION)
        .str("version", core_offline::OFFLINE_EXECUTION_EXTENSION_VERSION)
        .strings("reversibleKinds", core_offline::REVERSIBLE_KINDS)
        .build()))
}

/// One offline window's policy (`OfflineExecutionPolicy`).
#[derive(Debug, Clone)]
pub struct OfflineHandle(OfflineExecutionPolicy);

impl OfflineHandle {
    /// `[assignment, disconnectedAt, limits]`.
    pub fn new(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let x: AssignmentInput = a.arg(0, "assignment")?;
        let disconnected_at: Millis = a.arg(1, "disconnectedAt")?;
        let limits = OfflineLimits::from(a.arg::<LimitsInput>(2, "limits")?);
        let assignment = OfflineAssignment {
            agent_id: x.agent_id,
            group_id: x.group_id,
            work_item_id: x.work_item_id,
            conversation_id: x.conversation_id,
            session_epoch: x.session_epoch.0,
            ownership_epoch: x.ownership_epoch.0,
            execution_lease_id: x.execution_lease_id,
            execution_lease_expires_at: x.execution_lease_expires_at.0,
        };
        OfflineExecutionPolicy::new(assignment, disconnected_at.0, limits)
            .map(Self)
            .map_err(|e| offline_failure(&e))
    }

    /// `{disconnectedAt, graceDeadline, bufferedActions, cumulativeUsage}`.
    pub fn state(&self) -> String {
        let p = &self.0;
        finish(usage_value(p.cumulative_usage()).map(|usage| {
            Obj::new()
                .int("disconnectedAt", p.disconnected_at().0)
                .int("graceDeadline", p.grace_deadline().0)
                .value("bufferedActions", Value::Array(p.buffered_actions()))
                .value("cumulativeUsage", usage)
                .build()
        }))
    }

    /// `[command, usage, now]`: checks, binds, re-signs with `key_id`/`seed` and queues the
    /// Command in `outbox`; the signed wire Command.
    pub fn buffer(
        &mut self,
        outbox: &mut dyn OfflineOutbox,
        key_id: &str,
        seed: &[u8],
        args: &str,
    ) -> Res<Value> {
        let a = Call::parse(args)?;
        let command = json_arg(&a, 0, "command")?;
        let usage: Option<ResourceInput> = a.arg(1, "usage")?;
        let now: Millis = a.arg(2, "now")?;
        let key = key_of(key_id, seed)?;
        self.0
            .buffer(
                outbox,
                &key,
                &command,
                usage.unwrap_or_default().into(),
                now.0,
            )
            .map_err(|e| offline_failure(&e))
    }
}

/// An outbox failure as the policy reports it (the reference's `OfflinePolicyError`).
fn outbox_failure(e: OutboxError) -> Failure {
    offline_failure(&match e {
        OutboxError::Collision { action_id } => OfflineError::ActionIdCollision { action_id },
        OutboxError::Backend(detail) => OfflineError::Outbox { detail },
    })
}

/// The core's in-memory outbox.
#[derive(Debug, Clone, Default)]
pub struct OutboxHandle(InMemoryOutbox);

impl OutboxHandle {
    /// `[agentId, actionId, payload]`.
    pub fn enqueue_action(&mut self, args: &str) -> String {
        run(args, |a| {
            let payload = json_arg(a, 2, "payload")?;
            let (agent, action) = (
                a.arg::<String>(0, "agentId")?,
                a.arg::<String>(1, "actionId")?,
            );
            self.0
                .enqueue_action(&agent, &action, &payload)
                .map_err(outbox_failure)?;
            Ok(Value::Null)
        })
    }

    /// `[agentId]` → the unsent payloads, in enqueue order.
    pub fn pending_actions(&self, args: &str) -> String {
        run(args, |a| {
            self.0
                .pending_actions(&a.arg::<String>(0, "agentId")?)
                .map(Value::Array)
                .map_err(outbox_failure)
        })
    }

    /// `[agentId, actionId]`.
    pub fn mark_action_sent(&mut self, args: &str) -> String {
        run(args, |a| {
            let (agent, action) = (
                a.arg::<String>(0, "agentId")?,
                a.arg::<String>(1, "actionId")?,
            );
            self.0
                .mark_action_sent(&agent, &action)
                .map_err(outbox_failure)?;
            Ok(Value::Null)
        })
    }
}

/// The in-memory outbox is also the policy's outbox (Rust callers and tests).
impl OfflineOutbox for OutboxHandle {
    fn enqueue_action(
        &mut self,
        agent_id: &str,
        action_id: &str,
        payload: &Value,
    ) -> Result<(), OutboxError> {
        self.0.enqueue_action(agent_id, action_id, payload)
    }

    fn pending_actions(&self, agent_id: &str) -> Result<Vec<Value>, OutboxError> {
        self.0.pending_actions(agent_id)
    }

    fn mark_action_sent(&mut self, agent_id: &str, action_id: &str) -> Result<(), OutboxError> {
        self.0.mark_action_sent(agent_id, action_id)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use missionweaveprotocol::json::Value;

    use super::{
        OfflineHandle, OutboxHandle, binding_of, rebase, validate_binding, validate_limits,
    };
    use crate::shapes::Res;

    const AGENT: &str = "urn:missionweaveprotocol:agent:worker";
    const KEY: &str = "urn:missionweaveprotocol:key:worker";
    const SEED: [u8; 32] = [7; 32];
    // 2026-07-15T09:30:00Z
    const T0: i64 = 1_784_107_800_000;

    fn error(result: Res<Value>) -> String {
        let envelope = crate::envelope::finish(result);
        let parsed = missionweaveprotocol::json::parse(envelope.as_bytes()).unwrap();
        let error = parsed.get("error").expect("an error envelope");
        format!(
            "{}/{}/{}",
            error.get("class").and_then(Value::as_str).unwrap(),
            error.get("code").and_then(Value::as_str).unwrap(),
            error.get("reason").and_then(Value::as_str).unwrap()
        )
    }

    fn ok(envelope: String) -> Value {
        let parsed = missionweaveprotocol::json::parse(envelope.as_bytes()).unwrap();
        parsed.get("ok").cloned().expect(&envelope)
    }

    fn policy() -> OfflineHandle {
        let args = format!(
            r#"[{{"agentId":"{AGENT}","groupId":"urn:g","workItemId":"urn:w","sessionEpoch":3,
            "ownershipEpoch":2,"executionLeaseId":"urn:lease:1","executionLeaseExpiresAt":{}}},
            {T0},{{"maxDisconnectGraceMs":300000,"maxActions":1,"maxUsage":{{"modelTokens":4}}}}]"#,
            T0 + 600_000
        );
        OfflineHandle::new(&args).unwrap()
    }

    fn message(n: u32, kind: &str) -> String {
        format!(
            r#"{{"protocolVersion":"0.1","actionId":"urn:uuid:00000000-0000-4000-8000-00000000000{n}",
            "actor":{{"type":"agent","id":"{AGENT}"}},"sessionEpoch":3,"membershipEpoch":1,
            "groupId":"urn:g","workItemId":"urn:w","kind":"{kind}",
            "correlationId":"urn:missionweaveprotocol:correlation:1","issuedAt":"2026-07-15T09:30:00Z",
            "payload":{{"messageId":"urn:missionweaveprotocol:message:{n}","content":"draft"}}}}"#
        )
    }

    #[test]
    fn buffering_binds_signs_queues_and_bounds() {
        let mut p = policy();
        let mut outbox = OutboxHandle::default();
        let signed = p
            .buffer(
                &mut outbox,
                KEY,
                &SEED,
                &format!(
                    r#"[{},{{"modelTokens":2}},{}]"#,
                    message(1, "message.post"),
                    T0 + 1000
                ),
            )
            .unwrap();
        assert!(signed.get("signature").is_some());
        let binding = binding_of(&format!(
            "[{}]",
            String::from_utf8(missionweaveprotocol::json::canonical_bytes(&signed).unwrap())
                .unwrap()
        ))
        .unwrap();
        assert_eq!(binding.get("agentId").and_then(Value::as_str), Some(AGENT));
        assert_eq!(
            validate_binding(&format!(
                "[{}]",
                String::from_utf8(missionweaveprotocol::json::canonical_bytes(&binding).unwrap())
                    .unwrap()
            ))
            .unwrap(),
            binding
        );
        let pending = ok(outbox.pending_actions(&format!(r#"["{AGENT}"]"#)));
        assert_eq!(pending.as_array().map(<[Value]>::len), Some(1));
        assert_eq!(
            error(p.buffer(
                &mut outbox,
                KEY,
                &SEED,
                &format!("[{},null,{}]", message(2, "message.post"), T0 + 2000)
            )),
            "OfflinePolicyError/RATE_LIMITED/too_many_actions"
        );
        let mut fresh = policy();
        assert_eq!(
            error(fresh.buffer(
                &mut outbox,
                KEY,
                &SEED,
                &format!("[{},null,{}]", message(3, "work.submit"), T0)
            )),
            "OfflinePolicyError/INVALID_COMMAND/not_reversible"
        );
        assert_eq!(
            error(fresh.buffer(
                &mut outbox,
                KEY,
                &SEED,
                &format!("[{},null,{}]", message(3, "message.post"), T0 + 300_001)
            )),
            "OfflinePolicyError/WORK_LEASE_EXPIRED/outside_grace"
        );
        let state = ok(fresh.state());
        assert_eq!(
            state
                .get("bufferedActions")
                .and_then(Value::as_array)
                .map(<[Value]>::len),
            Some(0)
        );
    }

    #[test]
    fn limits_rebase_and_bindings_are_checked() {
        assert_eq!(
            validate_limits(r#"[{"maxDisconnectGraceMs":1,"maxActions":1}]"#).unwrap(),
            Value::Null
        );
        assert_eq!(
            error(validate_limits(
                r#"[{"maxDisconnectGraceMs":0,"maxActions":1}]"#
            )),
            "OfflinePolicyError/INVALID_COMMAND/invalid_argument"
        );
        // A Command without the binding cannot be rebased.
        let args = format!(
            r#"[{},{{"sessionEpoch":4,"membershipEpoch":2,"issuedAt":{}}}]"#,
            message(1, "message.post"),
            T0
        );
        assert_eq!(
            error(rebase(KEY, &SEED, &args)),
            "OfflinePolicyError/INVALID_COMMAND/invalid_binding"
        );
        assert_eq!(
            binding_of(&format!("[{}]", message(1, "message.post"))).unwrap(),
            Value::Null
        );
        assert!(error(validate_binding(r#"[{"agentId":"a"}]"#)).starts_with("OfflinePolicyError/"));
        assert!(error(rebase(KEY, &[0; 3], &args)).starts_with("ArgumentError/"));
    }
}
