//! Strict signing: the signer adds the envelope `{algorithm, keyId, createdAt, value}` with
//! `createdAt` equal to the protected time, and refuses anything that would not verify.

use super::SignedDocumentCodec;
use super::error::SigningError;
use super::kind::SignedDocumentKind;
use super::verify::VerifiedSignedDocument;
use crate::crypto::{Signer, split_signature};
use crate::error::Stage;
use crate::json::{Object, Value, canonical_bytes, check_limits, sha256_prefixed, write_object};
use crate::registry::KeyResolver;
use crate::schema_formats::{Timestamp, encode_base64url};

/// A freshly signed document.
#[derive(Debug, Clone)]
pub struct SignedDocument {
    pub kind: SignedDocumentKind,
    pub document: Value,
    /// The JCS of the whole signed document: the bytes to send.
    pub bytes: Vec<u8>,
    pub signing_bytes: Vec<u8>,
    pub signing_hash: String,
    /// `sha256:` of `bytes`.
    pub document_hash: String,
    pub protected_time: Timestamp,
    pub signature: String,
}

impl SignedDocumentCodec<'_> {
    /// Signs `unsigned` (an object without a top-level `signature`) as a document of `kind`.
    /// Checks everything that does not need the Registry: schema, envelope, canonical form, the
    /// key's point and the produced signature.
    ///
    /// ```
    /// use missionweaveprotocol::crypto::SigningKey;
    /// use missionweaveprotocol::json;
    /// use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind, Stage};
    ///
    /// // The seed must come from a secure random source.
    /// let key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);
    /// let command = json::parse_state(br#"{"protocolVersion": "0.1",
    ///     "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
    ///     "actor": {"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"},
    ///     "sessionEpoch": 3, "membershipEpoch": 1, "groupId": "urn:missionweaveprotocol:group:finance",
    ///     "kind": "work.checkpoint", "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
    ///     "issuedAt": "2026-07-15T09:30:00Z", "payload": {"step": 1}}"#)?;
    /// let codec = SignedDocumentCodec::new();
    /// let signed = codec.sign(SignedDocumentKind::Command, &command, &key)?;
    /// // `createdAt` is the protected time (`issuedAt` for a Command).
    /// assert_eq!(
    ///     signed.document.pointer("/signature/createdAt").and_then(|v| v.as_str()),
    ///     Some("2026-07-15T09:30:00Z")
    /// );
    /// assert!(signed.signing_hash.starts_with("sha256:"));
    ///
    /// // Signing refuses what would not verify: here the schema (no `payload`).
    /// let json::Value::Object(mut incomplete) = command else { unreachable!() };
    /// incomplete.remove("payload");
    /// let error = codec
    ///     .sign(SignedDocumentKind::Command, &json::Value::Object(incomplete), &key)
    ///     .unwrap_err();
    /// assert_eq!(error.stage, Stage::Schema);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sign(
        &self,
        kind: SignedDocumentKind,
        unsigned: &Value,
        key: &dyn Signer,
    ) -> Result<SignedDocument, SigningError> {
        let Value::Object(object) = unsigned else {
            return Err(SigningError::new(
                Stage::Schema,
                "a signed document must be a JSON object",
            ));
        };
        if object.contains("signature") {
            return Err(SigningError::new(
                Stage::Schema,
                "the unsigned document already has a top-level signature",
            ));
        }
        let protected_text = unsigned
            .pointer(kind.protected_time_pointer())
            .and_then(Value::as_str)
            .ok_or_else(|| {
                SigningError::new(
                    Stage::Schema,
                    format!("{} is not a string", kind.protected_time_pointer()),
                )
            })?;
        let protected_time = Timestamp::parse(protected_text)
            .map_err(|e| SigningError::new(Stage::Schema, format!("protected time: {e}")))?;
        if !protected_time.is_utc_z() {
            return Err(SigningError::new(
                Stage::SignatureEnvelope,
                "the protected time must end in an uppercase Z",
            ));
        }
        if key.algorithm() != "Ed25519" {
            return Err(SigningError::new(
                Stage::SignatureEnvelope,
                format!("signing key algorithm {:?} is not Ed25519", key.algorithm()),
            ));
        }
        let public_key = key
            .public_key()
            .map_err(|e| SigningError::new(Stage::KeyResolution, format!("signing key: {e}")))?;
        let mut signing_bytes = Vec::with_capacity(2048);
        write_object(object.view(), None, &mut signing_bytes)
            .map_err(|e| SigningError::new(Stage::Canonicalization, e.to_string()))?;
        let signature_bytes = key
            .sign(&signing_bytes)
            .map_err(|e| SigningError::new(Stage::Signature, e.to_string()))?;
        let parts = split_signature(&signature_bytes)
            .map_err(|e| SigningError::new(Stage::SignatureEnvelope, e.to_string()))?;
        // The equation holding proves R canonical and in the prime-order subgroup (§6.4 allows
        // detecting stage-3 facts through it), so R needs no separate decoding here.
        if !public_key.verify_equation(&parts.r, &parts.s, &signing_bytes) {
            return Err(SigningError::new(
                Stage::Signature,
                "the produced signature does not verify",
            ));
        }
        let signature = encode_base64url(&signature_bytes);
        let mut envelope = Object::new();
        envelope.insert("algorithm", Value::string("Ed25519"));
        envelope.insert("keyId", Value::string(key.key_id()));
        envelope.insert("createdAt", Value::string(protected_text));
        envelope.insert("value", Value::string(signature.clone()));
        let mut signed = object.clone();
        signed.insert("signature", Value::Object(envelope));
        let document = Value::Object(signed);
        self.catalog()
            .validate(kind.schema_file(), &document)
            .map_err(|issue| SigningError::new(Stage::Schema, issue.to_string()))?;
        let bytes = canonical_bytes(&document)
            .map_err(|e| SigningError::new(Stage::Canonicalization, e.to_string()))?;
        // Every verifier parses with stage-1 limits (§6.4, `DOCUMENT` by default): emitting
        // bytes they would refuse is refused here, with the verifier's own verdict.
        check_limits(&bytes, &self.limits).map_err(|e| SigningError::limit_exceeded(&e))?;
        Ok(SignedDocument {
            kind,
            signing_hash: sha256_prefixed(&signing_bytes),
            document_hash: sha256_prefixed(&bytes),
            bytes,
            signing_bytes,
            document,
            protected_time,
            signature,
        })
    }

    /// Signs, then runs the full six-stage verification of the produced bytes against the
    /// Registry (expected signer, key binding, validity interval).
    pub fn sign_and_verify(
        &self,
        kind: SignedDocumentKind,
        unsigned: &Value,
        key: &dyn Signer,
        resolver: &dyn KeyResolver,
    ) -> Result<(SignedDocument, VerifiedSignedDocument), SigningError> {
        let signed = self.sign(kind, unsigned, key)?;
        let verified = self
            .verify(kind, &signed.bytes, resolver)
            .map_err(|e| SigningError::new(e.stage, e.protected()))?;
        Ok((signed, verified))
    }
}
