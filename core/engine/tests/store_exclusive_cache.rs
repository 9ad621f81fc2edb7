//! The aggregate cache of a store one process alone writes (`store::ExclusiveCache`): the store
//! suite unchanged, hits answered from memory with the very blob kept (so the decode memo hits
//! too), a failed commit forgets what it meant to write, a read that raced a commit never
//! brings back an older revision (also once the commit's entry was evicted), and the bounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};

use missionweaveprotocol::DescribeError;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, BYTES_PER_STRIPE, ENTRIES_PER_STRIPE, ExclusiveCache, GroupCommit,
    GroupHead, InMemoryStore, Receipt, ReceiptKey, ReplayPage, STRIPES, SnapshotPointer, Store,
    StoreError, Transaction,
};

mod suite {
    use super::{ExclusiveCache, GroupCommit, InMemoryStore};

    mod plain {
        use super::*;
        missionweaveprotocol_engine::store_test_suite!(
            || ExclusiveCache::new(InMemoryStore::new())
        );
    }

    mod grouped {
        use super::*;
        missionweaveprotocol_engine::store_test_suite!(|| ExclusiveCache::new(GroupCommit::new(
            InMemoryStore::new()
        )));
    }
}

type Hook = Box<dyn FnOnce() + Send>;

/// An in-memory store that counts aggregate reads and can run a hook in the middle of one
/// (after the value was read, before it is returned).
#[derive(Default)]
struct Probe {
    store: InMemoryStore,
    reads: AtomicUsize,
    hook: Mutex<Option<Hook>>,
}

impl Store for Probe {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.store.commit(tx)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let read = self.store.aggregate(key);
        let hook = self.hook.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        read
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.store.list(kind, id_prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.store.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.store.head(group)
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        self.store.replay(group, after, limit)
    }
    fn archive_before(&self, g: &str, b: u64, s: SnapshotPointer) -> Result<(), StoreError> {
        self.store.archive_before(g, b, s)
    }
}

fn key(id: &str) -> AggregateKey {
    AggregateKey::new("work_item", id)
}

fn put(store: &dyn Store, id: &str, expected: u64, value: &str) -> Result<(), StoreError> {
    let mut tx = Transaction::new();
    tx.put(key(id), expected, value.as_bytes().into());
    store.commit(tx)
}

#[test]
fn a_hit_is_the_kept_blob_and_does_not_read_the_store() {
    let cache = ExclusiveCache::new(Probe::default());
    put(&cache, "w", 0, r#"{"v":1}"#).unwrap();
    let first = cache.aggregate(&key("w")).unwrap().unwrap();
    let second = cache.aggregate(&key("w")).unwrap().unwrap();
    assert_eq!(first.revision, 1);
    assert!(Arc::ptr_eq(&first.value, &second.value), "one allocation");
    assert_eq!(
        cache.inner().reads.load(Ordering::SeqCst),
        0,
        "written, so kept"
    );
    assert!(cache.decoded_cache().is_some());

    // Written before the cache existed: one store read, then kept.
    let probe = Probe::default();
    put(&probe, "old", 0, r#"{"v":0}"#).unwrap();
    let cache = ExclusiveCache::new(probe);
    for _ in 0..3 {
        assert_eq!(cache.aggregate(&key("old")).unwrap().unwrap().revision, 1);
    }
    assert_eq!(cache.inner().reads.load(Ordering::SeqCst), 1);
    // Absent aggregates are not kept (a later commit creates them).
    assert!(cache.aggregate(&key("none")).unwrap().is_none());
    assert!(cache.aggregate(&key("none")).unwrap().is_none());
    assert_eq!(cache.inner().reads.load(Ordering::SeqCst), 3);
}

#[test]
fn a_refused_commit_changes_nothing_kept() {
    let cache = ExclusiveCache::new(Probe::default());
    put(&cache, "w", 0, r#"{"v":1}"#).unwrap();
    let refused = put(&cache, "w", 0, r#"{"v":"conflict"}"#).unwrap_err();
    assert_eq!(
        refused.wire_code(),
        missionweaveprotocol::WireCode::RevisionConflict
    );
    let read = cache.aggregate(&key("w")).unwrap().unwrap();
    assert_eq!((read.revision, &*read.value), (1, &br#"{"v":1}"#[..]));
    put(&cache, "w", 1, r#"{"v":2}"#).unwrap();
    assert_eq!(cache.aggregate(&key("w")).unwrap().unwrap().revision, 2);
}

/// A miss reads revision 1; before it returns, a commit writes revision 2 and so many other
/// aggregates that revision 2 is evicted again. The miss must not keep revision 1 (the
/// stripe's generation moved), so the next read asks the store and gets revision 2.
#[test]
fn a_read_that_raced_a_commit_never_brings_back_an_older_revision() {
    let probe = Probe::default();
    put(&probe, "w", 0, r#"{"v":1}"#).unwrap();
    let cache = Arc::new(ExclusiveCache::new(probe));
    let handle: Arc<OnceLock<Weak<ExclusiveCache<Probe>>>> = Arc::new(OnceLock::new());
    handle.set(Arc::downgrade(&cache)).unwrap();
    let for_hook = Arc::clone(&handle);
    *cache.inner().hook.lock().unwrap() = Some(Box::new(move || {
        let cache = for_hook.get().unwrap().upgrade().unwrap();
        put(&*cache, "w", 1, r#"{"v":2}"#).unwrap();
        let mut tx = Transaction::new();
        for i in 0..STRIPES * ENTRIES_PER_STRIPE * 2 {
            tx.put(key(&format!("filler-{i}")), 0, b"{}"[..].into());
        }
        cache.commit(tx).unwrap();
    }));
    let raced = cache.aggregate(&key("w")).unwrap().unwrap();
    assert_eq!(raced.revision, 1, "the read itself answers what it read");
    let reads = cache.inner().reads.load(Ordering::SeqCst);
    let now = cache.aggregate(&key("w")).unwrap().unwrap();
    assert_eq!(now.revision, 2, "never the raced revision 1");
    assert_eq!(
        cache.inner().reads.load(Ordering::SeqCst),
        reads + 1,
        "evicted: read from the store again"
    );
}

#[test]
fn the_cache_is_bounded_in_entries_and_bytes() {
    let cache = ExclusiveCache::new(InMemoryStore::new());
    let mut tx = Transaction::new();
    for i in 0..STRIPES * ENTRIES_PER_STRIPE + 1_000 {
        tx.put(key(&format!("small-{i}")), 0, b"{}"[..].into());
    }
    cache.commit(tx).unwrap();
    assert!(cache.len() <= STRIPES * ENTRIES_PER_STRIPE);

    let big = vec![b' '; 256 * 1024];
    let mut tx = Transaction::new();
    for i in 0..STRIPES * (BYTES_PER_STRIPE / big.len()) * 2 {
        tx.put(key(&format!("big-{i}")), 0, big.as_slice().into());
    }
    cache.commit(tx).unwrap();
    assert!(
        cache.bytes() <= STRIPES * BYTES_PER_STRIPE,
        "{}",
        cache.bytes()
    );

    // A value larger than a stripe is answered but never kept.
    let huge = vec![b' '; BYTES_PER_STRIPE + 1];
    let mut tx = Transaction::new();
    tx.put(key("huge"), 0, huge.as_slice().into());
    cache.commit(tx).unwrap();
    let before = cache.bytes();
    assert_eq!(
        cache.aggregate(&key("huge")).unwrap().unwrap().value.len(),
        huge.len()
    );
    assert!(cache.bytes() <= before);
}

#[test]
fn a_budget_of_zero_keeps_nothing() {
    let cache = ExclusiveCache::with_budget(Probe::default(), 0);
    put(&cache, "w", 0, r#"{"v":1}"#).unwrap();
    assert!(cache.is_empty());
    for _ in 0..2 {
        assert_eq!(cache.aggregate(&key("w")).unwrap().unwrap().revision, 1);
    }
    assert_eq!(cache.inner().reads.load(Ordering::SeqCst), 2);
}
