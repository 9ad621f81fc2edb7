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
use missionweaveprotocol::json::{
    Object, ParseLimits, Value, canonical_bytes, check_limits, sha256_prefixed, write_canonical,
};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::schema_formats::{Timestamp, decode_base64url, encode_base64url};
use missionweaveprotocol::signed_documents::{SignedDocument, SigningError};
use missionweaveprotocol::{SignedDocumentKind, Stage};

const KIND: SignedDocumentKind = SignedDocumentKind::Event;

fn refused(stage: Stage, detail: impl Into<String>) -> SigningError {
    SigningError::new(stage, detail)
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
    // The signing input is the JCS of the document without `signature` (§6.4), which is all of
    // it at this point. Written member by member, so the signed form below reuses it.
    let canonical = CanonicalMembers::of(&object)?;
    let signing_bytes = canonical.bytes;
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
    let envelope = Value::Object(envelope);
    // The signed form is the signing input with the `signature` member spliced in at its
    // sorted place: JCS (RFC 8785 §3.2.3) sorts members by name and serializes each value on
    // its own, so every other member's bytes are unchanged (`tests/events_sign_once.rs` checks
    // equality with `SignedDocumentCodec::sign`, which canonicalizes the whole document again).
    let bytes = match canonical.signature_at {
        Some(at) => splice_signature(&signing_bytes, at, &envelope)?,
        None => {
            let mut with_signature = object.clone();
            with_signature.insert("signature", envelope.clone());
            canonical_bytes(&Value::Object(with_signature))
                .map_err(|e| refused(Stage::Canonicalization, e.to_string()))?
        }
    };
    // Receivers verify Events under the `DOCUMENT` stage-1 limits (§6.4): an Event they would
    // refuse is never appended (the Command is refused with the verifier's own verdict), so
    // replay never meets an Event the engine wrote and a verifier cannot read.
    check_limits(&bytes, &ParseLimits::DOCUMENT).map_err(|e| SigningError::limit_exceeded(&e))?;
    let mut object = object;
    object.insert("signature", envelope);
    let document = Value::Object(object);
    debug_assert_eq!(
        canonical_bytes(&document).ok().as_deref(),
        Some(bytes.as_slice()),
        "the spliced signed form is the JCS of the signed document"
    );
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

/// The JCS (RFC 8785) of an unsigned top-level object, written member by member, and where a
/// `signature` member would sit in it.
struct CanonicalMembers {
    bytes: Vec<u8>,
    /// The byte offset in `bytes` at which the `signature` member starts in the signed form
    /// (the start of the first member sorting after it, or the closing brace); `None` when the
    /// names are not all plain ASCII (the splice then falls back to a whole second JCS).
    signature_at: Option<usize>,
}

impl CanonicalMembers {
    fn of(object: &Object) -> Result<Self, SigningError> {
        let mut names: Vec<(&str, &Value)> = Vec::with_capacity(object.len());
        for (name, value) in object.iter() {
            match name.as_str() {
                Some(name) if plain_name(name) => names.push((name, value)),
                _ => {
                    let bytes = canonical_bytes(&Value::Object(object.clone()))
                        .map_err(|e| refused(Stage::Canonicalization, e.to_string()))?;
                    return Ok(Self {
                        bytes,
                        signature_at: None,
                    });
                }
            }
        }
        // Plain ASCII names: UTF-16 code-unit order (RFC 8785 §3.2.3) is byte order, and the
        // names need no escaping.
        names.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut bytes = Vec::with_capacity(2048);
        let mut signature_at = None;
        bytes.push(b'{');
        for (index, (name, value)) in names.iter().enumerate() {
            if index > 0 {
                bytes.push(b',');
            }
            if signature_at.is_none() && name.as_bytes() > b"signature".as_slice() {
                // This member starts here: `signature` goes in front of it.
                signature_at = Some(bytes.len());
            }
            bytes.push(b'"');
            bytes.extend_from_slice(name.as_bytes());
            bytes.extend_from_slice(b"\":");
            write_canonical(value, &mut bytes)
                .map_err(|e| refused(Stage::Canonicalization, e.to_string()))?;
        }
        let end = bytes.len();
        bytes.push(b'}');
        Ok(Self {
            bytes,
            // An existing `signature` member cannot be spliced: fall back.
            signature_at: if names.iter().any(|(n, _)| *n == "signature") {
                None
            } else {
                Some(signature_at.unwrap_or(end))
            },
        })
    }
}

/// A member name written as is in JCS: ASCII letters and digits only.
fn plain_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// `unsigned` (a JCS object) with `"signature":<envelope>` inserted at byte `at` (the start
/// of the member that follows it in sorted order, or the closing brace).
fn splice_signature(unsigned: &[u8], at: usize, envelope: &Value) -> Result<Vec<u8>, SigningError> {
    let mut out = Vec::with_capacity(unsigned.len() + 160);
    out.extend_from_slice(&unsigned[..at]);
    let at_end = at + 1 == unsigned.len();
    if at_end && at > 1 {
        // After the last member.
        out.push(b',');
    }
    out.extend_from_slice(b"\"signature\":");
    write_canonical(envelope, &mut out)
        .map_err(|e| refused(Stage::Canonicalization, e.to_string()))?;
    if !at_end {
        out.push(b',');
    }
    out.extend_from_slice(&unsigned[at..]);
    Ok(out)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use missionweaveprotocol::json::parse;

    /// The splice equals a whole JCS of the signed document, wherever `signature` sorts and
    /// whatever the names (the fallback for names that are not plain ASCII).
    #[test]
    fn spliced_signed_form_is_the_jcs_of_the_signed_document() {
        let envelope = parse(br#"{"value": "x", "algorithm": "Ed25519"}"#).unwrap();
        for text in [
            r#"{}"#,
            r#"{"a": 1}"#,
            r#"{"zz": [1, {"b": 2, "a": 1}]}"#,
            r#"{"sequence": 2, "a": 1, "workItemId": "w", "signaturf": 0, "signatur": 1}"#,
            r#"{"b": 1, "\u00e9": 2, "a-b": 3}"#,
        ] {
            let Value::Object(object) = parse(text.as_bytes()).unwrap() else {
                panic!("not an object")
            };
            let members = CanonicalMembers::of(&object).unwrap();
            assert_eq!(
                members.bytes,
                canonical_bytes(&Value::Object(object.clone())).unwrap()
            );
            let mut signed = object.clone();
            signed.insert("signature", envelope.clone());
            let expected = canonical_bytes(&Value::Object(signed)).unwrap();
            match members.signature_at {
                Some(at) => {
                    assert_eq!(
                        splice_signature(&members.bytes, at, &envelope).unwrap(),
                        expected
                    )
                }
                None => assert!(text.contains("\\u00e9") || text.contains("a-b")),
            }
        }
    }
}
