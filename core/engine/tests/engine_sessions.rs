//! `ext.missionweaveprotocol.identity.session_open` and Session Epoch fencing (§6.3, §4
//! invariant 4, §11.3, §15.1, §15.2; digest 2.10, A.1, A.2): each rule positive and negative,
//! every Event through the six-stage verifier (Event profile) and `event.schema.json`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod engine_work_fixture;

use engine_work_fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{
    DescribeError, FieldValue, SignedDocumentCodec, SignedDocumentKind, WireCode,
};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand,
};
use missionweaveprotocol_engine::organization::{AGENT_LEASES_KIND, ORGANIZATION_EVENT_KIND};
use missionweaveprotocol_kernel::lease::{LeaseState, LeaseType};
use std::sync::Mutex;

use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, InMemoryStore, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, Transaction,
};

const OPENED: &str = "ext.missionweaveprotocol.identity.session_opened";
const REVOKED: &str = "ext.missionweaveprotocol.core.work_execution_lease_revoked";

fn kind_of(event: &Value) -> &str {
    text(event, "/kind")
}

fn organization_events(engine: &TestEngine) -> usize {
    engine
        .store()
        .list(ORGANIZATION_EVENT_KIND, "")
        .unwrap()
        .len()
}

/// Performs `session_open` for `agent`; returns the verified Events (Organization Event first).
fn open(f: &Fixture, engine: &TestEngine, agent: &str) -> Vec<Value> {
    f.ok(engine, &f.session_open(agent), NOW)
}

fn renew_coordinator(f: &Fixture) -> VerifiedCommand {
    f.by_coordinator("mission.renew_coordinator", 1, r#"{"leaseSeconds": 120}"#)
}

// ---- session_open -------------------------------------------------------------------------

#[test]
fn first_session_is_epoch_one_and_each_opening_adds_one() {
    let f = fixture();
    let engine = f.engine_without_sessions();
    assert_eq!(engine.session_epoch(WORKER).unwrap(), None);
    let events = open(&f, &engine, WORKER);
    assert_eq!(events.len(), 1, "no lease to revoke");
    let event = &events[0];
    assert_eq!(kind_of(event), OPENED);
    // §15.2: Organization-scoped: no Group ID, sequence or aggregate revision (checked by
    // `check_event` too); the vector's payload shape {agentId, sessionEpoch}.
    assert_eq!(text(event, "/payload/agentId"), WORKER);
    assert_eq!(
        event
            .pointer("/payload/sessionEpoch")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    assert_eq!(text(event, "/actor/type"), "service");
    assert_eq!(engine.session_epoch(WORKER).unwrap(), Some(1));
    let second = open(&f, &engine, WORKER);
    assert_eq!(
        second[0]
            .pointer("/payload/sessionEpoch")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(2)
    );
    assert_eq!(engine.session_epoch(WORKER).unwrap(), Some(2));
    // Per Agent: the other Agent has none.
    assert_eq!(engine.session_epoch(COORDINATOR).unwrap(), None);
    assert_eq!(organization_events(&engine), 2);
}

#[test]
fn session_open_needs_an_agent_id() {
    let f = fixture();
    let engine = f.engine_without_sessions();
    for payload in ["{}", r#"{"agentId": 7}"#, r#"{"agentId": "not a uri"}"#] {
        let command = f.verified(
            SERVICE,
            &f.unsigned_service(
                "ext.missionweaveprotocol.identity.session_open",
                &f.action(),
                payload,
            ),
        );
        let e = engine.perform(&command, NOW).unwrap_err();
        assert_eq!(e.wire_code(), WireCode::InvalidCommand, "{payload}");
    }
    assert_eq!(organization_events(&engine), 0);
    assert!(engine.store().list("agent_session", "").unwrap().is_empty());
}

#[test]
fn session_open_envelope_omits_group_and_epochs() {
    // Digest A.1: actor `service`; `groupId`, `sessionEpoch`, `membershipEpoch`,
    // `coordinatorEpoch` forbidden. `command.schema.json` (stage 2 of ingress, and of signing)
    // enforces it, so no such Command reaches the engine.
    let f = fixture();
    let schema = SchemaCatalog::embedded();
    let kind = "ext.missionweaveprotocol.identity.session_open";
    let plain = f.unsigned_service(kind, &f.action(), &format!(r#"{{"agentId": "{WORKER}"}}"#));
    let signed = |unsigned: &Value| {
        let key = &f.keys.iter().find(|(p, _)| p.id == SERVICE).unwrap().1;
        SignedDocumentCodec::new().sign(SignedDocumentKind::Command, unsigned, key)
    };
    let bytes = signed(&plain).unwrap().bytes;
    let verified = CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(&bytes, &f.registry, NOW)
        .unwrap();
    assert!(schema.validate("command", verified.document()).is_ok());
    let one = missionweaveprotocol::json::parse(b"1").unwrap();
    for (member, value) in [
        ("groupId", Value::string(GROUP)),
        ("sessionEpoch", one.clone()),
        ("membershipEpoch", one.clone()),
        ("coordinatorEpoch", one.clone()),
        (
            "actor",
            missionweaveprotocol::json::parse(
                format!(r#"{{"type": "agent", "id": "{WORKER}"}}"#).as_bytes(),
            )
            .unwrap(),
        ),
    ] {
        let mut command = verified.document().clone();
        if let Value::Object(o) = &mut command {
            o.insert(member, value);
        }
        assert!(schema.validate("command", &command).is_err(), "{member}");
        assert!(signed(&command).is_err(), "{member}");
    }
}

#[test]
fn duplicate_session_open_returns_the_original_event() {
    let f = fixture();
    let engine = f.engine_without_sessions();
    let command = f.session_open(WORKER);
    let first = engine.perform(&command, NOW).unwrap();
    f.checked(&first);
    let again = engine.perform(&command, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events, first.events, "byte for byte");
    assert!(again.group_id.is_empty(), "Organization-scoped");
    f.checked(&again);
    assert_eq!(
        engine.session_epoch(WORKER).unwrap(),
        Some(1),
        "not applied twice"
    );
    assert_eq!(organization_events(&engine), 1);
}

#[test]
fn session_open_action_id_reused_with_other_content_collides() {
    let f = fixture();
    let engine = f.engine_without_sessions();
    let action = f.action();
    let kind = "ext.missionweaveprotocol.identity.session_open";
    let a = f.verified(
        SERVICE,
        &f.unsigned_service(kind, &action, &format!(r#"{{"agentId": "{WORKER}"}}"#)),
    );
    let b = f.verified(
        SERVICE,
        &f.unsigned_service(kind, &action, &format!(r#"{{"agentId": "{COORDINATOR}"}}"#)),
    );
    f.ok(&engine, &a, NOW);
    let e = engine.perform(&b, NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::ActionIdCollision);
    assert_eq!(engine.session_epoch(COORDINATOR).unwrap(), None);
}

#[test]
fn expected_revision_binds_the_session() {
    let f = fixture();
    let engine = f.engine_without_sessions();
    let kind = "ext.missionweaveprotocol.identity.session_open";
    let with_revision = |revision: u64| {
        let mut unsigned =
            f.unsigned_service(kind, &f.action(), &format!(r#"{{"agentId": "{WORKER}"}}"#));
        if let Value::Object(o) = &mut unsigned {
            o.insert(
                "expectedRevision",
                missionweaveprotocol::json::parse(revision.to_string().as_bytes()).unwrap(),
            );
        }
        f.verified(SERVICE, &unsigned)
    };
    let e = engine.perform(&with_revision(1), NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::RevisionConflict);
    f.ok(&engine, &with_revision(0), NOW);
    f.ok(&engine, &with_revision(1), NOW);
    assert_eq!(engine.session_epoch(WORKER).unwrap(), Some(2));
}

// ---- Session Epoch fencing ----------------------------------------------------------------

#[test]
fn the_current_session_epoch_passes_and_an_older_one_is_stale() {
    let f = fixture();
    let engine = f.active();
    // Epoch 1 is current: applied.
    f.ok(&engine, &renew_coordinator(&f), NOW);
    open(&f, &engine, COORDINATOR);
    // §4 invariant 4: "A lower epoch MUST be rejected even if its WebSocket is still connected".
    let e = f.refused(
        &engine,
        &renew_coordinator(&f),
        NOW,
        WireCode::AuthStaleSession,
    );
    assert_eq!(e.reason(), "stale_session_epoch");
    assert_eq!(
        e.fields().get("presented_session_epoch"),
        Some(&FieldValue::Integer(1))
    );
    assert_eq!(
        e.fields().get("current_session_epoch"),
        Some(&FieldValue::Integer(2))
    );
    assert_eq!(
        e.fields().get("agent_id"),
        Some(&FieldValue::Text(COORDINATOR.into()))
    );
    assert!(!e.retryable());
    assert!(e.to_string().contains("is fenced"));
    assert_eq!(engine.mission(MISSION).unwrap().unwrap().revision(), 2);
    // The new epoch passes.
    f.use_session_epoch(2);
    f.ok(&engine, &renew_coordinator(&f), NOW);
}

#[test]
fn a_session_epoch_never_issued_is_stale() {
    let f = fixture();
    let engine = f.active();
    f.use_session_epoch(2);
    f.refused(
        &engine,
        &renew_coordinator(&f),
        NOW,
        WireCode::AuthStaleSession,
    );
}

#[test]
fn an_agent_without_a_session_is_not_authenticated() {
    let f = fixture();
    let engine = f.engine_without_sessions();
    // Human Commands carry no Session Epoch and are not fenced (§6.3).
    f.ok(&engine, &f.create(), NOW);
    let e = f.refused(&engine, &renew_coordinator(&f), NOW, WireCode::AuthRequired);
    assert_eq!(e.reason(), "no_session");
    assert_eq!(
        e.fields().get("agent_id"),
        Some(&FieldValue::Text(COORDINATOR.into()))
    );
    // Once the session is open, the same kind passes.
    open(&f, &engine, COORDINATOR);
    f.ok(&engine, &renew_coordinator(&f), NOW);
}

#[test]
fn service_and_human_commands_are_not_session_fenced() {
    let f = fixture();
    let engine = f.engine_without_sessions();
    f.ok(&engine, &f.create(), NOW);
    // A service-issued terminate carries no epochs (digest A.1) and no session exists at all.
    f.ok(
        &engine,
        &f.command("mission.terminate", SERVICE, "", r#"{"reason": "policy"}"#),
        NOW,
    );
}

#[test]
fn a_duplicate_after_a_new_session_returns_its_original_event() {
    // Dedup precedes fencing (§15.1): the same signed Command answers with its original Event.
    let f = fixture();
    let engine = f.active();
    let renew = renew_coordinator(&f);
    let first = engine.perform(&renew, NOW).unwrap();
    open(&f, &engine, COORDINATOR);
    let again = engine.perform(&renew, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events, first.events);
}

// ---- lease revocation (§11.3) -------------------------------------------------------------

#[test]
fn a_new_session_revokes_the_execution_lease_and_requeues_the_item() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, old_lease) = execution(&engine, W1);
    let (before, _) = stored(&engine, W1);
    let events = open(&f, &engine, WORKER);
    assert_eq!(
        events.iter().map(kind_of).collect::<Vec<_>>(),
        vec![OPENED, REVOKED]
    );
    let revoked = &events[1];
    assert_eq!(text(revoked, "/groupId"), GROUP);
    assert_eq!(text(revoked, "/workItemId"), W1);
    assert_eq!(text(revoked, "/payload/revokedLeaseId"), old_lease);
    assert_eq!(text(revoked, "/payload/revokedLeaseType"), "execution");
    assert_eq!(text(revoked, "/payload/previousState"), "active");
    assert_eq!(text(revoked, "/payload/nextState"), "queued");
    assert_eq!(
        revoked
            .pointer("/aggregateRevision")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(before + 1)
    );
    let (_, item) = stored(&engine, W1);
    assert_eq!(item.state.as_str(), "queued");
    let execution_lease = item.execution_lease.as_ref().unwrap();
    assert_eq!(execution_lease.state(), LeaseState::Revoked);
    let replacement = item.ownership_lease.as_ref().unwrap();
    assert_eq!(replacement.lease_type(), LeaseType::Ownership);
    assert_eq!(replacement.state(), LeaseState::Active);
    assert_eq!(replacement.binding().session_epoch, 2);
    assert_eq!(
        replacement.ownership_epoch(),
        Some(epoch),
        "ownership survives"
    );
    assert_eq!(text(revoked, "/payload/leaseId"), replacement.lease_id());
    whole_log(&f, &engine);

    // The old runtime is fenced; the new one starts under a new lease (§11.3).
    let renew = |lease: &str| {
        f.by_worker(
            "ext.missionweaveprotocol.core.work_execution_lease_renew",
            WORKER,
            W1,
            epoch,
            lease,
            "",
        )
    };
    f.refused(&engine, &renew(&old_lease), NOW, WireCode::AuthStaleSession);
    f.use_session_epoch(2);
    f.refused(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &old_lease, ""),
        NOW,
        WireCode::WorkLeaseExpired,
    );
    let new_lease = replacement.lease_id().to_owned();
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &new_lease, ""),
        NOW,
    );
    assert_eq!(item_state(&engine, W1), "active");
}

#[test]
fn a_new_session_rebinds_queued_and_blocked_items() {
    let f = fixture();
    let engine = f.active();
    f.queued(&engine, W1);
    f.active_item(&engine, W2);
    let (epoch2, lease2) = execution(&engine, W2);
    f.ok(
        &engine,
        &f.by_worker(
            "work.block",
            WORKER,
            W2,
            epoch2,
            &lease2,
            &format!(
                r#""reason":"needs input",{}"#,
                Fixture::checkpoint_members()
            ),
        ),
        NOW,
    );
    let (epoch1, old_ownership) = ownership(&engine, W1);
    let (_, old_item) = stored(&engine, W1);
    let events = open(&f, &engine, WORKER);
    assert_eq!(
        events.iter().map(kind_of).collect::<Vec<_>>(),
        vec![OPENED, REVOKED, REVOKED]
    );
    let (_, queued) = stored(&engine, W1);
    assert_eq!(queued.state.as_str(), "queued");
    let lease = queued.ownership_lease.as_ref().unwrap();
    assert_eq!(lease.binding().session_epoch, 2);
    // A replacement never lasts longer than the lease it replaces.
    assert_eq!(
        lease.window().expires_at,
        old_item
            .ownership_lease
            .as_ref()
            .unwrap()
            .window()
            .expires_at
    );
    let (_, blocked) = stored(&engine, W2);
    assert_eq!(blocked.state.as_str(), "blocked");
    let blocked_lease = blocked.ownership_lease.as_ref().unwrap();
    assert_eq!(blocked_lease.lease_type(), LeaseType::Blocked);
    assert_eq!(blocked_lease.binding().session_epoch, 2);
    whole_log(&f, &engine);

    f.use_session_epoch(2);
    // The revoked ownership lease no longer starts work; its replacement does.
    f.refused(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch1, &old_ownership, ""),
        NOW,
        WireCode::WorkLeaseExpired,
    );
    let new_lease = lease.lease_id().to_owned();
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch1, &new_lease, ""),
        NOW,
    );
}

#[test]
fn a_session_without_leases_revokes_nothing() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let before = stored(&engine, W1);
    // The Coordinator holds no WorkItem lease: only the Organization Event.
    let events = open(&f, &engine, COORDINATOR);
    assert_eq!(events.len(), 1);
    assert_eq!(
        stored(&engine, W1),
        before,
        "another Agent's lease is untouched"
    );
}

#[test]
fn released_and_lapsed_leases_leave_the_index() {
    let f = fixture();
    let engine = f.active();
    let index = |engine: &TestEngine| -> Vec<String> {
        engine
            .store()
            .aggregate(&AggregateKey::new(AGENT_LEASES_KIND, WORKER))
            .unwrap()
            .map(|a| {
                missionweaveprotocol::json::parse(&a.value)
                    .unwrap()
                    .get("workItemIds")
                    .unwrap()
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    f.submitted_item(&engine, W1);
    // Submission released the Execution Lease: the item left the index.
    assert!(index(&engine).is_empty());
    f.queued(&engine, W2);
    assert_eq!(index(&engine), vec![W2.to_owned()]);
    // An hour later the ownership lease has lapsed: no active lease, nothing revoked, and the
    // index is emptied.
    let later = missionweaveprotocol_kernel::unix_millis::UnixMillis(NOW.0 + 3_600_000);
    let performed = engine.perform(&f.session_open(WORKER), later).unwrap();
    assert_eq!(performed.events.len(), 1);
    f.checked(&performed);
    assert!(index(&engine).is_empty());
}

#[test]
fn two_engines_revoke_identically() {
    let f = fixture();
    let (a, b) = (f.engine_without_sessions(), f.engine_without_sessions());
    let both = |command: &VerifiedCommand| {
        let (ea, eb) = (
            a.perform(command, NOW).unwrap(),
            b.perform(command, NOW).unwrap(),
        );
        f.checked(&ea);
        assert_eq!(ea.events, eb.events, "byte-identical Events");
    };
    both(&f.session_open(COORDINATOR));
    both(&f.session_open(WORKER));
    both(&f.create());
    both(&f.authorize(W1, &[]));
    both(&f.offer(W1, &[WORKER], "r1"));
    both(&f.accept(WORKER, W1));
    let (epoch, lease) = ownership(&a, W1);
    both(&f.by_worker("work.start", WORKER, W1, epoch, &lease, ""));
    both(&f.session_open(WORKER));
    assert_eq!(item_state(&a, W1), "queued");
    assert_eq!(
        a.store().replay(GROUP, 0, 1000).unwrap().events,
        b.store().replay(GROUP, 0, 1000).unwrap().events
    );
    assert_eq!(stored(&a, W1), stored(&b, W1));
}

// ---- the commit-time check of the fence ---------------------------------------------------

/// A store that runs `hook` (another engine's commit) just before the next commit: the
/// interleaving a concurrent `session_open` produces between a decision and its commit.
struct Interleave<'a> {
    inner: &'a InMemoryStore,
    hook: Mutex<Option<Box<dyn FnOnce() + 'a>>>,
}

impl Store for Interleave<'_> {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        let hook = self.hook.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        self.inner.commit(tx)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.inner.aggregate(key)
    }
    fn list(&self, kind: &str, prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.inner.list(kind, prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.inner.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.inner.head(group)
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        self.inner.replay(group, after, limit)
    }
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.inner.archive_before(group, before, snapshot)
    }
}

/// Renews the Coordinator lease at Session Epoch 1 while `session_open(opened)` commits
/// between the decision and its commit.
fn renew_racing_open(opened: &str) -> Result<usize, WireCode> {
    let f = fixture();
    let inner = InMemoryStore::new();
    let other = Engine::new(
        &inner,
        EventIssuer::new(authority(), f.authority_key.clone()),
        SequentialEventIds::new("urn:missionweaveprotocol:event:other-"),
    );
    f.open_sessions(&other);
    f.checked(&other.perform(&f.create(), NOW).unwrap());
    let open = f.session_open(opened);
    let store = Interleave {
        inner: &inner,
        hook: Mutex::new(Some(Box::new(|| {
            f.checked(&other.perform(&open, NOW).unwrap());
        }))),
    };
    let engine = Engine::new(
        &store,
        EventIssuer::new(authority(), f.authority_key.clone()),
        SequentialEventIds::new("urn:missionweaveprotocol:event:racing-"),
    );
    let result = engine.perform(&renew_coordinator(&f), NOW);
    let renewals = inner
        .replay(GROUP, 0, 100)
        .unwrap()
        .events
        .iter()
        .filter(|r| text(&f.check_event(r), "/kind") == "mission.coordinator.renewed")
        .count();
    result.map(|_| renewals).map_err(|e| e.wire_code())
}

#[test]
fn a_session_opened_before_the_commit_fences_the_decision() {
    // The decision read epoch 1; the commit-time check of the session sees epoch 2, the engine
    // decides again and refuses: no Command of the fenced session commits after the opening.
    assert_eq!(
        renew_racing_open(COORDINATOR),
        Err(WireCode::AuthStaleSession)
    );
    // Another Agent's session does not disturb it.
    assert_eq!(renew_racing_open(WORKER), Ok(1));
}
