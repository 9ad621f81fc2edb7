//! Sign-once path for Events (issue 10).
//!
//! `SignedDocumentCodec::sign` is written for documents of unknown origin: it validates the
//! schema and re-verifies the produced signature (one Ed25519 verification, about twice the cost
//! of the signature itself). An Event is built by [`super::EventIssuer::unsigned`] from inputs the
//! engine already validated, so the release path signs once: canonical bytes (JCS, RFC 8785) →
//! Ed25519 → `signature` envelope → canonical bytes, then [`validate`] against
//! `event.schema.json` (about a fifth of the signature's cost, kept in every build: it catches
//! an engine bug before a receiver would refuse the Event). The check it skips — the produced
//! signature against the signer's public key, one Ed25519 verification, more than the signature
//! itself — runs in [`self_check`], which debug and test builds always apply and a deployment can
//! enable (`EventIssuer::with_self_check`), e.g. for an HSM signer whose signatures it does not
//! trust unverified.
//!
//! The output is the same document `SignedDocumentCodec::sign` produces (same member order, same
//! envelope: `algorithm`, `keyId`, `createdAt` = the protected time `occurredAt`, `value`), so a
//! receiver's six-stage verifier (§6.4, Event profile) cannot tell the two apart;
//! `tests/events_sign_once.rs` checks byte equality.

use missionweaveprotocol::crypto::{Signer, split_signature};
use missionweaveprotocol::json::{Object, Value, canonical_bytes, sha256_prefixed};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::schema_formats::{Timestamp, decode_base64url, encode_base64url};
use missionweaveprotocol::signed_documents::{SignedDocument, SigningError};
use missionweaveprotocol::{SignedDocumentKind, Stage};

const KIND: SignedDocumentKind = SignedDocumentKind::Event;

fn refused(stage: Stage, detail: impl Into<String>) -> SigningError {
    SigningError {
        stage,
        detail: detail.into(),
    }
}

/// Signs the unsigned Event `object` (no top-level `signature`) once with `signer`.
///
/// Refuses, as the strict signer does, what no receiver would accept and costs nothing to
/// check: a protected time that is not a `Z` timestamp, a non-Ed25519 signer, a signature that is
/// not 64 bytes or whose `S` is not reduced (§6.4 stage 3).
pub(super) fn sign_event(
    object: Object,
    signer: &dyn Signer,
) -> Result<SignedDocument, SigningError> {
    let protected_text = match object.get("occurredAt").and_then(Value::as_str) {
        Some(text) => text.to_owned(),
        None => return Err(refused(Stage::Schema, "/occurredAt is not a string")),
    };
    let protected_time = Timestamp::parse(&protected_text)
        .map_err(|e| refused(Stage::Schema, format!("protected time: {e}")))?;
    if !protected_time.is_utc_z() {
        return Err(refused(
            Stage::SignatureEnvelope,
            "the protected time must end in an uppercase Z",
        ));
    }
    if signer.algorithm() != "Ed25519" {
        return Err(refused(
            Stage::SignatureEnvelope,
            format!(
                "signing key algorithm {:?} is not Ed25519",
                signer.algorithm()
            ),
        ));
    }
    let mut document = Value::Object(object);
    // The signing input is the JCS of the document without `signature` (§6.4), which is all of
    // it at this point.
    let signing_bytes =
        canonical_bytes(&document).map_err(|e| refused(Stage::Canonicalization, e.to_string()))?;
    let signature_bytes = signer
        .sign(&signing_bytes)
        .map_err(|e| refused(Stage::Signature, e.to_string()))?;
    split_signature(&signature_bytes)
        .map_err(|e| refused(Stage::SignatureEnvelope, e.to_string()))?;
    let signature = encode_base64url(&signature_bytes);
    let mut envelope = Object::new();
    envelope.insert("algorithm", Value::string("Ed25519"));
    envelope.insert("keyId", Value::string(signer.key_id()));
    envelope.insert("createdAt", Value::string(protected_text));
    envelope.insert("value", Value::string(signature.clone()));
    if let Value::Object(o) = &mut document {
        o.insert("signature", Value::Object(envelope));
    }
    let bytes =
        canonical_bytes(&document).map_err(|e| refused(Stage::Canonicalization, e.to_string()))?;
    Ok(SignedDocument {
        kind: KIND,
        signing_hash: sha256_prefixed(&signing_bytes),
        document_hash: sha256_prefixed(&bytes),
        bytes,
        signing_bytes,
        document,
        protected_time,
        signature,
    })
}

/// The signed Event against `event.schema.json` (§6.4 stage 1 of a receiver).
pub(super) fn validate(
    catalog: &SchemaCatalog,
    signed: &SignedDocument,
) -> Result<(), SigningError> {
    catalog
        .validate(KIND.schema_file(), &signed.document)
        .map_err(|issue| refused(Stage::Schema, issue.to_string()))
}

/// The check the strict signer adds beyond [`validate`]: the produced signature against the
/// signer's public key (the Ed25519 equation over the signing bytes, which also proves `R`
/// canonical, §6.4 stage 3).
pub(super) fn self_check(signed: &SignedDocument, signer: &dyn Signer) -> Result<(), SigningError> {
    let public_key = signer
        .public_key()
        .map_err(|e| refused(Stage::KeyResolution, format!("signing key: {e}")))?;
    let signature_bytes = decode_base64url(&signed.signature)
        .ok_or_else(|| refused(Stage::SignatureEnvelope, "the signature is not base64url"))?;
    let parts = split_signature(&signature_bytes)
        .map_err(|e| refused(Stage::SignatureEnvelope, e.to_string()))?;
    if !public_key.verify_equation(&parts.r, &parts.s, &signed.signing_bytes) {
        return Err(refused(
            Stage::Signature,
            "the produced signature does not verify",
        ));
    }
    Ok(())
}
