//! Property: random interleavings of transactions built from stale or fresh reads keep every
//! Group log contiguous from 1 (§4.7, §15.2), advance revisions by exactly one per committed
//! write (§15.3), keep receipts first-wins (§15.1), and a refused commit leaves nothing behind.
//! A plain model predicts which commits must succeed; the store must agree on every step.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, EventRef, InMemoryStore, Receipt, ReceiptKey, Store, StoreError,
    Transaction,
};
use proptest::prelude::*;

const GROUPS: [&str; 3] = ["g0", "g1", "g2"];
const KEYS: [(&str, &str); 3] = [("mission", "m0"), ("work_item", "w0"), ("work_item", "w1")];
const ACTIONS: [&str; 3] = ["a0", "a1", "a2"];
const HASHES: [&str; 2] = ["sha256:h0", "sha256:h1"];
const CLIENTS: usize = 3;

#[derive(Debug, Clone)]
struct TxSpec {
    appends: Vec<(usize, u64)>,
    skew: i64,
    writes: Vec<(usize, bool)>,
    receipt: Option<(usize, usize)>,
}

#[derive(Debug, Clone)]
enum Op {
    Read(usize),
    Commit(usize, TxSpec),
    Batch(usize, TxSpec, TxSpec),
}

fn tx_spec() -> impl Strategy<Value = TxSpec> {
    (
        prop::collection::vec((0..GROUPS.len(), 1..4u64), 0..3),
        prop_oneof![6 => Just(0i64), 1 => Just(-1i64), 1 => Just(1i64)],
        prop::collection::vec((0..KEYS.len(), any::<bool>()), 0..3),
        prop::option::of((0..ACTIONS.len(), 0..HASHES.len())),
    )
        .prop_map(|(appends, skew, writes, receipt)| TxSpec {
            appends,
            skew,
            writes,
            receipt,
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0..CLIENTS).prop_map(Op::Read),
        5 => (0..CLIENTS, tx_spec()).prop_map(|(c, t)| Op::Commit(c, t)),
        1 => (0..CLIENTS, tx_spec(), tx_spec()).prop_map(|(c, a, b)| Op::Batch(c, a, b)),
    ]
}

fn key(i: usize) -> AggregateKey {
    AggregateKey::new(KEYS[i].0, KEYS[i].1)
}

fn receipt_key(i: usize) -> ReceiptKey {
    ReceiptKey::new("agent", "x", ACTIONS[i])
}

/// What a client last read: next sequences and revisions.
#[derive(Debug, Clone, Default)]
struct View {
    next: HashMap<usize, u64>,
    revision: HashMap<usize, u64>,
}

/// The model: every log as its Event IDs, every revision with its value, every receipt hash.
#[derive(Debug, Clone, Default, PartialEq)]
struct Model {
    logs: HashMap<usize, Vec<String>>,
    aggregates: HashMap<usize, (u64, Vec<u8>)>,
    receipts: HashMap<usize, String>,
}

impl Model {
    fn next(&self, g: usize) -> u64 {
        self.logs.get(&g).map_or(0, Vec::len) as u64 + 1
    }
    fn revision(&self, k: usize) -> u64 {
        self.aggregates.get(&k).map_or(0, |a| a.0)
    }

    /// Applies `tx` if every expectation holds; returns whether it did.
    fn try_apply(&mut self, tx: &Built) -> bool {
        let mut next = self.clone();
        for (action, hash) in &tx.receipts {
            if next.receipts.insert(*action, hash.clone()).is_some() {
                return false;
            }
        }
        for (g, sequence, id) in &tx.appends {
            if *sequence != next.next(*g) {
                return false;
            }
            next.logs.entry(*g).or_default().push(id.clone());
        }
        for (k, expected, value) in &tx.writes {
            if *expected != next.revision(*k) {
                return false;
            }
            if let Some(value) = value {
                next.aggregates.insert(*k, (expected + 1, value.clone()));
            }
        }
        *self = next;
        true
    }
}

/// A transaction in model terms, and the same as a store transaction.
struct Built {
    receipts: Vec<(usize, String)>,
    appends: Vec<(usize, u64, String)>,
    writes: Vec<(usize, u64, Option<Vec<u8>>)>,
}

fn build(view: &View, spec: &TxSpec, ids: &mut u64) -> (Built, Transaction) {
    let mut built = Built {
        receipts: Vec::new(),
        appends: Vec::new(),
        writes: Vec::new(),
    };
    let mut tx = Transaction::new();
    if let Some((action, hash)) = spec.receipt {
        built.receipts.push((action, HASHES[hash].to_owned()));
        tx.record_receipt(
            receipt_key(action),
            Receipt {
                signing_hash: HASHES[hash].to_owned(),
                first_event: EventRef {
                    event_id: format!("first-{action}"),
                    position: None,
                },
            },
        );
    }
    let mut next = view.next.clone();
    for (n, (g, count)) in spec.appends.iter().enumerate() {
        let sequence = next.entry(*g).or_insert(1);
        if n == 0 {
            *sequence = sequence.saturating_add_signed(spec.skew);
        }
        for _ in 0..*count {
            *ids += 1;
            let id = format!("e{ids}");
            built.appends.push((*g, *sequence, id.clone()));
            tx.append(
                GROUPS[*g],
                EventRecord::new(*sequence, &id, id.clone().into_bytes()),
            );
            *sequence += 1;
        }
    }
    let mut revision = view.revision.clone();
    for (k, check_only) in &spec.writes {
        let current = revision.entry(*k).or_insert(0);
        if *check_only {
            built.writes.push((*k, *current, None));
            tx.check(key(*k), *current);
        } else {
            *ids += 1;
            let value = format!("v{ids}").into_bytes();
            built.writes.push((*k, *current, Some(value.clone())));
            tx.put(key(*k), *current, value.into());
            *current += 1;
        }
    }
    (built, tx)
}

/// Everything the store holds for the pools, read back through the public contract; every
/// log is checked contiguous from 1 on the way.
fn dump(store: &InMemoryStore, page: usize) -> Model {
    let mut model = Model::default();
    for (g, group) in GROUPS.iter().enumerate() {
        let head = store.head(group).unwrap();
        let mut after = 0;
        let mut ids = Vec::new();
        loop {
            let p = store.replay(group, after, page).unwrap();
            for e in &p.events {
                assert_eq!(e.sequence, after + 1, "gap or duplicate in {group}");
                assert_eq!(&*e.body, e.event_id.as_bytes());
                after = e.sequence;
                ids.push(e.event_id.to_string());
            }
            if p.continuation.is_none() {
                break;
            }
        }
        assert_eq!(after, head.last_sequence());
        if !ids.is_empty() {
            model.logs.insert(g, ids);
        }
    }
    for k in 0..KEYS.len() {
        if let Some(a) = store.aggregate(&key(k)).unwrap() {
            model.aggregates.insert(k, (a.revision, a.value.to_vec()));
        }
    }
    for a in 0..ACTIONS.len() {
        if let Some(r) = store.receipt(&receipt_key(a)).unwrap() {
            model.receipts.insert(a, r.signing_hash);
        }
    }
    model
}

fn check(result: &Result<(), StoreError>, predicted: bool) {
    match result {
        Ok(()) => assert!(predicted, "the store accepted what the model refuses"),
        Err(e) => {
            assert!(!predicted, "the store refused what the model accepts: {e}");
            assert!(
                e.is_contention() || matches!(e, StoreError::ActionIdCollision { .. }),
                "{e}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn interleaved_transactions_keep_every_log_contiguous(
        ops in prop::collection::vec(op(), 1..40),
        page in 1..6usize,
    ) {
        let store = InMemoryStore::new();
        let mut model = Model::default();
        let mut views = vec![View::default(); CLIENTS];
        let mut ids = 0u64;
        for op in ops {
            match op {
                Op::Read(c) => {
                    let view = &mut views[c];
                    for (g, group) in GROUPS.iter().enumerate() {
                        view.next.insert(g, store.head(group).unwrap().next_sequence);
                    }
                    for k in 0..KEYS.len() {
                        let revision = store.aggregate(&key(k)).unwrap().map_or(0, |a| a.revision);
                        view.revision.insert(k, revision);
                    }
                }
                Op::Commit(c, spec) => {
                    let (built, tx) = build(&views[c], &spec, &mut ids);
                    let predicted = model.try_apply(&built);
                    check(&store.commit(tx), predicted);
                }
                Op::Batch(c, a, b) => {
                    let (built_a, tx_a) = build(&views[c], &a, &mut ids);
                    let (built_b, tx_b) = build(&views[c], &b, &mut ids);
                    let predicted = [model.try_apply(&built_a), model.try_apply(&built_b)];
                    let results = store.commit_many(vec![tx_a, tx_b]);
                    prop_assert_eq!(results.len(), 2);
                    check(&results[0], predicted[0]);
                    check(&results[1], predicted[1]);
                }
            }
            prop_assert_eq!(dump(&store, page), model.clone());
        }
    }
}
