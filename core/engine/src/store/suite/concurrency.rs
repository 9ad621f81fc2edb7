//! Several threads on one store (§4.7, §15.1, §15.2).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

/// §4.7, §15.2 under contention: N threads appending to one Group, each re-reading the head
/// after a conflict, leave exactly `1..=N·K` with every Event once, each thread's in order.
/// Also N threads racing one Action ID: exactly one commit applies.
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
