//! The store test suite every backend must pass unchanged (§4.6–4.8, §15, §16, §7.4).
//!
//! Each case is a generic function over [`Store`] that panics on a broken rule; the
//! [`store_test_suite!`](crate::store_test_suite) macro turns all of them into `#[test]`s for
//! one backend:
//!
//! ```
//! use missionweaveprotocol_authority::store::InMemoryStore;
//!
//! missionweaveprotocol_authority::store_test_suite!(InMemoryStore::new);
//! # fn main() {}
//! ```
//!
//! A case receives a fresh, empty store. Test code: assertions are the point here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{DescribeError, FieldValue, WireCode};

use super::{
    AggregateKey, Blob, EventRecord, EventRef, Receipt, ReceiptKey, SnapshotPointer, Store,
    StoreError, Transaction,
};

/// The canonical bytes of a small test Event.
pub fn event_body(group: &str, sequence: u64, event_id: &str) -> Blob {
    format!(r#"{{"eventId":"{event_id}","groupId":"{group}","sequence":{sequence}}}"#)
        .into_bytes()
        .into()
}

/// A test Event for `group` at `sequence`.
pub fn event(group: &str, sequence: u64) -> EventRecord {
    let id = format!("{group}/event/{sequence}");
    EventRecord::new(sequence, &id, event_body(group, sequence, &id))
}

/// A transaction appending Events `first..first + count` to `group`.
pub fn appends(group: &str, first: u64, count: u64) -> Transaction {
    let mut tx = Transaction::new();
    for i in 0..count {
        tx.append(group, event(group, first + i));
    }
    tx
}

fn blob(text: &str) -> Blob {
    text.as_bytes().into()
}

fn receipt(hash: &str, group: &str, sequence: u64) -> Receipt {
    Receipt {
        signing_hash: hash.to_owned(),
        first_event: EventRef {
            event_id: format!("{group}/event/{sequence}"),
            position: Some((group.to_owned(), sequence)),
        },
    }
}

/// Every sequence of `group`'s online log, replayed page by page.
pub fn online_sequences<S: Store + ?Sized>(store: &S, group: &str) -> Vec<u64> {
    let mut after = store.head(group).unwrap().first_online - 1;
    let mut sequences = Vec::new();
    loop {
        let page = store.replay(group, after, 7).unwrap();
        sequences.extend(page.events.iter().map(|e| e.sequence));
        match page.continuation {
            Some(next) => after = next,
            None => return sequences,
        }
    }
}

fn assert_describes(e: &StoreError, code: WireCode, reason: &str) {
    assert_eq!(e.wire_code(), code, "{e}");
    assert_eq!(DescribeError::reason(e), reason, "{e}");
    let message = e.to_string();
    assert!(
        !message.is_empty() && !message.contains("{ "),
        "{message:?}"
    );
}

fn field(e: &StoreError, name: &str) -> FieldValue {
    e.fields()
        .get(name)
        .cloned()
        .unwrap_or_else(|| panic!("{e}: no field {name}"))
}

/// §15.2: a Group starts at sequence 1 and every append takes the next one; several Events of
/// one Command are consecutive.
pub fn sequences_start_at_one_and_stay_contiguous<S: Store>(store: &S) {
    let head = store.head("g").unwrap();
    assert_eq!((head.next_sequence, head.first_online), (1, 1));
    assert_eq!(head.last_sequence(), 0);
    assert_eq!(head.snapshot, None);
    store.commit(appends("g", 1, 1)).unwrap();
    store.commit(appends("g", 2, 1)).unwrap();
    store.commit(appends("g", 3, 3)).unwrap();
    assert_eq!(store.head("g").unwrap().next_sequence, 6);
    assert_eq!(online_sequences(store, "g"), vec![1, 2, 3, 4, 5]);
}

/// §15.2: an append at a gap, a duplicate or sequence 0 is refused with a typed conflict, and
/// nothing of its transaction is written.
pub fn append_at_wrong_sequence_is_refused_and_writes_nothing<S: Store>(store: &S) {
    store.commit(appends("g", 1, 2)).unwrap();
    for wrong in [0, 1, 2, 4, u64::MAX] {
        let e = store.commit(appends("g", wrong, 1)).unwrap_err();
        assert_eq!(
            e,
            StoreError::SequenceConflict {
                group: "g".into(),
                expected: wrong,
                next: 3
            }
        );
        assert!(e.is_contention());
        assert_describes(&e, WireCode::RevisionConflict, "sequence_conflict");
        assert_eq!(field(&e, "next_sequence"), FieldValue::Integer(3));
    }
    // A correct first append followed by a gap: the first is not written either.
    let mut tx = appends("g", 3, 1);
    tx.append("g", event("g", 5));
    tx.put(AggregateKey::new("mission", "m"), 0, blob("{}"));
    tx.record_receipt(
        ReceiptKey::new("agent", "a", "x"),
        receipt("sha256:1", "g", 3),
    );
    let e = store.commit(tx).unwrap_err();
    assert!(matches!(
        e,
        StoreError::SequenceConflict {
            expected: 5,
            next: 4,
            ..
        }
    ));
    assert_eq!(store.head("g").unwrap().next_sequence, 3);
    assert_eq!(online_sequences(store, "g"), vec![1, 2]);
    assert_eq!(
        store.aggregate(&AggregateKey::new("mission", "m")).unwrap(),
        None
    );
    assert_eq!(
        store.receipt(&ReceiptKey::new("agent", "a", "x")).unwrap(),
        None
    );
}

/// §15.3: an aggregate is created at revision 1 and each write names the revision it read.
pub fn aggregate_revisions_advance_by_one<S: Store>(store: &S) {
    let key = AggregateKey::new("work_item", "w1");
    assert_eq!(store.aggregate(&key).unwrap(), None);
    let mut tx = Transaction::new();
    tx.put(key.clone(), 0, blob(r#"{"state":"proposed"}"#));
    store.commit(tx).unwrap();
    let stored = store.aggregate(&key).unwrap().unwrap();
    assert_eq!(stored.revision, 1);
    assert_eq!(&*stored.value, br#"{"state":"proposed"}"#);
    let mut tx = Transaction::new();
    tx.put(key.clone(), 1, blob(r#"{"state":"authorized"}"#));
    store.commit(tx).unwrap();
    let stored = store.aggregate(&key).unwrap().unwrap();
    assert_eq!(stored.revision, 2);
    assert_eq!(&*stored.value, br#"{"state":"authorized"}"#);
    // Same ID, other kind: another aggregate.
    assert_eq!(
        store
            .aggregate(&AggregateKey::new("mission", "w1"))
            .unwrap(),
        None
    );
}

/// §15.3: a write naming another revision than the current one is `REVISION_CONFLICT` with
/// `expectedRevision` and `currentRevision`, and changes nothing.
pub fn stale_revision_is_refused<S: Store>(store: &S) {
    let key = AggregateKey::new("mission", "m");
    let mut tx = Transaction::new();
    tx.put(key.clone(), 0, blob("1"));
    store.commit(tx).unwrap();
    for (expected, current) in [(0, 1), (2, 1), (7, 1)] {
        let mut tx = Transaction::new();
        tx.put(key.clone(), expected, blob("stale"));
        let e = store.commit(tx).unwrap_err();
        assert_eq!(
            e,
            StoreError::RevisionConflict {
                key: key.clone(),
                expected,
                current
            }
        );
        assert!(e.is_contention());
        assert_describes(&e, WireCode::RevisionConflict, "revision_conflict");
        assert_eq!(
            field(&e, "expected_revision"),
            FieldValue::Integer(expected as i64)
        );
        assert_eq!(
            field(&e, "current_revision"),
            FieldValue::Integer(current as i64)
        );
    }
    let stored = store.aggregate(&key).unwrap().unwrap();
    assert_eq!((stored.revision, &*stored.value), (1, &b"1"[..]));
    // Updating an absent aggregate: current revision 0.
    let mut tx = Transaction::new();
    tx.put(AggregateKey::new("mission", "absent"), 1, blob("x"));
    assert!(matches!(
        store.commit(tx).unwrap_err(),
        StoreError::RevisionConflict {
            expected: 1,
            current: 0,
            ..
        }
    ));
}

/// §15.3 compare-and-set on reads: a checked aggregate must still be at the revision read.
pub fn checked_revision_guards_the_decision<S: Store>(store: &S) {
    let membership = AggregateKey::new("membership", "g/agent/a");
    let work = AggregateKey::new("work_item", "w");
    let mut tx = Transaction::new();
    tx.put(membership.clone(), 0, blob("m1"));
    store.commit(tx).unwrap();
    let mut tx = Transaction::new();
    tx.check(membership.clone(), 1)
        .put(work.clone(), 0, blob("w1"));
    store.commit(tx).unwrap();
    assert_eq!(store.aggregate(&membership).unwrap().unwrap().revision, 1);
    assert_eq!(store.aggregate(&work).unwrap().unwrap().revision, 1);
    // The Membership changed after the read: the dependent write is refused.
    let mut tx = Transaction::new();
    tx.put(membership.clone(), 1, blob("m2"));
    store.commit(tx).unwrap();
    let mut tx = Transaction::new();
    tx.check(membership.clone(), 1)
        .put(work.clone(), 1, blob("w2"));
    let e = store.commit(tx).unwrap_err();
    assert!(matches!(
        e,
        StoreError::RevisionConflict {
            expected: 1,
            current: 2,
            ..
        }
    ));
    assert_eq!(&*store.aggregate(&work).unwrap().unwrap().value, b"w1");
    // Checking an absent aggregate as absent passes.
    let mut tx = Transaction::new();
    tx.check(AggregateKey::new("lease", "none"), 0);
    store.commit(tx).unwrap();
    assert_eq!(
        store
            .aggregate(&AggregateKey::new("lease", "none"))
            .unwrap(),
        None
    );
}

/// Writes within one transaction see each other: consecutive revisions of one aggregate.
pub fn writes_in_one_transaction_chain<S: Store>(store: &S) {
    let key = AggregateKey::new("budget_account", "m");
    let mut tx = Transaction::new();
    tx.put(key.clone(), 0, blob("a"))
        .put(key.clone(), 1, blob("b"));
    store.commit(tx).unwrap();
    let stored = store.aggregate(&key).unwrap().unwrap();
    assert_eq!((stored.revision, &*stored.value), (2, &b"b"[..]));
    let mut tx = Transaction::new();
    tx.put(key.clone(), 2, blob("c"))
        .put(key.clone(), 2, blob("d"));
    assert!(matches!(
        store.commit(tx).unwrap_err(),
        StoreError::RevisionConflict {
            expected: 2,
            current: 3,
            ..
        }
    ));
    assert_eq!(store.aggregate(&key).unwrap().unwrap().revision, 2);
}

/// §15.1, §15.3: every write of one Command commits or none does, whichever part fails.
pub fn transaction_is_atomic<S: Store>(store: &S) {
    let existing = AggregateKey::new("mission", "m");
    let mut tx = appends("g", 1, 1);
    tx.put(existing.clone(), 0, blob("m1"));
    tx.record_receipt(
        ReceiptKey::new("human", "h", "first"),
        receipt("sha256:a", "g", 1),
    );
    store.commit(tx).unwrap();

    let fresh = AggregateKey::new("work_item", "w");
    let new_receipt = ReceiptKey::new("agent", "a", "second");
    let build = |failing: &str| {
        let mut tx = Transaction::new();
        tx.record_receipt(new_receipt.clone(), receipt("sha256:b", "g", 2));
        if failing == "receipt" {
            tx.record_receipt(
                ReceiptKey::new("human", "h", "first"),
                receipt("sha256:c", "g", 2),
            );
        }
        tx.append("g", event("g", 2));
        tx.append("other", event("other", 1));
        if failing == "append" {
            tx.append("other", event("other", 3));
        }
        tx.put(fresh.clone(), 0, blob("w1"));
        let stale = if failing == "write" { 0 } else { 1 };
        tx.put(existing.clone(), stale, blob("m2"));
        tx
    };
    for failing in ["receipt", "append", "write"] {
        let e = store.commit(build(failing)).unwrap_err();
        match failing {
            "receipt" => assert!(matches!(e, StoreError::ActionIdCollision { .. }), "{e}"),
            "append" => assert!(matches!(e, StoreError::SequenceConflict { .. }), "{e}"),
            _ => assert!(matches!(e, StoreError::RevisionConflict { .. }), "{e}"),
        }
        assert_eq!(store.head("g").unwrap().next_sequence, 2, "{failing}");
        assert_eq!(store.head("other").unwrap().next_sequence, 1, "{failing}");
        assert_eq!(store.aggregate(&fresh).unwrap(), None, "{failing}");
        assert_eq!(store.aggregate(&existing).unwrap().unwrap().revision, 1);
        assert_eq!(store.receipt(&new_receipt).unwrap(), None, "{failing}");
    }
    // The same transaction without the failing part commits all of it.
    store.commit(build("none")).unwrap();
    assert_eq!(store.head("g").unwrap().next_sequence, 3);
    assert_eq!(store.head("other").unwrap().next_sequence, 2);
    assert_eq!(store.aggregate(&fresh).unwrap().unwrap().revision, 1);
    assert_eq!(store.aggregate(&existing).unwrap().unwrap().revision, 2);
    assert!(store.receipt(&new_receipt).unwrap().is_some());
}

/// An empty transaction commits and changes nothing.
pub fn empty_transaction_changes_nothing<S: Store>(store: &S) {
    let tx = Transaction::new();
    assert!(tx.is_empty());
    store.commit(tx).unwrap();
    assert_eq!(store.head("g").unwrap().next_sequence, 1);
    assert!(store.list("mission", "").unwrap().is_empty());
}

/// §15.1: the same `(actor, Action ID)` with the same signing hash answers the first receipt
/// again and appends nothing, also when it races to commit.
pub fn dedup_same_hash_returns_the_first_receipt<S: Store>(store: &S) {
    let key = ReceiptKey::new("agent", "a", "act-1");
    assert_eq!(store.dedup(&key, "sha256:1").unwrap(), None);
    let first = receipt("sha256:1", "g", 1);
    let mut tx = appends("g", 1, 1);
    tx.record_receipt(key.clone(), first.clone());
    store.commit(tx).unwrap();
    assert_eq!(store.dedup(&key, "sha256:1").unwrap(), Some(first.clone()));
    assert_eq!(store.receipt(&key).unwrap(), Some(first.clone()));
    // A concurrent duplicate that read before the first commit: refused, first result kept.
    let mut tx = appends("g", 2, 1);
    tx.record_receipt(key.clone(), receipt("sha256:1", "g", 2));
    let e = store.commit(tx).unwrap_err();
    assert_eq!(
        e,
        StoreError::AlreadyApplied {
            key: key.clone(),
            receipt: Box::new(first.clone())
        }
    );
    assert!(e.is_contention());
    assert_describes(&e, WireCode::InternalError, "already_applied");
    assert_eq!(store.head("g").unwrap().next_sequence, 2);
    // Organization-scoped first Events have no Group position.
    let org = ReceiptKey::new("service", "org", "open-1");
    let org_receipt = Receipt {
        signing_hash: "sha256:2".into(),
        first_event: EventRef {
            event_id: "session-opened-1".into(),
            position: None,
        },
    };
    let mut tx = Transaction::new();
    tx.record_receipt(org.clone(), org_receipt.clone());
    store.commit(tx).unwrap();
    assert_eq!(store.dedup(&org, "sha256:2").unwrap(), Some(org_receipt));
}

/// §15.1: reuse of an Action ID with different content is `ACTION_ID_COLLISION`; the key is
/// the actor (type and ID) together with the Action ID.
pub fn dedup_different_hash_is_a_collision<S: Store>(store: &S) {
    let key = ReceiptKey::new("agent", "a", "act-1");
    let mut tx = appends("g", 1, 1);
    tx.record_receipt(key.clone(), receipt("sha256:1", "g", 1));
    store.commit(tx).unwrap();
    let e = store.dedup(&key, "sha256:2").unwrap_err();
    assert_eq!(e, StoreError::ActionIdCollision { key: key.clone() });
    assert!(!e.is_contention());
    assert_describes(&e, WireCode::ActionIdCollision, "action_id_collision");
    assert_eq!(field(&e, "action_id"), FieldValue::Text("act-1".into()));
    let mut tx = appends("g", 2, 1);
    tx.record_receipt(key.clone(), receipt("sha256:2", "g", 2));
    assert_eq!(store.commit(tx).unwrap_err(), e);
    assert_eq!(store.head("g").unwrap().next_sequence, 2);
    assert_eq!(
        store.receipt(&key).unwrap().unwrap().signing_hash,
        "sha256:1"
    );
    // Another actor, or another actor type, may use the same Action ID.
    for other in [
        ReceiptKey::new("agent", "b", "act-1"),
        ReceiptKey::new("human", "a", "act-1"),
    ] {
        assert_eq!(store.dedup(&other, "sha256:2").unwrap(), None);
        let mut tx = Transaction::new();
        tx.record_receipt(other.clone(), receipt("sha256:2", "g", 1));
        store.commit(tx).unwrap();
    }
    // Two receipts for one key inside one transaction collide as well.
    let twice = ReceiptKey::new("agent", "c", "act-1");
    let mut tx = Transaction::new();
    tx.record_receipt(twice.clone(), receipt("sha256:1", "g", 1))
        .record_receipt(twice.clone(), receipt("sha256:3", "g", 1));
    assert!(matches!(
        store.commit(tx).unwrap_err(),
        StoreError::ActionIdCollision { .. }
    ));
    assert_eq!(store.receipt(&twice).unwrap(), None);
}

/// §16: replay returns the Events after the cursor, in order, byte for byte, in pages linked
/// by their continuation.
pub fn replay_pages_with_continuation<S: Store>(store: &S) {
    store.commit(appends("g", 1, 10)).unwrap();
    let page = store.replay("g", 0, 3).unwrap();
    assert_eq!(
        page.events,
        vec![event("g", 1), event("g", 2), event("g", 3)]
    );
    assert_eq!(page.continuation, Some(3));
    assert_eq!(page.last_sequence, 10);
    let mut after = 0;
    let mut seen = Vec::new();
    while let Some(page) = Some(store.replay("g", after, 3).unwrap()) {
        seen.extend(page.events.iter().map(|e| e.sequence));
        match page.continuation {
            Some(next) => {
                assert_eq!(next, page.events.last().unwrap().sequence);
                after = next;
            }
            None => break,
        }
    }
    assert_eq!(seen, (1..=10).collect::<Vec<_>>());
    let tail = store.replay("g", 7, 100).unwrap();
    assert_eq!(
        tail.events.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        vec![8, 9, 10]
    );
    assert_eq!(tail.continuation, None);
    let exact = store.replay("g", 7, 3).unwrap();
    assert_eq!((exact.events.len(), exact.continuation), (3, None));
    for caught_up in [10, 11, u64::MAX] {
        let page = store.replay("g", caught_up, 5).unwrap();
        assert!(page.events.is_empty());
        assert_eq!((page.continuation, page.last_sequence), (None, 10));
    }
    let unknown = store.replay("unknown", 0, 5).unwrap();
    assert!(unknown.events.is_empty());
    assert_eq!((unknown.continuation, unknown.last_sequence), (None, 0));
    let e = store.replay("g", 0, 0).unwrap_err();
    assert!(matches!(
        e,
        StoreError::InvalidArgument {
            argument: "limit",
            ..
        }
    ));
    assert_describes(&e, WireCode::ProtocolViolation, "invalid_argument");
}

/// §16, §7.4: after archival, a cursor before the online log answers `CURSOR_TOO_OLD` with the
/// snapshot pointer; from the snapshot's sequence on, replay works; sequences are never reused.
pub fn archived_history_answers_cursor_too_old<S: Store>(store: &S) {
    store.commit(appends("g", 1, 10)).unwrap();
    let snapshot = SnapshotPointer {
        artifact_hash: "sha256:snap5".into(),
    };
    store.archive_before("g", 6, snapshot.clone()).unwrap();
    let head = store.head("g").unwrap();
    assert_eq!((head.first_online, head.next_sequence), (6, 11));
    assert_eq!(head.snapshot, Some(snapshot.clone()));
    for cursor in [0, 1, 4] {
        let e = store.replay("g", cursor, 5).unwrap_err();
        assert_eq!(
            e,
            StoreError::CursorTooOld {
                group: "g".into(),
                after_sequence: cursor,
                first_online: 6,
                snapshot: snapshot.clone()
            }
        );
        assert_describes(&e, WireCode::CursorTooOld, "cursor_too_old");
        assert_eq!(
            field(&e, "snapshot_artifact_hash"),
            FieldValue::Text("sha256:snap5".into())
        );
        assert_eq!(field(&e, "through_sequence"), FieldValue::Integer(5));
    }
    let page = store.replay("g", 5, 100).unwrap();
    assert_eq!(page.events.first().map(|e| e.sequence), Some(6));
    assert_eq!(page.events.len(), 5);
    assert_eq!(online_sequences(store, "g"), (6..=10).collect::<Vec<_>>());
    // Appends continue after the head; archived sequences are not reused.
    assert!(matches!(
        store.commit(appends("g", 6, 1)).unwrap_err(),
        StoreError::SequenceConflict { next: 11, .. }
    ));
    store.commit(appends("g", 11, 2)).unwrap();
    // The boundary must advance and may not pass the head.
    for before in [0, 1, 5, 6, 14] {
        let e = store
            .archive_before(
                "g",
                before,
                SnapshotPointer {
                    artifact_hash: "sha256:x".into(),
                },
            )
            .unwrap_err();
        assert_eq!(
            e,
            StoreError::ArchiveOutOfRange {
                group: "g".into(),
                before,
                first_online: 6,
                next_sequence: 13
            }
        );
        assert_describes(&e, WireCode::ProtocolViolation, "archive_out_of_range");
    }
    assert_eq!(store.head("g").unwrap().snapshot, Some(snapshot));
    // Archiving everything: the head stays, replay from the snapshot is empty.
    let all = SnapshotPointer {
        artifact_hash: "sha256:snap12".into(),
    };
    store.archive_before("g", 13, all.clone()).unwrap();
    let page = store.replay("g", 12, 5).unwrap();
    assert!(page.events.is_empty());
    assert_eq!(page.last_sequence, 12);
    assert!(matches!(
        store.replay("g", 11, 5).unwrap_err(),
        StoreError::CursorTooOld {
            first_online: 13,
            ..
        }
    ));
    assert_eq!(store.head("g").unwrap().next_sequence, 13);
    store.commit(appends("g", 13, 1)).unwrap();
    assert_eq!(online_sequences(store, "g"), vec![13]);
    // A Group without Events has nothing to archive.
    assert!(matches!(
        store.archive_before("empty", 1, all.clone()).unwrap_err(),
        StoreError::ArchiveOutOfRange {
            next_sequence: 1,
            ..
        }
    ));
    assert!(matches!(
        store.archive_before("empty", 2, all).unwrap_err(),
        StoreError::ArchiveOutOfRange { .. }
    ));
}

/// §4.7: each Group has its own sequence; a conflict or archival in one Group does not touch
/// another.
pub fn groups_are_independent<S: Store>(store: &S) {
    store.commit(appends("a", 1, 3)).unwrap();
    store.commit(appends("b", 1, 1)).unwrap();
    assert!(store.commit(appends("a", 1, 1)).is_err());
    store.commit(appends("b", 2, 1)).unwrap();
    store
        .archive_before(
            "a",
            3,
            SnapshotPointer {
                artifact_hash: "sha256:a".into(),
            },
        )
        .unwrap();
    assert_eq!(online_sequences(store, "a"), vec![3]);
    assert_eq!(online_sequences(store, "b"), vec![1, 2]);
    assert_eq!(store.head("b").unwrap().snapshot, None);
    assert_eq!(store.replay("b", 0, 10).unwrap().events[0], event("b", 1));
}

/// Group commit: a batch applies each transaction atomically and in order; one failure does
/// not undo or block the others.
pub fn commit_many_keeps_each_transaction_atomic<S: Store>(store: &S) {
    let mut bad = appends("g", 2, 1);
    bad.append("g", event("g", 9));
    let results = store.commit_many(vec![appends("g", 1, 1), bad, appends("g", 2, 2)]);
    assert!(results[0].is_ok());
    assert!(matches!(
        results[1],
        Err(StoreError::SequenceConflict {
            expected: 9,
            next: 3,
            ..
        })
    ));
    assert!(results[2].is_ok());
    assert_eq!(online_sequences(store, "g"), vec![1, 2, 3]);
}

/// Aggregates of one kind list by ID prefix, in ID byte order.
pub fn list_by_kind_and_prefix<S: Store>(store: &S) {
    let mut tx = Transaction::new();
    for (kind, id) in [
        ("work_item", "m1/w2"),
        ("work_item", "m1/w1"),
        ("work_item", "m2/w1"),
        ("mission", "m1"),
        ("workitem", "m1/w3"),
    ] {
        tx.put(AggregateKey::new(kind, id), 0, blob(id));
    }
    store.commit(tx).unwrap();
    let ids = |kind: &str, prefix: &str| -> Vec<String> {
        store
            .list(kind, prefix)
            .unwrap()
            .into_iter()
            .map(|(id, a)| {
                assert_eq!(&*a.value, id.as_bytes());
                id
            })
            .collect()
    };
    assert_eq!(ids("work_item", "m1/"), vec!["m1/w1", "m1/w2"]);
    assert_eq!(ids("work_item", ""), vec!["m1/w1", "m1/w2", "m2/w1"]);
    assert_eq!(ids("mission", ""), vec!["m1"]);
    assert!(ids("work_item", "m3").is_empty());
    assert!(ids("lease", "").is_empty());
}

/// §4.7, §15.2 under contention: N threads appending to one Group, each re-reading the head
/// after a conflict, leave exactly `1..=N·K` with every Event once, each thread's in order.
/// Also N threads racing one Action ID: exactly one commit applies.
#[cfg(not(target_arch = "wasm32"))]
pub fn concurrent_appends_stay_contiguous<S: Store + Sync>(store: &S) {
    const THREADS: u64 = 8;
    const EACH: u64 = 50;
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            scope.spawn(move || {
                for i in 0..EACH {
                    loop {
                        let next = store.head("g").unwrap().next_sequence;
                        let id = format!("t{thread}/{i}");
                        let mut tx = Transaction::new();
                        tx.append("g", EventRecord::new(next, &id, event_body("g", next, &id)));
                        match store.commit(tx) {
                            Ok(()) => break,
                            Err(e) if e.is_contention() => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            });
        }
    });
    let mut ids = Vec::new();
    let mut after = 0;
    loop {
        let page = store.replay("g", after, 64).unwrap();
        for e in &page.events {
            assert_eq!(e.sequence, after + 1, "gap or duplicate");
            after = e.sequence;
            ids.push(e.event_id.to_string());
        }
        if page.continuation.is_none() {
            break;
        }
    }
    assert_eq!(after, THREADS * EACH);
    for thread in 0..THREADS {
        let mine: Vec<&String> = ids
            .iter()
            .filter(|id| id.starts_with(&format!("t{thread}/")))
            .collect();
        let expected: Vec<String> = (0..EACH).map(|i| format!("t{thread}/{i}")).collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>());
    }

    let key = ReceiptKey::new("agent", "a", "same");
    let results: Vec<Result<(), StoreError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let key = key.clone();
                scope.spawn(move || {
                    let mut tx = Transaction::new();
                    tx.record_receipt(key, receipt("sha256:same", "h", 1));
                    tx.append("h", event("h", 1));
                    store.commit(tx)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Ok(()) | Err(StoreError::AlreadyApplied { .. })))
    );
    assert_eq!(online_sequences(store, "h"), vec![1]);
}

/// Defines one `#[test]` per suite case for the backend built by `$make` (a closure returning
/// a fresh, empty store).
#[macro_export]
macro_rules! store_test_suite {
    ($make:expr) => {
        $crate::store_test_suite!(@cases $make;
            sequences_start_at_one_and_stay_contiguous,
            append_at_wrong_sequence_is_refused_and_writes_nothing,
            aggregate_revisions_advance_by_one,
            stale_revision_is_refused,
            checked_revision_guards_the_decision,
            writes_in_one_transaction_chain,
            transaction_is_atomic,
            empty_transaction_changes_nothing,
            dedup_same_hash_returns_the_first_receipt,
            dedup_different_hash_is_a_collision,
            replay_pages_with_continuation,
            archived_history_answers_cursor_too_old,
            groups_are_independent,
            commit_many_keeps_each_transaction_atomic,
            list_by_kind_and_prefix,
        );
        #[cfg(not(target_arch = "wasm32"))]
        #[test]
        fn concurrent_appends_stay_contiguous() {
            $crate::store::suite::concurrent_appends_stay_contiguous(&($make)());
        }
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::store::suite::$case(&($make)());
            }
        )*
    };
}
