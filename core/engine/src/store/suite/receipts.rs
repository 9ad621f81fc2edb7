//! Deduplication receipts (§15.1).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

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

/// The transaction of an Organization-scoped Command (`docs/store.md`, "Organization-scoped
/// Events"): a receipt without a Group position, the Event stored as an aggregate under its
/// Event ID over revision 0, other aggregate writes and appends to Groups, all or nothing. A
/// second Event with the same ID is refused (`REVISION_CONFLICT`) and leaves nothing.
pub fn organization_scoped_events_commit_atomically<S: Store>(store: &S) {
    let event_key = AggregateKey::new("organization_event", "urn:uuid:e1");
    let session = AggregateKey::new("agent_session", "urn:agent:a");
    let org_receipt = |action: &str| Receipt {
        signing_hash: format!("sha256:{action}"),
        first_event: EventRef {
            event_id: "urn:uuid:e1".into(),
            position: None,
        },
    };
    let key = ReceiptKey::new("service", "urn:service:identity", "open-1");
    let mut tx = appends("g", 1, 1);
    tx.record_receipt(key.clone(), org_receipt("open-1"))
        .put(event_key.clone(), 0, blob(r#"{"eventId":"urn:uuid:e1"}"#))
        .put(session.clone(), 0, blob(r#"{"sessionEpoch":1}"#));
    store.commit(tx).unwrap();
    let stored = store.aggregate(&event_key).unwrap().unwrap();
    assert_eq!(
        (stored.revision, &*stored.value),
        (1, &br#"{"eventId":"urn:uuid:e1"}"#[..])
    );
    assert_eq!(
        store.dedup(&key, "sha256:open-1").unwrap(),
        Some(org_receipt("open-1"))
    );
    assert_eq!(store.head("g").unwrap().next_sequence, 2);
    // The same Event ID again: refused, and nothing of the transaction is written.
    let other = ReceiptKey::new("service", "urn:service:identity", "open-2");
    let mut tx = appends("g", 2, 1);
    tx.record_receipt(other.clone(), org_receipt("open-2"))
        .put(event_key.clone(), 0, blob("{}"))
        .put(session.clone(), 1, blob(r#"{"sessionEpoch":2}"#));
    let e = store.commit(tx).unwrap_err();
    assert_describes(&e, WireCode::RevisionConflict, "revision_conflict");
    assert_eq!(store.receipt(&other).unwrap(), None);
    assert_eq!(store.aggregate(&session).unwrap().unwrap().revision, 1);
    assert_eq!(store.aggregate(&event_key).unwrap().unwrap().revision, 1);
    assert_eq!(store.head("g").unwrap().next_sequence, 2);
}
