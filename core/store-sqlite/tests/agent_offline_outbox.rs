//! The SQLite agent store as the offline outbox (§11.5): Commands buffered by
//! `OfflineExecutionPolicy` are durable across a reopen, idempotent per Action ID, a collision
//! is refused, and marking sent is idempotent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_agent::offline::{
    OfflineAssignment, OfflineExecutionPolicy, OfflineOutbox, OutboxError,
};
use missionweaveprotocol_kernel::offline::OfflineLimits;
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;

const AGENT: &str = "urn:missionweaveprotocol:agent:worker";
const GROUP: &str = "urn:missionweaveprotocol:group:finance";
const ITEM: &str = "urn:missionweaveprotocol:work:ledger";
const LEASE: &str = "urn:missionweaveprotocol:lease:exec-1";
const T0: UnixMillis = UnixMillis(1_784_107_800_000); // 2026-07-15T09:30:00Z

/// Canonical bytes (RFC 8785): the store keeps Commands canonically, so member order differs
/// from the buffered `Value` while the content is the same.
fn canonical(values: Vec<Value>) -> Vec<Vec<u8>> {
    values
        .iter()
        .map(|v| json::canonical_bytes(v).unwrap())
        .collect()
}

fn at(seconds: u64) -> UnixMillis {
    T0.saturating_add_ms(seconds * 1000)
}

fn policy() -> OfflineExecutionPolicy {
    OfflineExecutionPolicy::new(
        OfflineAssignment {
            agent_id: AGENT.to_owned(),
            group_id: GROUP.to_owned(),
            work_item_id: ITEM.to_owned(),
            conversation_id: None,
            session_epoch: 3,
            ownership_epoch: 2,
            execution_lease_id: LEASE.to_owned(),
            execution_lease_expires_at: at(600),
        },
        at(0),
        OfflineLimits {
            max_disconnect_grace_ms: 300_000,
            max_actions: 4,
            max_usage: Resources::ZERO.with(Dimension::ModelTokens, 10),
        },
    )
    .unwrap()
}

fn checkpoint(n: u32, phase: &str) -> Value {
    json::parse(
        format!(
            r#"{{"protocolVersion":"0.1","actionId":"urn:uuid:00000000-0000-4000-8000-00000000000{n}",
            "actor":{{"type":"agent","id":"{AGENT}"}},"sessionEpoch":3,"membershipEpoch":1,
            "groupId":"{GROUP}","workItemId":"{ITEM}","kind":"work.checkpoint",
            "correlationId":"urn:missionweaveprotocol:correlation:1",
            "issuedAt":"2026-07-15T09:30:00Z","payload":{{"ownershipEpoch":2,"leaseId":"{LEASE}",
            "checkpoint":{{"currentPhase":"{phase}","completedMilestones":[],"nextCheckpoint":"review",
            "blockers":[],"updatedCompletionEstimate":"2026-07-15T11:00:00Z","evidenceIds":[]}}}}}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

#[test]
fn buffered_commands_are_durable_idempotent_and_marked_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.sqlite");
    let key = SigningKey::from_seed("urn:missionweaveprotocol:key:worker-1", &[7; 32]);
    let tokens = |n| Resources::ZERO.with(Dimension::ModelTokens, n);
    let (first, second) = {
        let mut store = SqliteAgentStore::open(&path).unwrap();
        let mut p = policy();
        let first = p
            .buffer(&mut store, &key, &checkpoint(1, "draft"), tokens(2), at(30))
            .unwrap();
        let second = p
            .buffer(
                &mut store,
                &key,
                &checkpoint(2, "review"),
                tokens(3),
                at(40),
            )
            .unwrap();
        // The same Command again: nothing new is queued.
        let again = p
            .buffer(&mut store, &key, &checkpoint(1, "draft"), tokens(2), at(30))
            .unwrap();
        assert_eq!(again, first);
        (first, second)
    };
    // A restart: the queue is still there, in order.
    let mut store = SqliteAgentStore::open(&path).unwrap();
    assert_eq!(
        canonical(OfflineOutbox::pending_actions(&store, AGENT).unwrap()),
        canonical(vec![first.clone(), second.clone()])
    );
    // Other content under a buffered Action ID is a collision (§15.1), nothing queued.
    let mut other = first.clone();
    if let Value::Object(o) = &mut other {
        o.insert("kind", Value::string("message.post"));
    }
    let e = OfflineOutbox::enqueue_action(
        &mut store,
        AGENT,
        "urn:uuid:00000000-0000-4000-8000-000000000001",
        &other,
    )
    .unwrap_err();
    assert!(matches!(e, OutboxError::Collision { .. }), "{e}");
    // Marking is idempotent; an unknown Action ID is ignored (the trait's contract).
    for _ in 0..2 {
        OfflineOutbox::mark_action_sent(
            &mut store,
            AGENT,
            "urn:uuid:00000000-0000-4000-8000-000000000001",
        )
        .unwrap();
    }
    OfflineOutbox::mark_action_sent(&mut store, AGENT, "urn:uuid:never-queued").unwrap();
    assert!(OfflineOutbox::mark_action_sent(&mut store, "", "x").is_err());
    assert_eq!(
        canonical(OfflineOutbox::pending_actions(&store, AGENT).unwrap()),
        canonical(vec![second])
    );
    // A sent action is never queued again, even after a restart.
    drop(store);
    let mut store = SqliteAgentStore::open(&path).unwrap();
    OfflineOutbox::enqueue_action(
        &mut store,
        AGENT,
        "urn:uuid:00000000-0000-4000-8000-000000000001",
        &first,
    )
    .unwrap();
    assert_eq!(
        OfflineOutbox::pending_actions(&store, AGENT).unwrap().len(),
        1
    );
}
