//! Content addressing of Artifact bytes (§13.1), sans-IO: the content hash, the object path
//! layout, the signed manifest built from bytes + metadata, and the check of bytes against a
//! manifest. [`super::local_store`] puts these rules on a filesystem; every binding wraps that
//! one implementation.
//!
//! The manifest is the protocol's Artifact document (`artifact.schema.json`), the one
//! `artifact.publish` carries, signed with the normative scheme (`SignedDocumentCodec`,
//! Artifact profile: protected time `/createdAt`, signer = `producer.agentId`) and verified by
//! the six-stage verifier. The Python reference signs a different manifest shape with a second
//! scheme (`reference-python.md` §7 item 2); this does not.

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{Number, Object, Value, sha256_prefixed};
use missionweaveprotocol::registry::KeyResolver;
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol::signed_documents::{
    SignedDocument, SignedDocumentCodec, SignedDocumentKind, VerifiedSignedDocument,
};

use super::error::ArtifactError;

/// The only content hash algorithm of 0.1 (`common.schema.json#/$defs/sha256`).
pub const HASH_PREFIX: &str = "sha256:";

/// The members the store computes from the bytes; metadata may not supply them.
pub const COMPUTED_MEMBERS: [&str; 3] = ["contentHash", "sizeBytes", "signature"];

/// `sha256:<64 lowercase hex>` of `content`.
pub fn content_hash(content: &[u8]) -> String {
    sha256_prefixed(content)
}

/// The 64 hex digits of a well-formed `sha256:<hex>` content hash.
///
/// A malformed or other-algorithm hash is [`ArtifactError::UnsupportedHash`]: it would also
/// name a path outside the store's layout.
pub fn hash_hex(content_hash: &str) -> Result<&str, ArtifactError> {
    content_hash
        .strip_prefix(HASH_PREFIX)
        .filter(|hex| {
            hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
        .ok_or_else(|| ArtifactError::UnsupportedHash {
            content_hash: content_hash.to_owned(),
        })
}

/// The object's path relative to a store root: `(<hex[:2]>, <hex[2:]>)`, the directory and the
/// file name (the reference's layout).
pub fn object_path(content_hash: &str) -> Result<(&str, &str), ArtifactError> {
    let hex = hash_hex(content_hash)?;
    Ok(hex.split_at(2))
}

/// The default `uri`: the RFC 6920 named-information URI of the bytes
/// (`ni:///sha-256;<base64url digest>`). It names the content wherever it is stored and never
/// reveals a local path; a store that serves the bytes elsewhere passes its own `uri`.
pub fn named_information_uri(content_hash: &str) -> Result<String, ArtifactError> {
    let hex = hash_hex(content_hash)?;
    let digest: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or_default())
        .collect();
    Ok(format!("ni:///sha-256;{}", encode_base64url(&digest)))
}

/// The default `artifactId`: `urn:missionweaveprotocol:artifact:<32 hex>`, derived from the
/// WorkItem and the content hash, so that putting the same bytes for the same WorkItem again
/// names the same Artifact (an `artifactId` is published once, §13.1) and the same bytes for
/// two WorkItems name two Artifacts.
pub fn default_artifact_id(work_item_id: &str, content_hash: &str) -> String {
    let seed = sha256_prefixed(format!("{work_item_id}\n{content_hash}").as_bytes());
    format!("urn:missionweaveprotocol:artifact:{}", &seed[7..39])
}

/// The unsigned manifest of `content` described by `metadata`: `metadata` is the Artifact
/// document without `contentHash`, `sizeBytes` and `signature` (computed here, refused when
/// given), and with `artifactId` and `uri` optional ([`default_artifact_id`],
/// [`named_information_uri`]). The schema is checked when the manifest is signed.
pub fn unsigned_manifest(content: &[u8], metadata: &Value) -> Result<Value, ArtifactError> {
    let Value::Object(metadata) = metadata else {
        return Err(ArtifactError::Metadata {
            detail: "the manifest metadata must be a JSON object".to_owned(),
        });
    };
    if let Some(name) = COMPUTED_MEMBERS.iter().find(|n| metadata.contains(n)) {
        return Err(ArtifactError::Metadata {
            detail: format!("{name} is computed from the content; the metadata may not set it"),
        });
    }
    let hash = content_hash(content);
    let size = u64::try_from(content.len()).unwrap_or(u64::MAX);
    let mut manifest: Object = metadata.clone();
    manifest.insert("contentHash", Value::string(hash.clone()));
    manifest.insert("sizeBytes", Value::Number(Number::from_u64(size)));
    if !manifest.contains("artifactId") {
        let work_item = metadata
            .get("workItemId")
            .and_then(Value::as_str)
            .unwrap_or("");
        manifest.insert(
            "artifactId",
            Value::string(default_artifact_id(work_item, &hash)),
        );
    }
    if !manifest.contains("uri") {
        manifest.insert("uri", Value::string(named_information_uri(&hash)?));
    }
    Ok(Value::Object(manifest))
}

/// Builds and signs the manifest of `content` (Artifact profile, `signer` = the producer's
/// Registry key). Signing refuses what would not verify: the schema (`artifact.schema.json`,
/// no inline content), the envelope and the produced signature.
pub fn sign_manifest(
    content: &[u8],
    metadata: &Value,
    signer: &dyn Signer,
) -> Result<SignedDocument, ArtifactError> {
    let unsigned = unsigned_manifest(content, metadata)?;
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Artifact, &unsigned, signer)
        .map_err(|e| ArtifactError::Manifest {
            stage: e.stage,
            detail: e.detail,
        })
}

/// Verifies a received manifest's exact bytes with the six-stage verifier, Artifact profile,
/// against `resolver` (the Organization's Registry).
pub fn verify_manifest(
    bytes: &[u8],
    resolver: &dyn KeyResolver,
) -> Result<VerifiedSignedDocument, ArtifactError> {
    SignedDocumentCodec::new()
        .verify(SignedDocumentKind::Artifact, bytes, resolver)
        .map_err(ArtifactError::Rejected)
}

/// What a manifest says about its bytes: `(contentHash, sizeBytes)`.
pub fn manifest_claims(manifest: &Value) -> Result<(&str, u64), ArtifactError> {
    let hash = manifest
        .get("contentHash")
        .and_then(Value::as_str)
        .ok_or_else(|| ArtifactError::Metadata {
            detail: "the manifest has no contentHash string".to_owned(),
        })?;
    hash_hex(hash)?;
    let size = manifest
        .get("sizeBytes")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .ok_or_else(|| ArtifactError::Metadata {
            detail: "the manifest has no non-negative integer sizeBytes".to_owned(),
        })?;
    Ok((hash, size))
}

/// Checks `content` against the manifest: the size first (cheap), then the re-computed hash.
pub fn check_content(manifest: &Value, content: &[u8]) -> Result<(), ArtifactError> {
    let (expected_hash, expected_size) = manifest_claims(manifest)?;
    let actual_size = u64::try_from(content.len()).unwrap_or(u64::MAX);
    if actual_size != expected_size {
        return Err(ArtifactError::SizeMismatch {
            content_hash: expected_hash.to_owned(),
            expected: expected_size,
            actual: actual_size,
        });
    }
    let actual_hash = content_hash(content);
    if actual_hash != expected_hash {
        return Err(ArtifactError::HashMismatch {
            expected: expected_hash.to_owned(),
            actual: actual_hash,
        });
    }
    Ok(())
}
