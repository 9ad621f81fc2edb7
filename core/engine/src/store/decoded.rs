//! A bounded memo of decoded aggregates: what the engine parsed (and schema-checked) from a
//! stored aggregate's bytes, kept so that the next read of the same bytes does not parse them
//! again (issue 10: `perform` of a renewal re-read the same Group, Membership and session on
//! every Command).
//!
//! An entry is keyed by the aggregate's key and holds the exact [`Blob`] it was decoded from (a
//! clone of the `Arc`) and its revision. A lookup hits only when the stored aggregate it is
//! given has the same revision and is *the same allocation* (`Arc::ptr_eq`): the entry keeps
//! that allocation alive, so its address cannot be reused by other bytes, and stored blobs are
//! immutable. A hit therefore returns exactly what decoding those bytes returned; any rewrite
//! of the aggregate stores a new blob and misses. Only successful decodes are kept.
//!
//! Bound: at most [`DecodedCache::CAPACITY`] entries (first in, first out), each one decoded
//! aggregate plus the blob it came from.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use crate::store::aggregate::{Aggregate, AggregateKey};
use crate::store::blob::Blob;

type Decoded = Arc<dyn Any + Send + Sync>;

struct Entry {
    revision: u64,
    blob: Blob,
    value: Decoded,
}

#[derive(Default)]
struct Entries {
    map: HashMap<AggregateKey, Entry>,
    /// Insertion order of the keys in `map` (each once), oldest first.
    order: VecDeque<AggregateKey>,
}

/// The memo (see the module documentation). Send + Sync; one per store.
#[derive(Default)]
pub struct DecodedCache {
    entries: Mutex<Entries>,
}

impl std::fmt::Debug for DecodedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodedCache")
            .field("entries", &self.len())
            .finish()
    }
}

impl DecodedCache {
    /// The most entries kept.
    pub const CAPACITY: usize = 4096;

    /// An empty memo.
    pub fn new() -> Self {
        Self::default()
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        // Every mutation below leaves `map` and `order` consistent before it can panic.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many entries are kept (at most [`Self::CAPACITY`]).
    pub fn len(&self) -> usize {
        self.entries().map.len()
    }

    /// Whether the memo is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value decoded from exactly `stored` under `key`, if it is kept as a `T`.
    pub fn get<T: Any + Send + Sync>(
        &self,
        key: &AggregateKey,
        stored: &Aggregate,
    ) -> Option<Arc<T>> {
        let entries = self.entries();
        let entry = entries.map.get(key)?;
        if entry.revision != stored.revision || !Arc::ptr_eq(&entry.blob, &stored.value) {
            return None;
        }
        Arc::clone(&entry.value).downcast::<T>().ok()
    }

    /// Keeps `value`, decoded from `stored` under `key`, evicting the oldest entry when full.
    pub fn put<T: Any + Send + Sync>(&self, key: &AggregateKey, stored: &Aggregate, value: Arc<T>) {
        let entry = Entry {
            revision: stored.revision,
            blob: Arc::clone(&stored.value),
            value,
        };
        let mut entries = self.entries();
        if let Some(slot) = entries.map.get_mut(key) {
            *slot = entry;
            return;
        }
        while entries.map.len() >= Self::CAPACITY {
            let Some(oldest) = entries.order.pop_front() else {
                break;
            };
            entries.map.remove(&oldest);
        }
        entries.order.push_back(key.clone());
        entries.map.insert(key.clone(), entry);
    }
}

/// `decode(stored)` through `store`'s memo when it keeps one ([`super::Store::decoded_cache`]),
/// else decoded afresh. Errors are never memoized.
pub(crate) fn decode_shared<T, E>(
    store: &dyn super::seam::Store,
    key: &AggregateKey,
    stored: &Aggregate,
    decode: impl FnOnce(&Aggregate) -> Result<T, E>,
) -> Result<Arc<T>, E>
where
    T: Any + Send + Sync,
{
    let Some(cache) = store.decoded_cache() else {
        return decode(stored).map(Arc::new);
    };
    if let Some(hit) = cache.get::<T>(key, stored) {
        return Ok(hit);
    }
    let value = Arc::new(decode(stored)?);
    cache.put(key, stored, Arc::clone(&value));
    Ok(value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn stored(revision: u64, bytes: &[u8]) -> Aggregate {
        Aggregate {
            revision,
            value: Blob::from(bytes),
        }
    }

    #[test]
    fn hits_only_the_same_blob_at_the_same_revision() {
        let cache = DecodedCache::new();
        let key = AggregateKey::new("k", "a");
        let first = stored(1, b"{}");
        cache.put(&key, &first, Arc::new(7u32));
        assert_eq!(cache.get::<u32>(&key, &first).as_deref(), Some(&7));
        // Same bytes in another allocation, another revision, another type: misses.
        assert!(cache.get::<u32>(&key, &stored(1, b"{}")).is_none());
        let other_revision = Aggregate {
            revision: 2,
            value: Arc::clone(&first.value),
        };
        assert!(cache.get::<u32>(&key, &other_revision).is_none());
        assert!(cache.get::<String>(&key, &first).is_none());
        assert!(
            cache
                .get::<u32>(&AggregateKey::new("k", "b"), &first)
                .is_none()
        );
    }

    #[test]
    fn stays_within_its_capacity() {
        let cache = DecodedCache::new();
        let blob = stored(1, b"1");
        for i in 0..DecodedCache::CAPACITY + 10 {
            cache.put(&AggregateKey::new("k", i.to_string()), &blob, Arc::new(i));
            // Rewriting a kept key does not grow it.
            cache.put(&AggregateKey::new("k", i.to_string()), &blob, Arc::new(i));
        }
        assert_eq!(cache.len(), DecodedCache::CAPACITY);
        // The oldest went first; the newest is kept.
        assert!(
            cache
                .get::<usize>(&AggregateKey::new("k", "0"), &blob)
                .is_none()
        );
        let last = (DecodedCache::CAPACITY + 9).to_string();
        assert!(
            cache
                .get::<usize>(&AggregateKey::new("k", last), &blob)
                .is_some()
        );
    }
}
