//! The Registry snapshot cache is bounded in bytes (issue 9, item 2): LRU eviction under a
//! configurable budget, unused entries evicted first, evicted snapshots still usable by the
//! resolvers that hold them, and budget 0 disables caching.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use missionweaveprotocol::registry::{
    DEFAULT_REGISTRY_CACHE_BUDGET, SnapshotCache, estimated_entry_bytes, registry_cache_stats,
    set_registry_cache_budget,
};
use missionweaveprotocol::{
    AgentRegistryKeyResolver, KeyRegistrySnapshot, SignedDocumentCodec, SignedDocumentKind,
};

fn registry_bytes() -> &'static [u8] {
    common::file("cryptography/keys/registry-valid.json")
}

/// A distinct revision of the 7-key Registry: same evidence, different bytes (and digest).
fn revision(n: usize) -> Vec<u8> {
    let mut bytes = registry_bytes().to_vec();
    bytes.extend(std::iter::repeat_n(b' ', n));
    bytes
}

/// The accounted size of `revision(n)`.
fn size(n: usize) -> usize {
    estimated_entry_bytes(revision(n).len(), 7)
}

#[test]
fn accounted_bytes_stay_within_the_budget() {
    let budget = size(0) * 7 / 2;
    let cache = SnapshotCache::new(budget);
    for n in 0..40 {
        let snapshot = cache.get_or_validate(&revision(n)).unwrap();
        assert_eq!(snapshot.len(), 7);
        let stats = cache.stats();
        assert!(stats.bytes <= budget, "{stats:?}");
        assert!(stats.entries <= 3, "{stats:?}");
        assert!(cache.contains(&revision(n)));
    }
    assert_eq!(cache.stats().entries, 3);
    // Shrinking the budget evicts at once.
    cache.set_budget(size(39) + 10);
    let stats = cache.stats();
    assert_eq!((stats.entries, stats.budget), (1, size(39) + 10));
    assert!(cache.contains(&revision(39)));
}

#[test]
fn hits_share_one_snapshot_and_misses_validate() {
    let cache = SnapshotCache::new(DEFAULT_REGISTRY_CACHE_BUDGET);
    let a = cache.get_or_validate(&revision(0)).unwrap();
    let b = cache.get_or_validate(&revision(0)).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let c = cache.get_or_validate(&revision(1)).unwrap();
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(cache.stats().bytes, size(0) + size(1));
    // Invalid evidence is cached too (its error), and accounted.
    let bad = b"{\"organizationId\":\"x\",\"bindings\":[]}";
    assert!(cache.get_or_validate(bad).is_err());
    assert!(cache.contains(bad));
    assert_eq!(
        cache.stats().bytes,
        size(0) + size(1) + estimated_entry_bytes(bad.len(), 0)
    );
}

#[test]
fn least_recently_used_is_evicted() {
    let cache = SnapshotCache::new(size(0) + size(1) + size(2) + size(3) - 1);
    for n in 0..3 {
        drop(cache.get_or_validate(&revision(n)));
    }
    drop(cache.get_or_validate(&revision(0))); // 0 is now the most recently used
    drop(cache.get_or_validate(&revision(3))); // evicts 1
    assert!(cache.contains(&revision(0)));
    assert!(!cache.contains(&revision(1)));
    assert!(cache.contains(&revision(2)) && cache.contains(&revision(3)));
    drop(cache.get_or_validate(&revision(4))); // evicts 2
    assert!(!cache.contains(&revision(2)));
    assert!(cache.contains(&revision(0)) && cache.contains(&revision(3)));
}

#[test]
fn unused_entries_are_evicted_before_held_ones() {
    let cache = SnapshotCache::new(size(0) + size(1) + size(2) + size(3) - 1);
    let held = cache.get_or_validate(&revision(0)).unwrap(); // oldest, but held
    drop(cache.get_or_validate(&revision(1)));
    drop(cache.get_or_validate(&revision(2)));
    drop(cache.get_or_validate(&revision(3))); // evicts 1 (unused), not 0
    assert!(cache.contains(&revision(0)) && !cache.contains(&revision(1)));
    drop(cache.get_or_validate(&revision(4))); // evicts 2
    assert!(cache.contains(&revision(0)) && !cache.contains(&revision(2)));
    drop(held);
    drop(cache.get_or_validate(&revision(5))); // 0 is unused now and the oldest
    assert!(!cache.contains(&revision(0)));
    assert!(cache.contains(&revision(3)) && cache.contains(&revision(4)));
}

#[test]
fn a_zero_budget_or_an_oversized_entry_is_not_cached() {
    let cache = SnapshotCache::new(0);
    let a = cache.get_or_validate(&revision(0)).unwrap();
    let b = cache.get_or_validate(&revision(0)).unwrap();
    assert!(!Arc::ptr_eq(&a, &b));
    assert_eq!(cache.stats().entries, 0);
    assert_eq!(cache.stats().bytes, 0);
    let small = SnapshotCache::new(size(0) - 1);
    drop(small.get_or_validate(&revision(0)));
    assert_eq!(small.stats().entries, 0);
    let exact = SnapshotCache::new(size(0));
    drop(exact.get_or_validate(&revision(0)));
    assert_eq!(exact.stats().entries, 1);
    exact.clear();
    assert_eq!(exact.stats().bytes, 0);
}

/// The process-wide cache: one test, since the budget is global.
#[test]
fn the_process_wide_cache_and_held_snapshots() {
    assert_eq!(registry_cache_stats().budget, DEFAULT_REGISTRY_CACHE_BUDGET);
    set_registry_cache_budget(size(0));
    let resolver = AgentRegistryKeyResolver::new(&revision(0));
    assert!(
        registry_cache_stats().entries == 1,
        "{:?}",
        registry_cache_stats()
    );
    // A new revision evicts the held one from the cache...
    let other = KeyRegistrySnapshot::from_bytes_cached(&revision(1)).unwrap();
    assert_eq!(other.len(), 7);
    let stats = registry_cache_stats();
    assert!(
        stats.entries == 1 && stats.bytes <= stats.budget,
        "{stats:?}"
    );
    // ...and the resolver still verifies with it.
    let verified = SignedDocumentCodec::new()
        .verify(
            SignedDocumentKind::Command,
            common::valid_document("command"),
            &resolver,
        )
        .unwrap();
    assert!(!verified.key_id.is_empty());
    // Budget 0 disables the cache.
    set_registry_cache_budget(0);
    assert_eq!(registry_cache_stats().entries, 0);
    let a = KeyRegistrySnapshot::from_bytes_cached(&revision(2)).unwrap();
    let b = KeyRegistrySnapshot::from_bytes_cached(&revision(2)).unwrap();
    assert!(!Arc::ptr_eq(&a, &b));
    assert_eq!(registry_cache_stats().bytes, 0);
    set_registry_cache_budget(DEFAULT_REGISTRY_CACHE_BUDGET);
    let a = KeyRegistrySnapshot::from_bytes_cached(&revision(2)).unwrap();
    let b = KeyRegistrySnapshot::from_bytes_cached(&revision(2)).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
}
