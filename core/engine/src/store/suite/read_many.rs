//! `Store::read_many`: the same answers as the single reads, in the order asked.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::store::{Read, ReadValue, read_each};

/// `read_many` answers every read as its single read does — present and absent receipts,
/// aggregates and heads, a key asked twice, an archived head and keys no backend column can
/// hold (a NUL) — and an empty list with an empty list.
pub fn read_many_answers_as_single_reads<S: Store>(store: &S) {
    let key = ReceiptKey::new("agent", "a", "act-1");
    let mut tx = appends("g", 1, 3);
    tx.record_receipt(key.clone(), receipt("sha256:1", "g", 1));
    tx.put(AggregateKey::new("mission", "m"), 0, blob(r#"{"m":1}"#));
    tx.put(AggregateKey::new("group", "g"), 0, blob(r#"{"g":1}"#));
    store.commit(tx).unwrap();
    let mut tx = Transaction::new();
    tx.put(AggregateKey::new("mission", "m"), 1, blob(r#"{"m":2}"#));
    store.commit(tx).unwrap();
    store
        .archive_before(
            "g",
            2,
            SnapshotPointer {
                artifact_hash: "sha256:snapshot".into(),
            },
        )
        .unwrap();
    let reads = vec![
        Read::Head("g".into()),
        Read::Aggregate(AggregateKey::new("mission", "m")),
        Read::Receipt(key.clone()),
        Read::Aggregate(AggregateKey::new("mission", "absent")),
        Read::Receipt(ReceiptKey::new("agent", "a", "act-absent")),
        Read::Head("absent".into()),
        Read::Aggregate(AggregateKey::new("group", "g")),
        Read::Aggregate(AggregateKey::new("mission", "m")),
        Read::Aggregate(AggregateKey::new("mission", "nul\0id")),
        Read::Receipt(ReceiptKey::new("agent", "a\0", "act-1")),
        Read::Head("g\0".into()),
    ];
    let answers = store.read_many(&reads).unwrap();
    assert_eq!(answers, read_each(store, &reads).unwrap());
    assert_eq!(answers.len(), reads.len());
    let ReadValue::Aggregate(Some(mission)) = &answers[1] else {
        panic!("{:?}", answers[1]);
    };
    assert_eq!(
        (mission.revision, &mission.value[..]),
        (2, &br#"{"m":2}"#[..])
    );
    let ReadValue::Head(head) = &answers[0] else {
        panic!("{:?}", answers[0]);
    };
    assert_eq!((head.next_sequence, head.first_online), (4, 2));
    assert_eq!(
        head.snapshot.as_ref().map(|s| s.artifact_hash.as_str()),
        Some("sha256:snapshot")
    );
    assert_eq!(answers[3], ReadValue::Aggregate(None));
    assert_eq!(answers[4], ReadValue::Receipt(None));
    assert_eq!(store.read_many(&[]).unwrap(), Vec::new());
}
