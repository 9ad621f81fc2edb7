//! Core-side reconciliation of bounded offline progress (§11.5, digest 2.17): a Worker buffers
//! a `work.checkpoint` under its Execution Lease while disconnected, reconnects (a new Session
//! Epoch revokes the lease), re-starts under a new lease, rebases the checkpoint onto it and
//! re-signs; the authority validates the binding, charges the offline delta with a
//! `…resource_usage_recorded` Event *before* the checkpoint, in one transaction, or refuses the
//! whole Command with a typed §19 code and applies nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../engine/tests/engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Object, Value};
use missionweaveprotocol::{DescribeError, SignedDocumentCodec, SignedDocumentKind, WireCode};
use missionweaveprotocol_agent::offline::{
    InMemoryOutbox, OfflineAssignment, OfflineExecutionPolicy, OfflineOutbox, RebaseInput,
    rebase_offline_command,
};
use missionweaveprotocol_engine::budget::account::{BudgetAccount, account_key};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand,
};
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::offline::{
    OFFLINE_EXECUTION_EXTENSION, OfflineLimits, OfflineProgressBinding,
};
use missionweaveprotocol_kernel::resources::{Dimension, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const SECOND: u64 = 1_000;
const RECORDED: &str = "ext.missionweaveprotocol.core.resource_usage_recorded";

fn at(seconds: u64) -> UnixMillis {
    NOW.saturating_add_ms(seconds * SECOND)
}

fn key(f: &Fixture, id: &str) -> SigningKey {
    f.keys.iter().find(|(p, _)| p.id == id).unwrap().1.clone()
}

fn account(engine: &TestEngine, kind: AccountKind, id: &str) -> BudgetAccount {
    let stored = engine
        .store()
        .aggregate(&account_key(kind, id))
        .unwrap()
        .unwrap();
    BudgetAccount::from_stored(&stored.value).unwrap()
}

fn tools(n: u64) -> Resources {
    Resources::ZERO.with(Dimension::ToolCalls, n)
}

fn agent_limits() -> OfflineLimits {
    OfflineLimits {
        max_disconnect_grace_ms: 60 * SECOND,
        max_actions: 4,
        max_usage: Resources::ZERO
            .with(Dimension::ToolCalls, 100)
            .with(Dimension::ModelTokens, 100),
    }
}

/// An active W1 and the Worker's view of it (historical lease).
struct World {
    f: Fixture,
    engine: TestEngine,
    assignment: OfflineAssignment,
}

fn world_with(limits: Option<OfflineLimits>) -> World {
    let f = fixture();
    let mut engine = f.active();
    if let Some(limits) = limits {
        engine = engine.with_offline_limits(limits);
    }
    f.active_item(&engine, W1);
    let (_, item) = stored(&engine, W1);
    let lease = item.execution_lease.as_ref().unwrap();
    let assignment = OfflineAssignment {
        agent_id: WORKER.to_owned(),
        group_id: GROUP.to_owned(),
        work_item_id: W1.to_owned(),
        conversation_id: Some(CONVERSATION.to_owned()),
        session_epoch: 1,
        ownership_epoch: item.owner.as_ref().unwrap().ownership_epoch,
        execution_lease_id: lease.lease_id().to_owned(),
        execution_lease_expires_at: lease.window().expires_at,
    };
    World {
        f,
        engine,
        assignment,
    }
}

fn world() -> World {
    world_with(None)
}

impl World {
    /// The unsigned checkpoint the Worker would have sent online.
    fn checkpoint(&self, extra: &str) -> Value {
        let a = &self.assignment;
        self.f.unsigned(
            "work.checkpoint",
            WORKER,
            &self.f.action(),
            extra,
            &format!(
                r#"{{"workItemId":"{}","ownershipEpoch":{},"leaseId":"{}",{}}}"#,
                a.work_item_id,
                a.ownership_epoch,
                a.execution_lease_id,
                Fixture::checkpoint_members()
            ),
        )
    }

    /// Buffers one checkpoint with `usage` at `t` seconds, the window opening at 10 s.
    fn buffered(&self, usage: Resources, t: u64) -> Value {
        let mut policy =
            OfflineExecutionPolicy::new(self.assignment.clone(), at(10), agent_limits()).unwrap();
        let mut outbox = InMemoryOutbox::new();
        policy
            .buffer(
                &mut outbox,
                &key(&self.f, WORKER),
                &self.checkpoint(""),
                usage,
                at(t),
            )
            .unwrap()
    }

    /// Reconnect at `t`: a new session (revoking the lease), then re-start under the
    /// replacement ownership lease; returns the new Execution Lease ID.
    fn reconnect_and_restart(&self, t: u64, epoch: u64) -> String {
        self.engine
            .perform(&self.f.session_open(WORKER), at(t))
            .unwrap();
        self.f.use_session_epoch(epoch);
        let (ownership_epoch, replacement) = ownership(&self.engine, W1);
        self.f.ok(
            &self.engine,
            &self
                .f
                .by_worker("work.start", WORKER, W1, ownership_epoch, &replacement, ""),
            at(t),
        );
        execution(&self.engine, W1).1
    }

    /// Rebases `buffered` onto session `epoch` and `lease`, verified through ingress at `t`.
    fn rebased(&self, buffered: &Value, epoch: u64, lease: &str, t: u64) -> VerifiedCommand {
        let signed = rebase_offline_command(
            buffered,
            &key(&self.f, WORKER),
            &RebaseInput {
                session_epoch: epoch,
                membership_epoch: 1,
                issued_at: at(t),
                execution_lease_id: Some(lease),
            },
        )
        .unwrap();
        verify(&self.f, &signed, t)
    }
}

fn verify(f: &Fixture, signed: &Value, t: u64) -> VerifiedCommand {
    CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(&json::canonical_bytes(signed).unwrap(), &f.registry, at(t))
        .unwrap()
}

/// `command` (unsigned or signed) with `binding` written as the offline extension, signed by
/// `signer`: what a Worker that forges its own binding would send.
fn with_binding(command: &Value, binding: &Value, critical: bool, signer: &SigningKey) -> Value {
    let mut object = command.as_object().unwrap().clone();
    object.remove("signature");
    let mut envelope = Object::new();
    envelope.insert("version", Value::string("0.1.0"));
    envelope.insert("critical", Value::Bool(critical));
    envelope.insert("data", binding.clone());
    let mut extensions = Object::new();
    extensions.insert(OFFLINE_EXECUTION_EXTENSION, Value::Object(envelope));
    object.insert("extensions", Value::Object(extensions));
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &Value::Object(object), signer)
        .unwrap()
        .document
}

fn binding_of(buffered: &Value) -> OfflineProgressBinding {
    OfflineProgressBinding::from_value(
        buffered
            .pointer(&format!("/extensions/{OFFLINE_EXECUTION_EXTENSION}/data"))
            .unwrap(),
    )
    .unwrap()
}

/// `buffered`, rebased onto `lease`/`epoch` at `t`, but with `binding` instead of its own.
fn forged(
    w: &World,
    buffered: &Value,
    binding: &OfflineProgressBinding,
    lease: &str,
    t: u64,
) -> VerifiedCommand {
    let mut object = buffered.as_object().unwrap().clone();
    let mut payload = object.get("payload").unwrap().as_object().unwrap().clone();
    payload.insert("leaseId", Value::string(lease));
    object.insert("payload", Value::Object(payload));
    object.insert("sessionEpoch", Value::Number(json::Number::from_u64(2)));
    object.insert("issuedAt", Value::string(at(t).to_rfc3339().unwrap()));
    let signed = with_binding(
        &Value::Object(object),
        &binding.to_value().unwrap(),
        true,
        &key(&w.f, WORKER),
    );
    verify(&w.f, &signed, t)
}

fn kinds_of(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e.get("kind").and_then(Value::as_str).unwrap())
        .collect()
}

#[test]
fn a_rebased_checkpoint_charges_its_offline_usage_before_applying() {
    let w = world();
    let buffered = w.buffered(tools(2), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let before = account(&w.engine, AccountKind::WorkItem, W1);
    let events =
        w.f.ok(&w.engine, &w.rebased(&buffered, 2, &lease, 42), at(42));
    assert_eq!(kinds_of(&events), vec![RECORDED, "work.checkpointed"]);
    let recorded = payload_of(&events[0]);
    assert_eq!(
        recorded
            .pointer("/usageDelta/toolCalls")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(2)
    );
    assert_eq!(
        recorded.get("leaseId").and_then(Value::as_str),
        Some(w.assignment.execution_lease_id.as_str()),
        "the charge names the historical lease"
    );
    for (member, epoch) in [
        ("historicalSessionEpoch", 1),
        ("reconciliationSessionEpoch", 2),
    ] {
        assert_eq!(
            recorded.get(member).unwrap().as_number().unwrap().as_u64(),
            Some(epoch)
        );
    }
    let after = account(&w.engine, AccountKind::WorkItem, W1);
    assert_eq!(
        after.usage.get(Dimension::ToolCalls),
        before.usage.get(Dimension::ToolCalls) + 2
    );
    let mission = account(&w.engine, AccountKind::Mission, MISSION);
    assert_eq!(
        mission.usage.get(Dimension::ToolCalls),
        2,
        "the ancestry is charged too"
    );
    assert_eq!(
        item_state(&w.engine, W1),
        "queued",
        "the checkpoint was applied"
    );
    whole_log(&w.f, &w.engine);
}

#[test]
fn zero_usage_reconciles_without_a_usage_event_and_duplicates_charge_once() {
    let w = world();
    let buffered = w.buffered(Resources::ZERO, 20);
    let lease = w.reconnect_and_restart(40, 2);
    let command = w.rebased(&buffered, 2, &lease, 42);
    let events = w.f.ok(&w.engine, &command, at(42));
    assert_eq!(kinds_of(&events), vec!["work.checkpointed"]);

    let w = world();
    let buffered = w.buffered(tools(3), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let command = w.rebased(&buffered, 2, &lease, 42);
    w.f.ok(&w.engine, &command, at(42));
    assert!(w.engine.perform(&command, at(43)).unwrap().duplicate);
    assert_eq!(
        account(&w.engine, AccountKind::WorkItem, W1)
            .usage
            .get(Dimension::ToolCalls),
        3
    );
}

#[test]
fn a_budget_overflow_rejects_the_charge_and_the_checkpoint() {
    // The contract's budget allows 10 tool calls.
    let w = world();
    let buffered = w.buffered(tools(11), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let before = stored(&w.engine, W1);
    w.f.refused(
        &w.engine,
        &w.rebased(&buffered, 2, &lease, 42),
        at(42),
        WireCode::BudgetExceeded,
    );
    assert!(
        account(&w.engine, AccountKind::WorkItem, W1)
            .usage
            .is_zero()
    );
    assert_eq!(stored(&w.engine, W1), before, "nothing applied");
}

#[test]
fn the_core_grace_bound_refuses_a_longer_window() {
    let core = OfflineLimits {
        max_disconnect_grace_ms: 30 * SECOND,
        ..agent_limits()
    };
    // Positive: a window within the bound.
    let w = world_with(Some(OfflineLimits {
        max_disconnect_grace_ms: 60 * SECOND,
        ..core
    }));
    let buffered = w.buffered(tools(1), 20);
    let lease = w.reconnect_and_restart(40, 2);
    w.f.ok(&w.engine, &w.rebased(&buffered, 2, &lease, 42), at(42));
    // Negative: the Worker's 60 s window exceeds the Core's 30 s.
    let w = world_with(Some(core));
    let buffered = w.buffered(tools(1), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let error = w.f.refused(
        &w.engine,
        &w.rebased(&buffered, 2, &lease, 42),
        at(42),
        WireCode::WorkLeaseExpired,
    );
    assert_eq!(error.reason(), "outside_grace");
    assert!(
        account(&w.engine, AccountKind::WorkItem, W1)
            .usage
            .is_zero()
    );
}

#[test]
fn the_core_bounds_actions_and_usage_per_historical_lease() {
    let core = OfflineLimits {
        max_disconnect_grace_ms: 60 * SECOND,
        max_actions: 1,
        max_usage: tools(4),
    };
    // Usage beyond the Core's per-lease bound.
    let w = world_with(Some(core));
    let buffered = w.buffered(tools(5), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let error = w.f.refused(
        &w.engine,
        &w.rebased(&buffered, 2, &lease, 42),
        at(42),
        WireCode::BudgetExceeded,
    );
    assert_eq!(error.reason(), "usage_exceeded");

    // One action reconciles; a second one of the same historical lease is refused.
    let w = world_with(Some(core));
    let first = w.buffered(tools(1), 20);
    let mut second = w.buffered(tools(1), 25);
    // Both were buffered by one policy in reality; give the second its own Action ID.
    if let Value::Object(o) = &mut second {
        o.insert("actionId", Value::string(w.f.action()));
    }
    let lease = w.reconnect_and_restart(40, 2);
    w.f.ok(&w.engine, &w.rebased(&first, 2, &lease, 42), at(42));
    // The checkpoint released the lease; re-start under a new one.
    let (epoch, ownership_lease) = ownership(&w.engine, W1);
    w.f.ok(
        &w.engine,
        &w.f.by_worker("work.start", WORKER, W1, epoch, &ownership_lease, ""),
        at(43),
    );
    let lease = execution(&w.engine, W1).1;
    let error = w.f.refused(
        &w.engine,
        &w.rebased(&second, 2, &lease, 44),
        at(44),
        WireCode::RateLimited,
    );
    assert_eq!(error.reason(), "too_many_actions");
}

#[test]
fn an_expired_historical_lease_cannot_be_reconciled() {
    // The lease lapsed while offline and the Worker resumes its session (same epoch): the
    // rebased checkpoint still cites the lapsed lease and is refused; nothing is charged.
    let w = world();
    let buffered = w.buffered(tools(1), 20);
    let expiry = w.assignment.execution_lease_expires_at;
    let later = (expiry.0 - NOW.0) as u64 / SECOND + 10;
    let old = w.assignment.execution_lease_id.clone();
    w.f.refused(
        &w.engine,
        &w.rebased(&buffered, 1, &old, later),
        at(later),
        WireCode::WorkLeaseExpired,
    );
    assert!(
        account(&w.engine, AccountKind::WorkItem, W1)
            .usage
            .is_zero()
    );

    // A binding that claims buffering at the lease's very expiry is outside the lease.
    let w = world();
    let buffered = w.buffered(tools(1), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let mut binding = binding_of(&buffered);
    binding.buffered_at = w.assignment.execution_lease_expires_at;
    binding.grace_deadline = binding.buffered_at;
    binding.disconnected_at = binding.buffered_at;
    let command = forged(&w, &buffered, &binding, &lease, 42);
    // Buffered "in the future" of the reconciliation is refused first.
    w.f.refused(&w.engine, &command, at(42), WireCode::WorkLeaseExpired);
}

#[test]
fn progress_buffered_after_the_lease_closed_is_refused() {
    // The Worker checkpointed online at 5 s (releasing the lease), then buffered more
    // progress under the released lease.
    let w = world();
    let a = &w.assignment;
    w.f.ok(
        &w.engine,
        &w.f.by_worker(
            "work.checkpoint",
            WORKER,
            W1,
            a.ownership_epoch,
            &a.execution_lease_id,
            Fixture::checkpoint_members(),
        ),
        at(5),
    );
    let buffered = w.buffered(tools(1), 20);
    // Re-start (no session change needed: the item is queued under its ownership lease).
    let (epoch, ownership_lease) = ownership(&w.engine, W1);
    w.f.ok(
        &w.engine,
        &w.f.by_worker("work.start", WORKER, W1, epoch, &ownership_lease, ""),
        at(30),
    );
    let lease = execution(&w.engine, W1).1;
    let error = w.f.refused(
        &w.engine,
        &w.rebased(&buffered, 1, &lease, 42),
        at(42),
        WireCode::WorkLeaseExpired,
    );
    assert_eq!(error.reason(), "lease_closed");
}

#[test]
fn a_changed_owner_is_refused_with_stale_ownership() {
    let w = world();
    let buffered = w.buffered(tools(1), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let mut binding = binding_of(&buffered);
    binding.ownership_epoch += 1;
    let error = w.f.refused(
        &w.engine,
        &forged(&w, &buffered, &binding, &lease, 42),
        at(42),
        WireCode::WorkStaleOwnership,
    );
    assert_eq!(error.reason(), "stale_ownership");
}

#[test]
fn forged_bindings_are_invalid_commands() {
    let w = world();
    let buffered = w.buffered(tools(1), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let original = binding_of(&buffered);
    let cases: Vec<(&str, OfflineProgressBinding)> = vec![
        (
            "another Agent",
            OfflineProgressBinding {
                agent_id: COORDINATOR.to_owned(),
                ..original.clone()
            },
        ),
        (
            "another WorkItem",
            OfflineProgressBinding {
                work_item_id: W2.to_owned(),
                ..original.clone()
            },
        ),
        (
            "another Group",
            OfflineProgressBinding {
                group_id: "urn:missionweaveprotocol:group:other".to_owned(),
                ..original.clone()
            },
        ),
        (
            "another session",
            OfflineProgressBinding {
                session_epoch: 2,
                ..original.clone()
            },
        ),
        (
            "overstated expiry",
            OfflineProgressBinding {
                execution_lease_expires_at: original
                    .execution_lease_expires_at
                    .saturating_add_ms(1),
                ..original.clone()
            },
        ),
        (
            "unknown lease",
            OfflineProgressBinding {
                execution_lease_id: "urn:missionweaveprotocol:lease:none".to_owned(),
                ..original.clone()
            },
        ),
    ];
    for (what, binding) in cases {
        let code = if what == "unknown lease" {
            WireCode::WorkLeaseExpired
        } else {
            WireCode::InvalidCommand
        };
        let error = w
            .engine
            .perform(&forged(&w, &buffered, &binding, &lease, 42), at(42))
            .unwrap_err();
        assert_eq!(error.wire_code(), code, "{what}: {error}");
    }
    assert!(
        account(&w.engine, AccountKind::WorkItem, W1)
            .usage
            .is_zero()
    );
    // The genuine binding still reconciles afterwards.
    w.f.ok(&w.engine, &w.rebased(&buffered, 2, &lease, 43), at(43));
}

#[test]
fn missing_non_critical_or_tampered_bindings_are_refused() {
    let w = world();
    let buffered = w.buffered(tools(1), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let binding = binding_of(&buffered).to_value().unwrap();
    let signer = key(&w.f, WORKER);
    let mut rebased = w.rebased(&buffered, 2, &lease, 42).document().clone();
    // Non-critical: the extension must be critical.
    let soft = with_binding(&rebased, &binding, false, &signer);
    w.f.refused(
        &w.engine,
        &verify(&w.f, &soft, 42),
        at(42),
        WireCode::InvalidCommand,
    );
    // Data missing members.
    let mut partial = binding.as_object().unwrap().clone();
    partial.remove("graceDeadline");
    let missing = with_binding(&rebased, &Value::Object(partial), true, &signer);
    w.f.refused(
        &w.engine,
        &verify(&w.f, &missing, 42),
        at(42),
        WireCode::InvalidCommand,
    );
    // Tampering after signing breaks the signature at ingress.
    if let Value::Object(o) = &mut rebased {
        let ext = o.get("extensions").unwrap().clone();
        let mut text = String::from_utf8(json::canonical_bytes(&ext).unwrap()).unwrap();
        text = text.replace("\"toolCalls\":1", "\"toolCalls\":0");
        o.insert("extensions", json::parse(text.as_bytes()).unwrap());
    }
    assert!(
        CommandIngress::new(AllowAllAuthorizerForTests)
            .verify(
                &json::canonical_bytes(&rebased).unwrap(),
                &w.f.registry,
                at(42)
            )
            .is_err()
    );
    assert!(
        account(&w.engine, AccountKind::WorkItem, W1)
            .usage
            .is_zero()
    );
}

#[test]
fn only_reversible_kinds_may_carry_the_binding() {
    let w = world();
    let buffered = w.buffered(tools(1), 20);
    let binding = binding_of(&buffered).to_value().unwrap();
    let a = &w.assignment;
    let submit = w.f.unsigned(
        "work.submit",
        WORKER,
        &w.f.action(),
        "",
        &format!(
            r#"{{"workItemId":"{W1}","ownershipEpoch":{},"leaseId":"{}",{}}}"#,
            a.ownership_epoch,
            a.execution_lease_id,
            Fixture::submit_members(W1)
        ),
    );
    let signed = with_binding(&submit, &binding, true, &key(&w.f, WORKER));
    let error = w.f.refused(
        &w.engine,
        &verify(&w.f, &signed, 0),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(error.reason(), "not_reversible");
    // Any other critical extension is still unknown (§18).
    let mut object = w.checkpoint("").as_object().unwrap().clone();
    let mut ext = Object::new();
    ext.insert("version", Value::string("1.0.0"));
    ext.insert("critical", Value::Bool(true));
    ext.insert("data", Value::Null);
    let mut extensions = Object::new();
    extensions.insert("urn:example:extension:unknown", Value::Object(ext));
    object.insert("extensions", Value::Object(extensions));
    let unknown = SignedDocumentCodec::new()
        .sign(
            SignedDocumentKind::Command,
            &Value::Object(object),
            &key(&w.f, WORKER),
        )
        .unwrap()
        .document;
    w.f.refused(
        &w.engine,
        &verify(&w.f, &unknown, 0),
        NOW,
        WireCode::UnknownCriticalExtension,
    );
}

#[test]
fn progress_outside_the_work_item_conversation_is_refused() {
    let w = world();
    let mut policy =
        OfflineExecutionPolicy::new(w.assignment.clone(), at(10), agent_limits()).unwrap();
    let mut outbox = InMemoryOutbox::new();
    // The agent-side policy refuses it outright…
    let other = r#""conversationId":"urn:missionweaveprotocol:conversation:other""#;
    let refused = policy
        .buffer(
            &mut outbox,
            &key(&w.f, WORKER),
            &w.checkpoint(other),
            tools(1),
            at(20),
        )
        .unwrap_err();
    assert_eq!(refused.code(), WireCode::InvalidCommand);
    assert!(outbox.pending_actions(WORKER).unwrap().is_empty());
    // …and the Core refuses a Worker that signs it anyway.
    let buffered = w.buffered(tools(1), 20);
    let lease = w.reconnect_and_restart(40, 2);
    let mut object = w
        .rebased(&buffered, 2, &lease, 42)
        .document()
        .as_object()
        .unwrap()
        .clone();
    object.insert(
        "conversationId",
        Value::string("urn:missionweaveprotocol:conversation:other"),
    );
    let signed = with_binding(
        &Value::Object(object),
        &binding_of(&buffered).to_value().unwrap(),
        true,
        &key(&w.f, WORKER),
    );
    let error = w.f.refused(
        &w.engine,
        &verify(&w.f, &signed, 42),
        at(42),
        WireCode::InvalidCommand,
    );
    assert_eq!(error.reason(), "outside_assignment");
    let _ = MAX_SAFE_INTEGER;
}
