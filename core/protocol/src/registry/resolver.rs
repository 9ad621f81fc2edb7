//! The key-resolution adapter over Registry evidence given as bytes.

use std::sync::Arc;

use super::cache::Entry;
use super::{KeyRegistrySnapshot, KeyResolutionRequest, KeyResolver, RegistryError};

/// The key-resolution adapter for Registry evidence given as bytes in the cryptography bundle's
/// fixture format (`registry-fixture.schema.json`). The evidence is validated at construction
/// and any failure is reported at stage 4 when a document is verified. The resolver holds its
/// snapshot by `Arc`: it keeps working after the process-wide cache evicted the snapshot.
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
