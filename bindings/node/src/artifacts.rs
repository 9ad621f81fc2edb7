//! Content-addressed Artifact bytes (`missionweaveprotocol_ffi::artifacts`): the store under one
//! root, and the manifest's six-stage verification. Envelopes as everywhere in this addon;
//! `get` returns the bytes as a `Buffer`, or the error envelope text.

use missionweaveprotocol_ffi::artifacts;
use napi::bindgen_prelude::{Buffer, Either};
use napi_derive::napi;

use crate::{RegistryArg, with_registry};

/// The filesystem store (`LocalArtifactStore` of the core) under `root`.
#[napi]
#[derive(Debug)]
pub struct ArtifactStore(String);

#[napi]
impl ArtifactStore {
    #[napi(constructor)]
    pub fn new(root: String) -> Self {
        Self(root)
    }

    /// Signs the manifest of `content` (`metadata`: the Artifact document's JSON without
    /// `contentHash`, `sizeBytes`, `signature`) with the producer's seed and stores the bytes.
    #[napi(catch_unwind)]
    pub fn put(&self, content: &[u8], metadata: &[u8], key_id: String, seed: &[u8]) -> String {
        artifacts::put(&self.0, content, metadata, &key_id, seed)
    }

    /// The bytes the manifest (its JSON) names, re-hashed and size-checked.
    #[napi(catch_unwind)]
    pub fn get(&self, manifest: &[u8]) -> Either<Buffer, String> {
        match artifacts::get(&self.0, manifest) {
            Ok(bytes) => Either::A(bytes.into()),
            Err(envelope) => Either::B(envelope),
        }
    }
}

/// Six-stage verification of a manifest's bytes, Artifact profile.
#[napi(catch_unwind)]
pub fn verify_artifact_manifest(bytes: &[u8], registry: RegistryArg<'_>) -> String {
    with_registry(registry, |registry| artifacts::verify(bytes, registry))
}

/// `sha256:<hex>` of `content` (an envelope).
#[napi(catch_unwind)]
pub fn artifact_content_hash(content: &[u8]) -> String {
    artifacts::content_hash(content)
}
