//! Content-addressed Artifact bytes (`missionweaveprotocol_engine::artifact`): the store's
//! put and get and the manifest's six-stage verification, for the napi addon (a filesystem
//! store: not in the WebAssembly build). Only conversions: every rule is in the core.

use std::path::Path;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol_engine::artifact::content;
use missionweaveprotocol_host::LocalArtifactStore;

use crate::envelope::{Failure, finish};
use crate::{RegistryHandle, signed_value, strict, verified_envelope};

/// `{"ok": <signed document fields>}` (as `sign`) of the manifest of `content`: the store signs
/// it with the producer's seed and stores the bytes under `root`. `metadata` is the JSON of the
/// Artifact document without `contentHash`, `sizeBytes` and `signature`.
pub fn put(root: &str, content: &[u8], metadata: &[u8], key_id: &str, seed: &[u8]) -> String {
    finish((|| {
        let seed: &[u8; 32] = seed
            .try_into()
            .map_err(|_| Failure::argument("the signing seed must be exactly 32 bytes"))?;
        let key = SigningKey::from_seed(key_id, seed);
        let metadata = strict(metadata)?;
        let signed = LocalArtifactStore::new(Path::new(root))
            .put(content, &metadata, &key)
            .map_err(|e| Failure::error(&e))?;
        Ok(signed_value(&signed))
    })())
}

/// The bytes a manifest (its JSON) names under `root`, re-hashed and size-checked, or the
/// error envelope.
pub fn get(root: &str, manifest: &[u8]) -> Result<Vec<u8>, String> {
    let manifest = strict(manifest).map_err(|f| finish(Err(f)))?;
    LocalArtifactStore::new(Path::new(root))
        .get(&manifest)
        .map_err(|e| finish(Err(Failure::error(&e))))
}

/// Six-stage verification of a manifest's exact bytes, Artifact profile (the envelope of
/// `verify`; a rejection is an `ArtifactError`, reason `manifest_rejected`).
pub fn verify(bytes: &[u8], registry: &RegistryHandle) -> String {
    verified_envelope(
        content::verify_manifest(bytes, registry.resolver()).map_err(|e| Failure::error(&e)),
    )
}

/// `{"ok": "sha256:<hex>"}` of `content`.
pub fn content_hash(content: &[u8]) -> String {
    finish(Ok(missionweaveprotocol::json::Value::string(
        content::content_hash(content),
    )))
}
