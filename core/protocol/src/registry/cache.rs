//! A byte-bounded cache of validated Registry snapshots keyed by the SHA-256 of their bytes, so
//! callers that hand over Registry bytes on every call validate each distinct snapshot once.
//!
//! Bound: the accounted bytes of the cached entries never exceed the budget (default
//! [`DEFAULT_REGISTRY_CACHE_BUDGET`], set with [`set_registry_cache_budget`]; 0 disables the
//! cache), and there are at most [`MAX_REGISTRY_CACHE_ENTRIES`] entries. An entry's bytes are
//! *estimated* from the snapshot ([`estimated_entry_bytes`]).
//!
//! Eviction policy, when an insertion would pass the budget or the entry limit: first the least
//! recently used entry that no one else holds (only the cache has its `Arc`, so dropping it
//! frees the memory), then the least recently used entry of all (a resolver still holding it
//! keeps it alive and working; it just leaves the cache's accounting). An entry larger than the
//! whole budget is returned uncached. A hit is one hash lookup and a counter update: O(1) in the
//! Registry size (the SHA-256 of the bytes is the caller's lookup key and is linear in them).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use sha2::{Digest, Sha256};

use super::{KeyRegistrySnapshot, RegistryError};

/// The cached outcome of validating some bytes: a shared snapshot or why they are unusable.
pub(crate) type Entry = Result<Arc<KeyRegistrySnapshot>, RegistryError>;

/// The default byte budget of the process-wide cache: 128 MiB. It holds one 100 k-key Registry
/// (≈ 105 MB accounted), so callers that pass such a Registry as bytes on every call do not
/// revalidate it each time, or up to [`MAX_REGISTRY_CACHE_ENTRIES`] ordinary ones (≈ 8.5 kB
/// each for the 7-key fixture).
pub const DEFAULT_REGISTRY_CACHE_BUDGET: usize = 128 * 1024 * 1024;

/// At most this many entries, whatever the budget: bounds the eviction scan on a miss.
pub const MAX_REGISTRY_CACHE_ENTRIES: usize = 1024;

/// Per-entry overhead: the map slot, the digest key and the `Arc` and snapshot headers.
const ENTRY_OVERHEAD: usize = 256;
/// Per-binding cost beyond the input text: the hash-map slot (up to half the table empty after
/// a growth), the key ID stored as the map key and in the binding, the decoded public key
/// (compressed and decompressed points), parsed instants and `String`/`Option` headers.
const BINDING_OVERHEAD: usize = 768;

/// The bytes an entry is accounted for: the input length (every text the snapshot keeps comes
/// from it, and it bounds what an error keeps) plus [`BINDING_OVERHEAD`] per binding plus
/// [`ENTRY_OVERHEAD`]. Measured with a counting allocator against the live bytes a snapshot
/// keeps (generated Registries as in `bench_verification`): 7 keys 5.2 kB kept / 8.5 kB
/// accounted, 200 keys 132 kB / 209 kB, 2 000 keys 1.96 MB / 2.09 MB, 20 000 keys 16.2 MB /
/// 20.9 MB, 100 000 keys (28 MB input) 67.4 MB / 104.8 MB: never under, at most ≈ 1.6 × over.
pub fn estimated_entry_bytes(input_len: usize, bindings: usize) -> usize {
    input_len
        .saturating_add(bindings.saturating_mul(BINDING_OVERHEAD))
        .saturating_add(ENTRY_OVERHEAD)
}

/// What a cache holds right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistryCacheStats {
    /// Cached entries.
    pub entries: usize,
    /// Sum of their [`estimated_entry_bytes`].
    pub bytes: usize,
    /// The budget the sum never exceeds.
    pub budget: usize,
}

struct Slot {
    entry: Entry,
    bytes: usize,
    last_used: u64,
}

impl Slot {
    /// Whether only the cache holds the snapshot (errors are never held elsewhere).
    fn unused(&self) -> bool {
        self.entry
            .as_ref()
            .map_or(true, |snapshot| Arc::strong_count(snapshot) == 1)
    }
}

struct State {
    slots: HashMap<[u8; 32], Slot>,
    bytes: usize,
    budget: usize,
    clock: u64,
}

/// A byte-bounded LRU cache of validated snapshots (see the module documentation). The
/// process-wide instance behind [`KeyRegistrySnapshot::from_bytes_cached`] is one of these.
pub struct SnapshotCache {
    state: Mutex<State>,
}

impl core::fmt::Debug for SnapshotCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SnapshotCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl SnapshotCache {
    /// An empty cache with a byte budget (0: nothing is cached).
    pub fn new(budget: usize) -> Self {
        Self {
            state: Mutex::new(State {
                slots: HashMap::new(),
                bytes: 0,
                budget,
                clock: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map inconsistent with `bytes` in a
        // way that matters for safety; keep serving.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Validates `bytes` once per distinct content while cached and returns the shared snapshot.
    pub fn get_or_validate(&self, bytes: &[u8]) -> Entry {
        let digest: [u8; 32] = Sha256::digest(bytes).into();
        {
            let mut state = self.state();
            state.clock += 1;
            let now = state.clock;
            if let Some(slot) = state.slots.get_mut(&digest) {
                slot.last_used = now;
                return slot.entry.clone();
            }
        }
        // Validated outside the lock: other threads keep hitting the cache meanwhile.
        let entry = KeyRegistrySnapshot::from_bytes(bytes).map(Arc::new);
        let bindings = entry.as_ref().map_or(0, |snapshot| snapshot.len());
        self.insert(
            digest,
            entry.clone(),
            estimated_entry_bytes(bytes.len(), bindings),
        );
        entry
    }

    fn insert(&self, digest: [u8; 32], entry: Entry, bytes: usize) {
        let mut state = self.state();
        if bytes > state.budget || state.slots.contains_key(&digest) {
            return;
        }
        let budget = state.budget;
        Self::evict_until(&mut state, |s| {
            s.bytes + bytes <= budget && s.slots.len() < MAX_REGISTRY_CACHE_ENTRIES
        });
        state.clock += 1;
        let last_used = state.clock;
        state.bytes += bytes;
        state.slots.insert(
            digest,
            Slot {
                entry,
                bytes,
                last_used,
            },
        );
    }

    /// Evicts (unused first, then least recently used) until `fits` holds.
    fn evict_until(state: &mut State, fits: impl Fn(&State) -> bool) {
        while !fits(state) {
            let victim = state
                .slots
                .iter()
                .min_by_key(|(_, slot)| (!slot.unused(), slot.last_used))
                .map(|(digest, _)| *digest);
            let Some(victim) = victim else {
                return;
            };
            if let Some(slot) = state.slots.remove(&victim) {
                state.bytes -= slot.bytes;
            }
        }
    }

    /// Changes the budget, evicting down to it at once.
    pub fn set_budget(&self, budget: usize) {
        let mut state = self.state();
        state.budget = budget;
        Self::evict_until(&mut state, |s| s.bytes <= budget);
    }

    /// Whether the snapshot of exactly these bytes is cached.
    pub fn contains(&self, bytes: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(bytes).into();
        self.state().slots.contains_key(&digest)
    }

    /// Entries, accounted bytes and budget.
    pub fn stats(&self) -> RegistryCacheStats {
        let state = self.state();
        RegistryCacheStats {
            entries: state.slots.len(),
            bytes: state.bytes,
            budget: state.budget,
        }
    }

    /// Drops every entry (resolvers holding snapshots keep them).
    pub fn clear(&self) {
        let mut state = self.state();
        state.slots.clear();
        state.bytes = 0;
    }
}

fn global() -> &'static SnapshotCache {
    static CACHE: OnceLock<SnapshotCache> = OnceLock::new();
    CACHE.get_or_init(|| SnapshotCache::new(DEFAULT_REGISTRY_CACHE_BUDGET))
}

/// Sets the byte budget of the process-wide snapshot cache (0 disables it), evicting at once.
pub fn set_registry_cache_budget(bytes: usize) {
    global().set_budget(bytes);
}

/// What the process-wide snapshot cache holds.
pub fn registry_cache_stats() -> RegistryCacheStats {
    global().stats()
}

impl KeyRegistrySnapshot {
    /// Validates `bytes` once per distinct content (while it stays in the process-wide cache)
    /// and returns the shared snapshot.
    pub fn from_bytes_cached(bytes: &[u8]) -> Result<Arc<Self>, RegistryError> {
        global().get_or_validate(bytes)
    }
}
