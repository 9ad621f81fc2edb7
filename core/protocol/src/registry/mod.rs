//! Registry evidence and key resolution (§6.4 stage 4). A complete Organization-scoped Registry
//! snapshot is validated once (immutable bindings, no key reuse or aliasing, append-only validity
//! history) and then resolves keys in O(1), so verification cost does not grow with the Registry.

mod builder;
mod cache;
mod error;
mod resolver;
mod snapshot;

pub use builder::{RegistryBuilder, ValidityRecord};
pub use cache::{
    DEFAULT_REGISTRY_CACHE_BUDGET, MAX_REGISTRY_CACHE_ENTRIES, RegistryCacheStats, SnapshotCache,
    estimated_entry_bytes, registry_cache_stats, set_registry_cache_budget,
};
pub use error::{RegistryError, RegistryErrorReason};
pub use resolver::AgentRegistryKeyResolver;
pub use snapshot::{KeyBinding, KeyRegistrySnapshot};

use std::sync::Arc;

use crate::principal::Principal;
use crate::schema_formats::Timestamp;
use crate::signed_documents::SignedDocumentKind;

/// Who must have signed (§6.4 profile table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectedSigner {
    /// Agent Cards: any `service` Principal binding (authorization is checked after verification).
    ServicePrincipal,
    /// Exactly this Principal.
    Principal(Principal),
}

/// What the verifier asks the resolver for. The key ID is routing context only: the resolver
/// must return complete Organization-wide evidence, never a key-filtered projection.
#[derive(Debug, Clone)]
pub struct KeyResolutionRequest<'a> {
    pub kind: SignedDocumentKind,
    pub key_id: &'a str,
    pub expected_signer: &'a ExpectedSigner,
    pub protected_time: &'a Timestamp,
}

/// The key-resolution adapter: supplies validated, complete Registry evidence. Unavailable or
/// incomplete evidence is an error, reported at stage 4 like an unknown key.
pub trait KeyResolver {
    fn registry_evidence(
        &self,
        request: &KeyResolutionRequest<'_>,
    ) -> Result<Arc<KeyRegistrySnapshot>, RegistryError>;
}

impl KeyResolver for Arc<KeyRegistrySnapshot> {
    fn registry_evidence(
        &self,
        _: &KeyResolutionRequest<'_>,
    ) -> Result<Arc<KeyRegistrySnapshot>, RegistryError> {
        Ok(Arc::clone(self))
    }
}
