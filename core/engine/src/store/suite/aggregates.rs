//! Aggregates and their revisions (§15.3).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

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
