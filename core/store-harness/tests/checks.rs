//! The store checks find what they exist to find: a gap, a wrong head, a changed or
//! mis-sequenced Event, a half-applied Command (receipt, Event or aggregate alone), a Command
//! applied twice, and a Mission revision no Event announced — and pass on a sound store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use missionweaveprotocol_engine::mission::MISSION_KIND;
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, EventRecord, EventRef, GroupHead, InMemoryStore, Receipt, ReceiptKey,
    ReplayPage, SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_harness::check::{
    group_log, mission_matches_log, stream_applied, verify_store,
};
use missionweaveprotocol_store_harness::perform::apply_all;
use missionweaveprotocol_store_harness::{
    HarnessError, NOW, StreamCommand, StreamEffect, Workload,
};

/// A store serving another's data with one fault injected on reads.
struct Faulty {
    inner: Arc<InMemoryStore>,
    fault: Fault,
}

#[derive(Clone, Copy)]
enum Fault {
    /// Replay leaves out this sequence.
    Drop(u64),
    /// Replay serves this sequence twice.
    Repeat(u64),
    /// Replay serves this sequence's body with one byte changed.
    Flip(u64),
    /// The head claims one more Event.
    Head,
}

impl Store for Faulty {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.inner.commit(tx)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.inner.aggregate(key)
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.inner.list(kind, id_prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.inner.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        let mut head = self.inner.head(group)?;
        if let Fault::Head = self.fault {
            head.next_sequence += 1;
        }
        Ok(head)
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        let mut page = self.inner.replay(group, after, limit)?;
        let mut events = Vec::new();
        for record in page.events {
            match self.fault {
                Fault::Drop(s) if record.sequence == s => {}
                Fault::Repeat(s) if record.sequence == s => {
                    events.push(record.clone());
                    events.push(record);
                }
                Fault::Flip(s) if record.sequence == s => {
                    let mut body = record.body.to_vec();
                    let at = body.len() / 2;
                    body[at] ^= 0x01;
                    events.push(EventRecord::new(record.sequence, &record.event_id, body));
                }
                _ => events.push(record),
            }
        }
        page.events = events;
        Ok(page)
    }
    fn archive_before(&self, g: &str, b: u64, s: SnapshotPointer) -> Result<(), StoreError> {
        self.inner.archive_before(g, b, s)
    }
}

/// A store after the setup and the first `n` stream Commands.
fn store_with_stream(workload: &Workload, n: u64) -> Arc<InMemoryStore> {
    let store = Arc::new(InMemoryStore::new());
    let core = workload.core(Arc::clone(&store)).unwrap();
    apply_all(&core, &workload.setup().unwrap()).unwrap();
    for i in 0..n {
        core.perform_bytes(&workload.stream(i).unwrap().command.bytes, NOW)
            .unwrap();
    }
    store
}

fn first(workload: &Workload, effect: fn(&StreamEffect) -> bool) -> StreamCommand {
    (0..)
        .map(|i| workload.stream(i).unwrap())
        .find(|c| effect(&c.effect))
        .unwrap()
}

fn check_error(result: Result<impl std::fmt::Debug, HarnessError>, needle: &str) {
    match result {
        Err(HarnessError::Check { detail }) => assert!(detail.contains(needle), "{detail}"),
        other => panic!("expected a failed check with {needle:?}, got {other:?}"),
    }
}

#[test]
fn a_sound_store_passes_every_check() {
    let workload = Workload::new(1).unwrap();
    let store = store_with_stream(&workload, 30);
    let report = verify_store(&*store, workload.keys().registry()).unwrap();
    assert!(report.groups >= 5 && report.events >= 30, "{report:?}");
    for n in 0..4 {
        let (group, mission) = workload.stream_group(n);
        let log = group_log(&*store, &group, Some(workload.keys().registry())).unwrap();
        mission_matches_log(&*store, &mission, &log).unwrap();
    }
    for i in 0..31 {
        let command = workload.stream(i).unwrap();
        let log = group_log(&*store, &command.group, None).unwrap();
        let applied = stream_applied(&*store, &command, &log).unwrap();
        assert_eq!(applied.is_some(), i < 30, "stream Command {i}");
    }
}

#[test]
fn a_gap_a_repeat_a_wrong_head_and_a_changed_event_are_found() {
    let workload = Workload::new(1).unwrap();
    let inner = store_with_stream(&workload, 0);
    let (group, _) = workload.stream_group(0);
    let registry = workload.keys().registry();
    let faulty = |fault| Faulty {
        inner: Arc::clone(&inner),
        fault,
    };
    check_error(
        group_log(&faulty(Fault::Drop(2)), &group, None),
        "sequence 3 where 2 was next",
    );
    check_error(
        group_log(&faulty(Fault::Repeat(2)), &group, None),
        "sequence 2 where 3 was next",
    );
    check_error(
        group_log(&faulty(Fault::Head), &group, None),
        "the head says next sequence 7",
    );
    check_error(
        group_log(&faulty(Fault::Flip(3)), &group, Some(registry)),
        "fails §6.4",
    );
    check_error(
        verify_store(&faulty(Fault::Flip(1)), registry),
        "fails §6.4",
    );
    // A fault on a sequence the log does not have changes nothing.
    group_log(&faulty(Fault::Drop(99)), &group, Some(registry)).unwrap();
    verify_store(&faulty(Fault::Flip(99)), registry).unwrap();
}

#[test]
fn an_event_moved_to_another_sequence_is_found() {
    let workload = Workload::new(1).unwrap();
    let store = store_with_stream(&workload, 0);
    let (group, _) = workload.stream_group(0);
    let page = store.replay(&group, 0, 1).unwrap();
    let body = page.events[0].body.clone();
    // The first Event's body appended as sequence 6 (the store checks only the position).
    let mut tx = Transaction::new();
    tx.append(&group, EventRecord::new(6, "urn:uuid:moved", body));
    store.commit(tx).unwrap();
    check_error(group_log(&*store, &group, None), "eventId differs");
}

#[test]
fn a_receipt_an_event_or_an_aggregate_alone_is_a_half_applied_command() {
    let workload = Workload::new(1).unwrap();
    let create = first(&workload, |e| {
        matches!(e, StreamEffect::CreateMission { .. })
    });
    let member = first(&workload, |e| matches!(e, StreamEffect::AddMember { .. }));
    // A receipt without its Event.
    let store = store_with_stream(&workload, 0);
    let mut tx = Transaction::new();
    tx.record_receipt(
        create.command.receipt_key(),
        Receipt {
            signing_hash: "sha256:00".into(),
            first_event: EventRef {
                event_id: "urn:uuid:none".into(),
                position: Some((create.group.clone(), 1)),
            },
        },
    );
    store.commit(tx).unwrap();
    let log = group_log(&*store, &create.group, None).unwrap();
    check_error(stream_applied(&*store, &create, &log), "half-applied");
    // A Mission without receipt or Event.
    let store = store_with_stream(&workload, 0);
    let StreamEffect::CreateMission { mission } = &create.effect else {
        unreachable!()
    };
    let mut tx = Transaction::new();
    tx.put(
        AggregateKey::new(MISSION_KIND, mission),
        0,
        b"{}"[..].into(),
    );
    store.commit(tx).unwrap();
    check_error(
        stream_applied(&*store, &create, &[]),
        "Mission stored true, its Group false",
    );
    // A Membership without receipt or Event.
    let store = store_with_stream(&workload, 0);
    let applied = store_with_stream(&workload, member.index + 1);
    let StreamEffect::AddMember { member: agent } = &member.effect else {
        unreachable!()
    };
    let (id, stored) = applied
        .list("membership", "")
        .unwrap()
        .into_iter()
        .find(|(id, _)| id.ends_with(agent.as_str()))
        .unwrap();
    let mut tx = Transaction::new();
    tx.put(AggregateKey::new("membership", id), 0, stored.value);
    store.commit(tx).unwrap();
    let log = group_log(&*store, &member.group, None).unwrap();
    check_error(stream_applied(&*store, &member, &log), "half-applied");
}

#[test]
fn a_command_with_two_events_is_applied_twice() {
    let workload = Workload::new(1).unwrap();
    let member = first(&workload, |e| matches!(e, StreamEffect::AddMember { .. }));
    let store = store_with_stream(&workload, member.index + 1);
    let log = group_log(&*store, &member.group, None).unwrap();
    let event = log
        .iter()
        .find(|e| e.action_id.as_deref() == Some(&*member.command.action_id))
        .unwrap();
    let mut twice = log.clone();
    twice.push(event.clone());
    check_error(
        stream_applied(&*store, &member, &twice),
        "applied more than once",
    );
}

#[test]
fn a_mission_revision_no_event_announced_is_found() {
    let workload = Workload::new(1).unwrap();
    let store = store_with_stream(&workload, 0);
    let (group, mission) = workload.stream_group(1);
    let key = AggregateKey::new(MISSION_KIND, &mission);
    let current = store.aggregate(&key).unwrap().unwrap();
    let mut tx = Transaction::new();
    tx.put(key, current.revision, current.value);
    store.commit(tx).unwrap();
    let log = group_log(&*store, &group, None).unwrap();
    check_error(
        mission_matches_log(&*store, &mission, &log),
        "announced Some(1)",
    );
}
