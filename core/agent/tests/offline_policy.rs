//! The Worker side of bounded offline execution (§11.5, digest 2.17): only reversible progress
//! of the active assignment, inside the grace window and the bounds, is bound, signed and
//! queued; every refusal is typed, atomic (no count, no queue entry) and has a §19 code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{
    Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind, WireCode,
};
use missionweaveprotocol_agent::offline::{
    InMemoryOutbox, OfflineAssignment, OfflineExecutionPolicy, OfflineOutbox, OutboxError,
    RebaseInput, rebase_offline_command,
};
use missionweaveprotocol_kernel::offline::{
    OFFLINE_EXECUTION_EXTENSION, OFFLINE_EXECUTION_EXTENSION_VERSION, OfflineError, OfflineLimits,
    OfflineProgressBinding, is_reversible, offline_binding_of,
};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const AGENT: &str = "urn:missionweaveprotocol:agent:worker";
const GROUP: &str = "urn:missionweaveprotocol:group:finance";
const ITEM: &str = "urn:missionweaveprotocol:work:ledger";
const LEASE: &str = "urn:missionweaveprotocol:lease:exec-1";
const CONVERSATION: &str = "urn:missionweaveprotocol:conversation:ledger";
const T0: UnixMillis = UnixMillis(1_784_107_800_000); // 2026-07-15T09:30:00Z

fn at(seconds: u64) -> UnixMillis {
    T0.saturating_add_ms(seconds * 1000)
}

fn key() -> SigningKey {
    SigningKey::from_seed("urn:missionweaveprotocol:key:worker-1", &[7; 32])
}

fn assignment() -> OfflineAssignment {
    OfflineAssignment {
        agent_id: AGENT.to_owned(),
        group_id: GROUP.to_owned(),
        work_item_id: ITEM.to_owned(),
        conversation_id: Some(CONVERSATION.to_owned()),
        session_epoch: 3,
        ownership_epoch: 2,
        execution_lease_id: LEASE.to_owned(),
        execution_lease_expires_at: at(600),
    }
}

fn limits() -> OfflineLimits {
    OfflineLimits {
        max_disconnect_grace_ms: 300_000,
        max_actions: 2,
        max_usage: Resources::ZERO
            .with(Dimension::ModelTokens, 4)
            .with(Dimension::ComputeSeconds, 2),
    }
}

fn policy() -> OfflineExecutionPolicy {
    OfflineExecutionPolicy::new(assignment(), at(0), limits()).unwrap()
}

fn command(n: u32, kind: &str, extra: &str, payload: &str) -> Value {
    json::parse(
        format!(
            r#"{{"protocolVersion":"0.1","actionId":"urn:uuid:00000000-0000-4000-8000-00000000000{n}",
            "actor":{{"type":"agent","id":"{AGENT}"}},"sessionEpoch":3,"membershipEpoch":1,
            "groupId":"{GROUP}","workItemId":"{ITEM}","kind":"{kind}",{extra}
            "correlationId":"urn:missionweaveprotocol:correlation:1",
            "issuedAt":"2026-07-15T09:30:00Z","payload":{payload}}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

fn checkpoint(n: u32) -> Value {
    command(
        n,
        "work.checkpoint",
        "",
        &format!(
            r#"{{"ownershipEpoch":2,"leaseId":"{LEASE}","checkpoint":{{"currentPhase":"draft",
            "completedMilestones":[],"nextCheckpoint":"review","blockers":[],
            "updatedCompletionEstimate":"2026-07-15T11:00:00Z","evidenceIds":[]}}}}"#
        ),
    )
}

fn message(n: u32, content: &str) -> Value {
    command(
        n,
        "message.post",
        &format!(r#""conversationId":"{CONVERSATION}","#),
        &format!(r#"{{"messageId":"urn:missionweaveprotocol:message:{n}","content":"{content}"}}"#),
    )
}

fn usage(tokens: u64, compute: u64) -> Resources {
    Resources::ZERO
        .with(Dimension::ModelTokens, tokens)
        .with(Dimension::ComputeSeconds, compute)
}

fn verify(document: &Value) {
    let key = key();
    let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
    builder
        .add_key(
            key.key_id(),
            Principal::new(PrincipalType::Agent, AGENT),
            &key.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .unwrap();
    let (_, registry) = builder.build().unwrap();
    let registry = std::sync::Arc::new(registry);
    SignedDocumentCodec::new()
        .verify(
            SignedDocumentKind::Command,
            &json::canonical_bytes(document).unwrap(),
            &registry,
        )
        .unwrap();
}

#[test]
fn reversible_progress_is_bound_signed_and_queued() {
    let mut p = policy();
    let mut outbox = InMemoryOutbox::new();
    let signed = p
        .buffer(&mut outbox, &key(), &checkpoint(1), usage(2, 1), at(30))
        .unwrap();
    verify(&signed);
    let envelope = signed
        .pointer(&format!("/extensions/{OFFLINE_EXECUTION_EXTENSION}"))
        .unwrap();
    assert_eq!(
        envelope.get("critical").and_then(Value::as_bool),
        Some(true)
    );
    assert_eq!(
        envelope.get("version").and_then(Value::as_str),
        Some(OFFLINE_EXECUTION_EXTENSION_VERSION)
    );
    let binding = offline_binding_of(&signed).unwrap().unwrap();
    assert_eq!(binding.agent_id, AGENT);
    assert_eq!(binding.execution_lease_id, LEASE);
    assert_eq!((binding.session_epoch, binding.ownership_epoch), (3, 2));
    assert_eq!(binding.disconnected_at, at(0));
    assert_eq!(binding.buffered_at, at(30));
    assert_eq!(binding.grace_deadline, at(300));
    assert_eq!(binding.resource_usage_delta, usage(2, 1));
    let message = p
        .buffer(
            &mut outbox,
            &key(),
            &message(2, "draft ready"),
            Resources::ZERO,
            at(40),
        )
        .unwrap();
    verify(&message);
    assert_eq!(
        outbox.pending_actions(AGENT).unwrap(),
        vec![signed, message]
    );
    assert_eq!(p.buffered_actions().len(), 2);
    assert_eq!(p.cumulative_usage(), usage(2, 1));
    outbox
        .mark_action_sent(AGENT, "urn:uuid:00000000-0000-4000-8000-000000000001")
        .unwrap();
    assert_eq!(outbox.pending_actions(AGENT).unwrap().len(), 1);
}

#[test]
fn buffering_is_idempotent_per_action_id() {
    let mut p = policy();
    let mut outbox = InMemoryOutbox::new();
    let first = p
        .buffer(&mut outbox, &key(), &checkpoint(1), usage(1, 0), at(30))
        .unwrap();
    let again = p
        .buffer(&mut outbox, &key(), &checkpoint(1), usage(1, 0), at(31))
        .unwrap();
    assert!(first.json_eq(&again));
    assert_eq!(p.cumulative_usage(), usage(1, 0), "counted once");
    assert_eq!(outbox.pending_actions(AGENT).unwrap().len(), 1);
    // Other content under the same Action ID collides.
    let mut other = checkpoint(1);
    if let Value::Object(o) = &mut other {
        o.insert("issuedAt", Value::string("2026-07-15T09:31:00Z"));
    }
    let error = p
        .buffer(&mut outbox, &key(), &other, usage(1, 0), at(32))
        .unwrap_err();
    assert_eq!(error.code(), WireCode::ActionIdCollision);
    // The outbox itself refuses a collision too.
    assert!(matches!(
        outbox.enqueue_action(
            AGENT,
            "urn:uuid:00000000-0000-4000-8000-000000000001",
            &Value::Null
        ),
        Err(OutboxError::Collision { .. })
    ));
}

#[test]
fn the_grace_window_is_rechecked_on_every_buffer() {
    let mut p = policy();
    let mut outbox = InMemoryOutbox::new();
    p.buffer(
        &mut outbox,
        &key(),
        &checkpoint(1),
        Resources::ZERO,
        at(300),
    )
    .unwrap();
    let error = p
        .buffer(
            &mut outbox,
            &key(),
            &message(2, "late"),
            Resources::ZERO,
            at(301),
        )
        .unwrap_err();
    assert!(matches!(error, OfflineError::OutsideGrace { .. }));
    assert_eq!(error.code(), WireCode::WorkLeaseExpired);
    // Before the disconnect is outside the window too.
    let mut p = OfflineExecutionPolicy::new(assignment(), at(10), limits()).unwrap();
    assert!(matches!(
        p.buffer(
            &mut outbox,
            &key(),
            &message(3, "early"),
            Resources::ZERO,
            at(5)
        ),
        Err(OfflineError::OutsideGrace { .. })
    ));
    // The grace deadline never passes the lease expiry.
    let p = OfflineExecutionPolicy::new(assignment(), at(500), limits()).unwrap();
    assert_eq!(p.grace_deadline(), at(600));
    // A lease that lapsed before the disconnect allows nothing.
    let error = OfflineExecutionPolicy::new(assignment(), at(600), limits()).unwrap_err();
    assert_eq!(error.code(), WireCode::WorkLeaseExpired);
}

#[test]
fn action_and_usage_bounds_are_atomic() {
    let mut p = policy();
    let mut outbox = InMemoryOutbox::new();
    // Usage beyond the bound: nothing counted, nothing queued.
    let error = p
        .buffer(&mut outbox, &key(), &checkpoint(1), usage(5, 0), at(10))
        .unwrap_err();
    assert_eq!(error, OfflineError::UsageExceeded(Dimension::ModelTokens));
    assert_eq!(error.code(), WireCode::BudgetExceeded);
    assert!(outbox.pending_actions(AGENT).unwrap().is_empty());
    assert!(p.cumulative_usage().is_zero());
    p.buffer(&mut outbox, &key(), &checkpoint(1), usage(4, 1), at(10))
        .unwrap();
    let error = p
        .buffer(&mut outbox, &key(), &message(2, "x"), usage(0, 2), at(11))
        .unwrap_err();
    assert_eq!(
        error,
        OfflineError::UsageExceeded(Dimension::ComputeSeconds)
    );
    p.buffer(&mut outbox, &key(), &message(2, "x"), usage(0, 1), at(11))
        .unwrap();
    // Two actions is the bound.
    let error = p
        .buffer(
            &mut outbox,
            &key(),
            &message(3, "y"),
            Resources::ZERO,
            at(12),
        )
        .unwrap_err();
    assert_eq!(error, OfflineError::TooManyActions { max_actions: 2 });
    assert_eq!(error.code(), WireCode::RateLimited);
    assert_eq!(outbox.pending_actions(AGENT).unwrap().len(), 2);
}

#[test]
fn irreversible_new_and_external_work_is_refused() {
    let mut outbox = InMemoryOutbox::new();
    for kind in [
        "work.submit",
        "work.start",
        "work.accept_offer",
        "artifact.publish",
        "work.fail",
    ] {
        let mut p = policy();
        let error = p
            .buffer(
                &mut outbox,
                &key(),
                &command(1, kind, "", "{}"),
                Resources::ZERO,
                at(10),
            )
            .unwrap_err();
        assert!(
            matches!(error, OfflineError::NotReversible { .. }),
            "{kind}"
        );
        assert_eq!(error.code(), WireCode::InvalidCommand);
        assert!(!is_reversible(kind));
    }
    let mut p = policy();
    let external = Resources::ZERO.with(Dimension::ExternalSideEffects, 1);
    let error = p
        .buffer(&mut outbox, &key(), &checkpoint(1), external, at(10))
        .unwrap_err();
    assert!(matches!(error, OfflineError::ExternalEffect { .. }));
    let secret = command(
        2,
        "message.post",
        &format!(r#""conversationId":"{CONVERSATION}","#),
        r#"{"messageId":"urn:missionweaveprotocol:message:2","content":"x","attachments":[{"api_key":"k"}]}"#,
    );
    let error = p
        .buffer(&mut outbox, &key(), &secret, Resources::ZERO, at(10))
        .unwrap_err();
    assert_eq!(
        error,
        OfflineError::ExternalEffect {
            detail: "/payload/attachments/0/api_key".to_owned()
        }
    );
    assert!(outbox.pending_actions(AGENT).unwrap().is_empty());
}

#[test]
fn commands_outside_the_assignment_are_refused() {
    let mut outbox = InMemoryOutbox::new();
    let replace = |value: &Value, from: &str, to: &str| {
        let text = String::from_utf8(json::canonical_bytes(value).unwrap()).unwrap();
        json::parse(text.replace(from, to).as_bytes()).unwrap()
    };
    let cases = [
        (
            replace(&checkpoint(1), ITEM, "urn:missionweaveprotocol:work:other"),
            "workItemId",
        ),
        (
            replace(
                &checkpoint(1),
                GROUP,
                "urn:missionweaveprotocol:group:other",
            ),
            "groupId",
        ),
        (
            replace(
                &checkpoint(1),
                AGENT,
                "urn:missionweaveprotocol:agent:other",
            ),
            "actor",
        ),
        (
            replace(
                &checkpoint(1),
                LEASE,
                "urn:missionweaveprotocol:lease:other",
            ),
            "leaseId",
        ),
        (
            replace(
                &checkpoint(1),
                "\"ownershipEpoch\":2",
                "\"ownershipEpoch\":1",
            ),
            "ownershipEpoch",
        ),
        (
            replace(&checkpoint(1), "\"sessionEpoch\":3", "\"sessionEpoch\":4"),
            "sessionEpoch",
        ),
        (
            replace(
                &message(1, "x"),
                CONVERSATION,
                "urn:missionweaveprotocol:conversation:other",
            ),
            "conversationId",
        ),
    ];
    for (command, member) in cases {
        let mut p = policy();
        let error = p
            .buffer(&mut outbox, &key(), &command, Resources::ZERO, at(10))
            .unwrap_err();
        assert_eq!(
            error,
            OfflineError::OutsideAssignment { member },
            "{member}"
        );
        assert_eq!(error.code(), WireCode::InvalidCommand);
    }
    // A caller-supplied binding is never trusted.
    let mut p = policy();
    let signed = p
        .buffer(&mut outbox, &key(), &checkpoint(1), Resources::ZERO, at(10))
        .unwrap();
    let mut again = signed.as_object().unwrap().clone();
    again.insert(
        "actionId",
        Value::string("urn:uuid:00000000-0000-4000-8000-000000000009"),
    );
    let error = p
        .buffer(
            &mut outbox,
            &key(),
            &Value::Object(again),
            Resources::ZERO,
            at(11),
        )
        .unwrap_err();
    assert!(matches!(error, OfflineError::InvalidBinding { .. }));
}

#[test]
fn limits_and_assignment_are_validated() {
    let bad = [
        OfflineLimits {
            max_disconnect_grace_ms: 0,
            ..limits()
        },
        OfflineLimits {
            max_actions: 0,
            ..limits()
        },
    ];
    for l in bad {
        assert!(matches!(
            OfflineExecutionPolicy::new(assignment(), at(0), l),
            Err(OfflineError::InvalidArgument(_))
        ));
    }
    let unowned = OfflineAssignment {
        ownership_epoch: 0,
        ..assignment()
    };
    assert_eq!(
        OfflineExecutionPolicy::new(unowned, at(0), limits()).unwrap_err(),
        OfflineError::NotActive
    );
    let unleased = OfflineAssignment {
        execution_lease_id: String::new(),
        ..assignment()
    };
    assert!(OfflineExecutionPolicy::new(unleased, at(0), limits()).is_err());
}

#[test]
fn the_binding_round_trips_and_rejects_malformed_data() {
    let mut p = policy();
    let mut outbox = InMemoryOutbox::new();
    let signed = p
        .buffer(&mut outbox, &key(), &checkpoint(1), usage(1, 1), at(30))
        .unwrap();
    let binding = offline_binding_of(&signed).unwrap().unwrap();
    let value = binding.to_value().unwrap();
    assert_eq!(OfflineProgressBinding::from_value(&value).unwrap(), binding);
    let edit = |member: &str, replacement: Value| {
        let mut o = value.as_object().unwrap().clone();
        o.insert(member, replacement);
        OfflineProgressBinding::from_value(&Value::Object(o))
    };
    // Unordered window, unknown member, wrong type, zero epoch, external actions.
    assert!(edit("bufferedAt", Value::string("2026-07-15T09:29:00Z")).is_err());
    assert!(edit("graceDeadline", Value::string("2026-07-15T10:30:00Z")).is_err());
    assert!(edit("surprise", Value::Bool(true)).is_err());
    assert!(edit("sessionEpoch", Value::string("3")).is_err());
    assert!(edit("ownershipEpoch", json::parse(b"0").unwrap()).is_err());
    assert!(edit("disconnectedAt", Value::string("yesterday")).is_err());
    let mut delta = value
        .get("resourceUsageDelta")
        .unwrap()
        .as_object()
        .unwrap()
        .clone();
    delta.insert("externalActions", json::parse(b"1").unwrap());
    assert!(matches!(
        edit("resourceUsageDelta", Value::Object(delta)),
        Err(OfflineError::ExternalEffect { .. })
    ));
    assert!(OfflineProgressBinding::from_value(&Value::Null).is_err());
}

#[test]
fn rebasing_keeps_the_binding_and_re_signs_for_the_current_session() {
    let mut p = policy();
    let mut outbox = InMemoryOutbox::new();
    let signed = p
        .buffer(&mut outbox, &key(), &checkpoint(1), usage(1, 0), at(30))
        .unwrap();
    let input = RebaseInput {
        session_epoch: 4,
        membership_epoch: 2,
        issued_at: at(900),
        execution_lease_id: Some("urn:missionweaveprotocol:lease:exec-2"),
    };
    let rebased = rebase_offline_command(&signed, &key(), &input).unwrap();
    verify(&rebased);
    assert_eq!(
        offline_binding_of(&rebased).unwrap(),
        offline_binding_of(&signed).unwrap(),
        "the binding is preserved"
    );
    let n = |p: &str| {
        rebased
            .pointer(p)
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64()
            .unwrap()
    };
    assert_eq!((n("/sessionEpoch"), n("/membershipEpoch")), (4, 2));
    assert_eq!(
        rebased.get("issuedAt").and_then(Value::as_str),
        Some("2026-07-15T09:45:00.000Z")
    );
    assert_eq!(
        rebased
            .pointer("/signature/createdAt")
            .and_then(Value::as_str),
        Some("2026-07-15T09:45:00.000Z")
    );
    assert_eq!(
        rebased.pointer("/payload/leaseId").and_then(Value::as_str),
        Some("urn:missionweaveprotocol:lease:exec-2")
    );
    // Refusals: no binding, non-reversible kind, an older session, a lease for a Message,
    // another Agent's key on the actor.
    let plain = rebase_offline_command(&checkpoint(2), &key(), &input).unwrap_err();
    assert!(matches!(plain, OfflineError::InvalidBinding { .. }));
    let mut submit = signed.as_object().unwrap().clone();
    submit.insert("kind", Value::string("work.submit"));
    assert!(matches!(
        rebase_offline_command(&Value::Object(submit), &key(), &input),
        Err(OfflineError::NotReversible { .. })
    ));
    let older = RebaseInput {
        session_epoch: 2,
        ..input.clone()
    };
    assert!(rebase_offline_command(&signed, &key(), &older).is_err());
    let message = p
        .buffer(
            &mut outbox,
            &key(),
            &message(2, "x"),
            Resources::ZERO,
            at(31),
        )
        .unwrap();
    assert!(rebase_offline_command(&message, &key(), &input).is_err());
    let for_message = RebaseInput {
        execution_lease_id: None,
        ..input
    };
    verify(&rebase_offline_command(&message, &key(), &for_message).unwrap());
    let mut stranger = signed.as_object().unwrap().clone();
    stranger.insert(
        "actor",
        json::parse(br#"{"type":"agent","id":"urn:missionweaveprotocol:agent:other"}"#).unwrap(),
    );
    assert_eq!(
        rebase_offline_command(&Value::Object(stranger), &key(), &for_message).unwrap_err(),
        OfflineError::OutsideAssignment { member: "actor" }
    );
}
