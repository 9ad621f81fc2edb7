//! Retention and archival (§7.4, §15.2, §16; digest 2.8, 2.11): `…core.group_archive` with a
//! signed Group Snapshot, `group.snapshot.created` + `group.archived`, writes refused after
//! archival, and replay across `CURSOR_TOO_OLD`: the Core's replay read answers with
//! the snapshot and an Agent's replay continues from it. Every Event is verified with the
//! six-stage verifier and `event.schema.json` (`Fixture::checked`); every refusal is checked
//! to append nothing, store no snapshot and leave the Group `active`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../engine/tests/engine_membership_fixture.rs"]
mod members;

use std::sync::Arc;

use members::*;
use missionweaveprotocol::json::{self, Object, Value};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{DescribeError, FieldValue, Principal, PrincipalType, WireCode};
use missionweaveprotocol_agent::replay::CoreReplaySource;
use missionweaveprotocol_agent::replay::{
    AgentReplay, EventProjection, MemoryAgentStore, ReplayError, ReplayEvent,
};
use missionweaveprotocol_engine::archive::{
    GROUP_ARCHIVE, SNAPSHOT_KIND, SnapshotDraft, group_event_ids, read_snapshot,
};
use missionweaveprotocol_engine::error::EngineError;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::service::{Core, ReplayRead};
use missionweaveprotocol_engine::store::{AggregateKey, InMemoryStore, Store, Transaction};
use missionweaveprotocol_kernel::scheduler::{Scheduler, SchedulerPolicy};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const SNAPSHOT_ID: &str = "urn:missionweaveprotocol:snapshot:finance-final";
const LATER: UnixMillis = UnixMillis(NOW.0 + 60_000);

fn policy_entry() -> Value {
    json::parse(
        format!(
            r#"{{"entryId": "urn:missionweaveprotocol:policy-log:1",
            "decision": "verified the exact signed human decision before archiving",
            "actor": {{"type": "service", "id": "{AUTHORITY}"}},
            "occurredAt": "{NOW_TEXT}", "details": {{"missionState": "final"}}}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

/// The draft of a snapshot of `GROUP` covering its whole current log.
fn draft(store: &dyn Store) -> SnapshotDraft {
    SnapshotDraft {
        snapshot_id: SNAPSHOT_ID.into(),
        group_id: GROUP.into(),
        event_ids: group_event_ids(store, GROUP).unwrap(),
        state_hash: HASH_A.into(),
        policy_log: vec![policy_entry()],
        created_at: NOW,
    }
}

/// The draft signed by the snapshot authority (the Group Authority).
fn signed(f: &Fixture, draft: &SnapshotDraft) -> Value {
    draft.sign(&authority(), &f.authority_key).unwrap().document
}

fn archive_by(f: &Fixture, actor: &str, snapshot: &Value) -> VerifiedCommand {
    let mut payload = Object::new();
    payload.insert("snapshot", snapshot.clone());
    let payload =
        String::from_utf8(json::canonical_bytes(&Value::Object(payload)).unwrap()).unwrap();
    f.command(GROUP_ARCHIVE, actor, "", &payload)
}

fn archive(f: &Fixture, snapshot: &Value) -> VerifiedCommand {
    archive_by(f, SERVICE, snapshot)
}

/// An engine whose Mission was cancelled by its owner (terminal, Group still active).
fn cancelled(f: &Fixture) -> TestEngine {
    let engine = f.active();
    let cancel = f.command(
        "mission.cancel",
        OWNER,
        "",
        r#"{"reason": "no longer needed"}"#,
    );
    f.ok(&engine, &cancel, NOW);
    engine
}

fn archived_ok(f: &Fixture, engine: &TestEngine, command: &VerifiedCommand) -> Vec<Value> {
    let performed = engine
        .perform_with_resolver(command, LATER, &f.registry)
        .unwrap_or_else(|e| panic!("archive refused: {e} ({})", e.wire_code()));
    assert!(!performed.duplicate);
    f.checked(&performed)
}

fn group(engine: &TestEngine) -> Value {
    let stored = engine
        .store()
        .aggregate(&AggregateKey::new("group", GROUP))
        .unwrap()
        .unwrap();
    json::parse(&stored.value).unwrap()
}

fn has_snapshot(engine: &TestEngine) -> bool {
    engine
        .store()
        .aggregate(&AggregateKey::new(SNAPSHOT_KIND, GROUP))
        .unwrap()
        .is_some()
}

/// Refused with `code`: nothing appended, no snapshot stored, the Group still `active`.
fn refused(
    f: &Fixture,
    engine: &TestEngine,
    command: &VerifiedCommand,
    code: WireCode,
) -> EngineError {
    let before = last_sequence(engine);
    let e = engine
        .perform_with_resolver(command, LATER, &f.registry)
        .expect_err("the archival must be refused");
    assert_eq!(e.wire_code(), code, "refused with {e}");
    assert_eq!(last_sequence(engine), before, "a refusal appends nothing");
    assert!(!has_snapshot(engine), "a refusal stores no snapshot");
    assert_eq!(text(&group(engine), "/state"), "active");
    assert_eq!(engine.store().head(GROUP).unwrap().first_online, 1);
    e
}

#[test]
fn a_terminal_group_is_archived_with_both_events_atomically() {
    let f = fixture();
    // The three terminal states of §7.1: cancelled, approved, failed.
    let approved = {
        let engine = f.awaiting();
        f.ok(&engine, &f.approve(2), NOW);
        engine
    };
    let failed = {
        let engine = f.active();
        let terminate = f.command(
            "mission.terminate",
            SERVICE,
            "",
            r#"{"reason": "budget gone"}"#,
        );
        f.ok(&engine, &terminate, NOW);
        engine
    };
    for (terminal, engine) in [
        ("cancelled", cancelled(&f)),
        ("approved", approved),
        ("failed", failed),
    ] {
        assert_eq!(state(&engine, MISSION).0, terminal);
        let head = last_sequence(&engine);
        let snapshot = signed(&f, &draft(engine.store()));
        let events = archived_ok(&f, &engine, &archive(&f, &snapshot));
        let kinds: Vec<&str> = events.iter().map(|e| text(e, "/kind")).collect();
        assert_eq!(kinds, ["group.snapshot.created", "group.archived"]);
        assert_eq!(last_sequence(&engine), head + 2);
        let hash = json::sha256_prefixed(&json::canonical_bytes(&snapshot).unwrap());
        let created = payload_of(&events[0]);
        let canonical = |v: Option<&Value>| json::canonical_bytes(v.unwrap()).unwrap();
        assert_eq!(
            canonical(created.get("snapshot")),
            canonical(Some(&snapshot))
        );
        assert_eq!(text(created, "/snapshotArtifactHash"), hash);
        assert_eq!(text(created, "/missionId"), MISSION);
        let done = payload_of(&events[1]);
        assert_eq!(text(done, "/state"), "archived");
        assert_eq!(text(done, "/archiveSnapshotId"), SNAPSHOT_ID);
        // The archived Group document conforms (digest 2.8: both archive members).
        let g = group(&engine);
        SchemaCatalog::embedded().validate("group", &g).unwrap();
        assert_eq!(text(&g, "/state"), "archived");
        assert_eq!(text(&g, "/archiveSnapshotId"), SNAPSHOT_ID);
        assert_eq!(canonical(done.get("group")), canonical(Some(&g)));
        // The snapshot is kept, and Events 1..head left the online log.
        let kept = read_snapshot(engine.store(), GROUP).unwrap().unwrap();
        assert_eq!(
            (kept.artifact_hash.as_str(), kept.through_sequence),
            (hash.as_str(), head)
        );
        let h = engine.store().head(GROUP).unwrap();
        assert_eq!(h.first_online, head + 1);
        assert_eq!(h.snapshot.unwrap().artifact_hash, hash);
        // The `group_snapshot` query answers the kept snapshot by Group ID.
        use missionweaveprotocol_engine::engine::{Query, QueryKind};
        let queried = engine
            .query(&Query::new(QueryKind::GroupSnapshot, GROUP), NOW)
            .unwrap()
            .unwrap();
        assert_eq!(canonical(Some(&queried)), canonical(Some(&snapshot)));
    }
    // A Group that was never archived has no snapshot.
    use missionweaveprotocol_engine::engine::{Query, QueryKind};
    let active = f.active();
    assert!(
        active
            .query(&Query::new(QueryKind::GroupSnapshot, GROUP), NOW)
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_duplicate_archival_returns_its_first_event_and_appends_nothing() {
    let f = fixture();
    let engine = cancelled(&f);
    let command = archive(&f, &signed(&f, &draft(engine.store())));
    let first = engine
        .perform_with_resolver(&command, LATER, &f.registry)
        .unwrap();
    let again = engine
        .perform_with_resolver(&command, LATER, &f.registry)
        .unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events[0], first.events[0]);
    assert_eq!(last_sequence(&engine), first.events[1].sequence);
}

#[test]
fn a_mission_that_is_not_terminal_is_not_archived() {
    let f = fixture();
    // active, then awaiting_approval: the history is not final (§7.4, digest 2.8).
    for engine in [f.active(), f.awaiting()] {
        let command = archive(&f, &signed(&f, &draft(engine.store())));
        refused(&f, &engine, &command, WireCode::InvalidStateTransition);
    }
}

#[test]
fn a_snapshot_of_another_group_or_head_is_refused() {
    let f = fixture();
    let engine = cancelled(&f);
    // Another Group.
    let mut other = draft(engine.store());
    other.group_id = "urn:missionweaveprotocol:group:other".into();
    let e = refused(
        &f,
        &engine,
        &archive(&f, &signed(&f, &other)),
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "snapshot_wrong_group");
    // An older head (stale: the last Event is not covered).
    let mut stale = draft(engine.store());
    stale.event_ids.pop();
    let e = refused(
        &f,
        &engine,
        &archive(&f, &signed(&f, &stale)),
        WireCode::RevisionConflict,
    );
    assert_eq!(e.reason(), "revision_conflict");
    // A head beyond the log.
    let mut ahead = draft(engine.store());
    ahead
        .event_ids
        .push("urn:missionweaveprotocol:event:invented".into());
    refused(
        &f,
        &engine,
        &archive(&f, &signed(&f, &ahead)),
        WireCode::RevisionConflict,
    );
    // The right count, other Events (one replaced, or the order changed).
    let mut forged = draft(engine.store());
    forged.event_ids[0] = "urn:missionweaveprotocol:event:invented".into();
    let e = refused(
        &f,
        &engine,
        &archive(&f, &signed(&f, &forged)),
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "snapshot_history_mismatch");
    let mut reordered = draft(engine.store());
    reordered.event_ids.swap(0, 1);
    refused(
        &f,
        &engine,
        &archive(&f, &signed(&f, &reordered)),
        WireCode::InvalidCommand,
    );
    // expectedRevision names the Group's revision (§15.3).
    let snapshot = signed(&f, &draft(engine.store()));
    let mut payload = Object::new();
    payload.insert("snapshot", snapshot);
    let payload =
        String::from_utf8(json::canonical_bytes(&Value::Object(payload)).unwrap()).unwrap();
    let stale_revision = f.command(GROUP_ARCHIVE, SERVICE, r#""expectedRevision": 7"#, &payload);
    refused(&f, &engine, &stale_revision, WireCode::RevisionConflict);
}

#[test]
fn a_forged_or_foreign_snapshot_is_refused() {
    let f = fixture();
    let engine = cancelled(&f);
    let good = signed(&f, &draft(engine.store()));
    // A member changed after signing.
    let mut tampered = good.clone();
    if let Value::Object(o) = &mut tampered {
        o.insert("stateHash", Value::string(HASH_B));
    }
    let e = refused(
        &f,
        &engine,
        &archive(&f, &tampered),
        WireCode::AuthInvalidSignature,
    );
    assert_eq!(e.reason(), "manifest_rejected");
    // Signed by another registered service for itself: verifies, but is not the authority.
    let (_, service_key) = f.keys.iter().find(|(p, _)| p.id == SERVICE).unwrap();
    let service = Principal::new(PrincipalType::Service, SERVICE);
    let foreign = draft(engine.store())
        .sign(&service, service_key)
        .unwrap()
        .document;
    let e = refused(&f, &engine, &archive(&f, &foreign), WireCode::AuthForbidden);
    assert_eq!(e.reason(), "not_snapshot_authority");
    // Claims the authority but is signed with another key (stage 4: key of another Principal).
    let mut unsigned = draft(engine.store()).document(&authority());
    let claimed = missionweaveprotocol::SignedDocumentCodec::new().sign(
        missionweaveprotocol::SignedDocumentKind::GroupSnapshot,
        &unsigned,
        service_key,
    );
    let claimed = claimed.expect("the signer does not consult the Registry");
    refused(
        &f,
        &engine,
        &archive(&f, &claimed.document),
        WireCode::AuthInvalidSignature,
    );
    // Schema-invalid (an empty policy log: vector `group-snapshot-without-policy-log`).
    if let Value::Object(o) = &mut unsigned {
        o.insert("policyLog", Value::Array(Vec::new()));
        o.insert("signature", good.get("signature").unwrap().clone());
    }
    refused(
        &f,
        &engine,
        &archive(&f, &unsigned),
        WireCode::SchemaValidationFailed,
    );
    // No snapshot at all.
    let bare = f.command(GROUP_ARCHIVE, SERVICE, "", "{}");
    let e = refused(&f, &engine, &bare, WireCode::InvalidCommand);
    assert_eq!(e.reason(), "missing_member");
    // Not an Organization service (§15.2): the MissionOwner.
    let e = refused(
        &f,
        &engine,
        &archive_by(&f, OWNER, &good),
        WireCode::AuthForbidden,
    );
    assert_eq!(e.reason(), "archive_needs_service");
    // Plain `perform` has no Registry to verify the snapshot with.
    let e = f.refused(
        &engine,
        &archive(&f, &good),
        LATER,
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "resolver_required");
    // And the good one still applies afterwards.
    archived_ok(&f, &engine, &archive(&f, &good));
}

#[test]
fn an_archived_group_accepts_no_more_writes() {
    let f = fixture();
    let engine = cancelled(&f);
    let worker = Principal::new(PrincipalType::Agent, OTHER_AGENT);
    // Before archival a Membership change of the terminal Mission's Group still applies …
    let change = f.command(
        "membership.change",
        OWNER,
        "",
        &change_payload(&worker, "worker", ""),
    );
    f.ok(&engine, &change, NOW);
    let first = draft(engine.store());
    archived_ok(&f, &engine, &archive(&f, &signed(&f, &first)));
    // … after it, nothing does: not a Membership change, not the Mission, not a new archive.
    let end = f.command("membership.end", OWNER, "", &end_payload(&worker));
    let e = f.refused(&engine, &end, LATER, WireCode::InvalidStateTransition);
    assert!(e.to_string().contains("archived"), "{e}");
    let cancel = f.command("mission.cancel", OWNER, "", r#"{"reason": "again"}"#);
    f.refused(&engine, &cancel, LATER, WireCode::InvalidStateTransition);
    let mut again = first.clone();
    again.snapshot_id = "urn:missionweaveprotocol:snapshot:again".into();
    let before = last_sequence(&engine);
    let e = engine
        .perform_with_resolver(&archive(&f, &signed(&f, &again)), LATER, &f.registry)
        .unwrap_err();
    assert_eq!(e.wire_code(), WireCode::InvalidStateTransition);
    assert_eq!(last_sequence(&engine), before);
}

// ---- replay across CURSOR_TOO_OLD through the Core ------------------------------

fn new_core(f: &Fixture, store: Arc<InMemoryStore>) -> Core {
    Core::new(
        store,
        Arc::clone(&f.registry),
        EventIssuer::new(authority(), f.authority_key.clone()),
        missionweaveprotocol_engine::service::default_authorizer(
            vec![SERVICE.to_owned()],
            vec![SERVICE.to_owned()],
        ),
        Box::new(SequentialEventIds::new(
            "urn:missionweaveprotocol:event:arc-",
        )),
    )
}

fn perform(core: &Core, command: &VerifiedCommand) {
    core.perform_bytes(command.bytes(), NOW)
        .unwrap_or_else(|e| panic!("{} refused: {e}", command.kind()));
}

/// A core over a store whose Group was cancelled and archived through the facade; the head.
fn archived_core(f: &Fixture) -> (Core, Arc<InMemoryStore>, u64) {
    let store = Arc::new(InMemoryStore::new());
    let core = new_core(f, Arc::clone(&store));
    perform(&core, &f.create());
    perform(
        &core,
        &f.command("mission.cancel", OWNER, "", r#"{"reason": "done"}"#),
    );
    let head = store.head(GROUP).unwrap().last_sequence();
    let snapshot = signed(f, &draft(store.as_ref()));
    perform(&core, &archive(f, &snapshot));
    (core, store, head)
}

fn no_offers(_: &ReplayEvent) -> Result<Option<EventProjection>, String> {
    Ok(None)
}

fn agent_replay(store: &MemoryAgentStore) -> AgentReplay<&MemoryAgentStore> {
    AgentReplay::new(
        OTHER_AGENT,
        store,
        Scheduler::new(SchedulerPolicy::default()).unwrap(),
    )
    .unwrap()
}

#[test]
fn the_core_replay_read_answers_an_old_cursor_with_the_snapshot() {
    let f = fixture();
    let (core, _, head) = archived_core(&f);
    // `replay` keeps the §19 error with the pointer …
    let e = core.replay(GROUP, 0, 100).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::CursorTooOld);
    let pointer = match e.fields().get("snapshot_artifact_hash") {
        Some(FieldValue::Text(hash)) => hash.clone(),
        other => panic!("no snapshot_artifact_hash: {other:?}"),
    };
    // … `replay_read` answers with the signed snapshot itself.
    for after in [0, head - 1] {
        match core
            .replay_read(GROUP, i64::try_from(after).unwrap(), 100)
            .unwrap()
        {
            ReplayRead::CursorTooOld(snapshot) => {
                assert_eq!(snapshot.artifact_hash, pointer);
                assert_eq!(snapshot.through_sequence, head);
                assert_eq!(json::sha256_prefixed(&snapshot.bytes), pointer);
            }
            ReplayRead::Page(_) => panic!("a cursor before the archive must not page"),
        }
    }
    // From the snapshot's sequence on, the two archival Events.
    match core
        .replay_read(GROUP, i64::try_from(head).unwrap(), 100)
        .unwrap()
    {
        ReplayRead::Page(page) => assert_eq!(page.events.len(), 2),
        ReplayRead::CursorTooOld(_) => panic!("the snapshot's own sequence is online"),
    }
}

#[test]
fn an_agent_replay_restores_the_snapshot_and_continues_after_it() {
    let f = fixture();
    let (core, _, head) = archived_core(&f);
    let local = MemoryAgentStore::new();
    let mut replay = agent_replay(&local);
    let mut source = CoreReplaySource::new(&core).with_page_limit(1);
    let result = replay
        .reconcile([GROUP], &mut source, &mut no_offers, LATER)
        .unwrap();
    let g = &result[GROUP];
    let pointer = core
        .store()
        .head(GROUP)
        .unwrap()
        .snapshot
        .unwrap()
        .artifact_hash;
    assert_eq!(g.snapshots_restored, vec![pointer]);
    assert_eq!((g.start_cursor, g.end_cursor), (0, head + 2));
    assert_eq!(g.applied_events, 2);
    // An Agent that had processed everything before archival never sees the snapshot.
    let store = Arc::new(InMemoryStore::new());
    let core = new_core(&f, Arc::clone(&store));
    let caught_up = MemoryAgentStore::new();
    let mut replay = agent_replay(&caught_up);
    perform(&core, &f.create());
    perform(
        &core,
        &f.command("mission.cancel", OWNER, "", r#"{"reason": "done"}"#),
    );
    let before = replay
        .reconcile(
            [GROUP],
            &mut CoreReplaySource::new(&core),
            &mut no_offers,
            LATER,
        )
        .unwrap()[GROUP]
        .end_cursor;
    perform(&core, &archive(&f, &signed(&f, &draft(store.as_ref()))));
    let after = replay
        .reconcile(
            [GROUP],
            &mut CoreReplaySource::new(&core),
            &mut no_offers,
            LATER,
        )
        .unwrap();
    assert!(after[GROUP].snapshots_restored.is_empty());
    assert_eq!(after[GROUP].end_cursor, before + 2);
}

#[test]
fn an_agent_replay_refuses_a_snapshot_that_does_not_verify() {
    let f = fixture();
    let (core, store, _) = archived_core(&f);
    // The stored snapshot replaced by other bytes (a changed state hash, same signature).
    let key = AggregateKey::new(SNAPSHOT_KIND, GROUP);
    let stored = store.aggregate(&key).unwrap().unwrap();
    let mut document = json::parse(&stored.value).unwrap();
    if let Value::Object(o) = &mut document {
        o.insert("stateHash", Value::string(HASH_B));
    }
    let mut tx = Transaction::new();
    tx.put(
        key,
        stored.revision,
        json::canonical_bytes(&document).unwrap().into(),
    );
    store.commit(tx).unwrap();
    let local = MemoryAgentStore::new();
    let mut replay = agent_replay(&local);
    let e = replay
        .reconcile(
            [GROUP],
            &mut CoreReplaySource::new(&core),
            &mut no_offers,
            LATER,
        )
        .unwrap_err();
    match e {
        ReplayError::Source { code, .. } => assert_eq!(code, WireCode::AuthInvalidSignature),
        other => panic!("expected a source refusal, got {other:?}"),
    }
    // Nothing was restored: the cursor did not move.
    assert_eq!(
        missionweaveprotocol_agent::replay::AgentLocalStore::cursor(&local, OTHER_AGENT, GROUP)
            .unwrap(),
        0
    );
}
