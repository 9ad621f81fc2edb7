//! The per-Group Event log: contiguous sequences, replay, archival (§4.7, §15.2, §16, §7.4).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

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
