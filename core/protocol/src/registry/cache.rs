//! A process-wide cache of validated snapshots keyed by the SHA-256 of their bytes, so callers
//! that hand over Registry bytes on every call validate each distinct snapshot once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use sha2::{Digest, Sha256};

use super::{KeyRegistrySnapshot, KeyResolutionRequest, KeyResolver, RegistryError};

/// Distinct snapshots kept; the cache is cleared when it grows past this.
const CACHE_CAPACITY: usize = 256;

type Entry = Result<Arc<KeyRegistrySnapshot>, RegistryError>;

fn cache() -> &'static Mutex<HashMap<[u8; 32], Entry>> {
    static CACHE: OnceLock<Mutex<HashMap<[u8; 32], Entry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

impl KeyRegistrySnapshot {
    /// Validates `bytes` once per distinct content and returns the shared snapshot.
    pub fn from_bytes_cached(bytes: &[u8]) -> Result<Arc<Self>, RegistryError> {
        let digest: [u8; 32] = Sha256::digest(bytes).into();
        if let Ok(map) = cache().lock()
            && let Some(entry) = map.get(&digest)
        {
            return entry.clone();
        }
        let entry = Self::from_bytes(bytes).map(Arc::new);
        if let Ok(mut map) = cache().lock() {
            if map.len() >= CACHE_CAPACITY {
                map.clear();
            }
            map.insert(digest, entry.clone());
        }
        entry
    }
}

/// The key-resolution adapter for Registry evidence given as bytes in the cryptography bundle's
/// fixture format (`registry-fixture.schema.json`). The evidence is validated at construction
/// and any failure is reported at stage 4 when a document is verified.
#[derive(Debug, Clone)]
pub struct AgentRegistryKeyResolver {
    evidence: Entry,
}

impl AgentRegistryKeyResolver {
    /// Validates (or finds in the cache) the Registry evidence bytes.
    pub fn new(registry_bytes: &[u8]) -> Self {
        Self {
            evidence: KeyRegistrySnapshot::from_bytes_cached(registry_bytes),
        }
    }

    /// A resolver over an already validated snapshot.
    pub fn from_snapshot(snapshot: Arc<KeyRegistrySnapshot>) -> Self {
        Self {
            evidence: Ok(snapshot),
        }
    }

    /// The validated snapshot, or why the evidence is unusable.
    pub fn snapshot(&self) -> Result<&Arc<KeyRegistrySnapshot>, &RegistryError> {
        self.evidence.as_ref()
    }
}

impl KeyResolver for AgentRegistryKeyResolver {
    fn registry_evidence(
        &self,
        _: &KeyResolutionRequest<'_>,
    ) -> Result<Arc<KeyRegistrySnapshot>, RegistryError> {
        self.evidence.clone()
    }
}
