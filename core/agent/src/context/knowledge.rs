//! Knowledge publication (§13.3 "reusable knowledge"): a classified summary an Agent publishes
//! from a verified Context Package for a wider scope, with the package's Event provenance.
//!
//! The bundle has no schema for it (the reference's `KnowledgePublication` is a runtime model),
//! so it is signed like the reference — Ed25519 over the RFC 8785 bytes of the document
//! without `signature` — but, unlike the reference, the document never carries `null`
//! members, and verification is strict: the publisher's key, a canonical signature, a known
//! classification and provenance that is exactly the source package's Event range.

use missionweaveprotocol::Principal;
use missionweaveprotocol::crypto::{PublicKey, Signer, check_r, split_signature};
use missionweaveprotocol::json::{Object, Value, canonical_bytes};
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};

use super::error::ContextError;
use super::install::VerifiedContextPackage;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The classifications of the reference's `Classification` alias, least to most restricted.
pub const CLASSIFICATIONS: [&str; 4] = ["public", "internal", "confidential", "restricted"];

/// What a publisher states about one publication (reference `KnowledgePublisher.publish`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnowledgeDraft {
    /// `publicationId`.
    pub publication_id: String,
    /// Where the knowledge may be reused (a Mission, an Organization scope…).
    pub target_scope: String,
    /// The Artifact holding the knowledge.
    pub artifact_hash: String,
    /// One of [`CLASSIFICATIONS`].
    pub classification: String,
    /// The summary.
    pub summary: String,
    /// The publisher.
    pub published_by: Principal,
    /// When it was published.
    pub published_at: UnixMillis,
}

/// Signs a publication of `draft` from the verified package `source` with `key`.
pub fn publish(
    source: &VerifiedContextPackage,
    draft: &KnowledgeDraft,
    key: &dyn Signer,
) -> Result<Value, ContextError> {
    classification(&draft.classification)?;
    non_empty("targetScope", &draft.target_scope)?;
    non_empty("summary", &draft.summary)?;
    sha256("artifactHash", &draft.artifact_hash)?;
    let published_at = draft
        .published_at
        .to_rfc3339_shortest()
        .ok_or_else(|| ContextError::InvalidArgument("published_at is out of range".into()))?;
    let package = &source.document;
    let member = |pointer: &str| package.pointer(pointer).cloned().unwrap_or(Value::Null);
    let mut doc = Object::new();
    doc.insert("publicationId", Value::string(&draft.publication_id));
    doc.insert("sourceContextPackageId", member("/contextPackageId"));
    doc.insert(
        "sourceContextPackageHash",
        Value::string(&source.package_hash),
    );
    doc.insert("sourceGroupId", member("/groupId"));
    doc.insert("targetScope", Value::string(&draft.target_scope));
    doc.insert("artifactHash", Value::string(&draft.artifact_hash));
    doc.insert("classification", Value::string(&draft.classification));
    doc.insert("summary", Value::string(&draft.summary));
    doc.insert("provenanceEventIds", member("/sourceEventRange/eventIds"));
    doc.insert("publishedBy", principal(&draft.published_by));
    doc.insert("publishedAt", Value::string(&published_at));
    let signing = canonical_bytes(&Value::Object(doc.clone()))
        .map_err(|e| ContextError::InvalidArgument(e.to_string()))?;
    let signature = key
        .sign(&signing)
        .map_err(|e| ContextError::InvalidArgument(format!("the signer failed: {e}")))?;
    let mut envelope = Object::new();
    envelope.insert("algorithm", Value::string(key.algorithm()));
    envelope.insert("keyId", Value::string(key.key_id()));
    envelope.insert("createdAt", Value::string(&published_at));
    envelope.insert("value", Value::string(encode_base64url(&signature)));
    doc.insert("signature", Value::Object(envelope));
    let document = Value::Object(doc);
    // What is handed out verifies: a signer returning a wrong signature is caught here.
    verify(&document, &key.public_key_bytes(), None)?;
    Ok(document)
}

/// Verifies a publication against the publisher's public key and, when given, the package it
/// claims to come from (same ID, hash, Group and Event range).
pub fn verify(
    document: &Value,
    public_key: &[u8; 32],
    source: Option<&VerifiedContextPackage>,
) -> Result<(), ContextError> {
    let text = |name: &str| {
        document
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| ContextError::InvalidArgument(format!("{name} is missing")))
    };
    classification(text("classification")?)?;
    non_empty("targetScope", text("targetScope")?)?;
    sha256("artifactHash", text("artifactHash")?)?;
    let ids = document
        .get("provenanceEventIds")
        .and_then(Value::as_array)
        .filter(|ids| !ids.is_empty() && ids.iter().all(|v| v.as_str().is_some()))
        .ok_or_else(|| {
            ContextError::InvalidArgument("provenanceEventIds must list Event IDs".into())
        })?;
    if let Some(source) = source {
        let package = &source.document;
        let same = |name: &str, pointer: &str| document.get(name) == package.pointer(pointer);
        if !same("sourceContextPackageId", "/contextPackageId")
            || !same("sourceGroupId", "/groupId")
            || package
                .pointer("/sourceEventRange/eventIds")
                .and_then(Value::as_array)
                != Some(ids)
            || text("sourceContextPackageHash")? != source.package_hash
        {
            return Err(ContextError::ProvenanceMismatch);
        }
    }
    let mut unsigned = document.as_object().cloned().unwrap_or_default();
    let envelope = unsigned
        .remove("signature")
        .ok_or_else(|| ContextError::InvalidArgument("signature is missing".into()))?;
    let value = envelope
        .get("value")
        .and_then(Value::as_str)
        .and_then(decode_base64url)
        .and_then(|b| <[u8; 64]>::try_from(b).ok())
        .ok_or(ContextError::BadSignature)?;
    if envelope.get("algorithm").and_then(Value::as_str) != Some("Ed25519")
        || envelope.get("createdAt") != unsigned.get("publishedAt")
    {
        return Err(ContextError::BadSignature);
    }
    // The strict checks of §6.4 stages 3 and 6 (canonical S, acceptable R, strict key).
    let key = PublicKey::from_bytes(public_key).map_err(|_| ContextError::BadSignature)?;
    let parts = split_signature(&value).map_err(|_| ContextError::BadSignature)?;
    check_r(&parts.r).map_err(|_| ContextError::BadSignature)?;
    let signing = canonical_bytes(&Value::Object(unsigned))
        .map_err(|e| ContextError::InvalidArgument(e.to_string()))?;
    if !key.verify_equation(&parts.r, &parts.s, &signing) {
        return Err(ContextError::BadSignature);
    }
    Ok(())
}

fn principal(p: &Principal) -> Value {
    let mut o = Object::new();
    o.insert("type", Value::string(p.kind.as_str()));
    o.insert("id", Value::string(&p.id));
    Value::Object(o)
}

fn classification(value: &str) -> Result<(), ContextError> {
    if CLASSIFICATIONS.contains(&value) {
        Ok(())
    } else {
        Err(ContextError::InvalidArgument(format!(
            "classification {value:?} is not one of public, internal, confidential, restricted"
        )))
    }
}

fn non_empty(name: &str, value: &str) -> Result<(), ContextError> {
    if value.is_empty() {
        Err(ContextError::InvalidArgument(format!("{name} is empty")))
    } else {
        Ok(())
    }
}

fn sha256(name: &str, value: &str) -> Result<(), ContextError> {
    let hex = value.strip_prefix("sha256:").unwrap_or_default();
    if hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(ContextError::InvalidArgument(format!(
            "{name} must be sha256: and 64 lowercase hex digits"
        )))
    }
}
