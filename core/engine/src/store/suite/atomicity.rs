//! One Command's writes commit together or not at all (§15.1, §15.3), also in group commit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

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
