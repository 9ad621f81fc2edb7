//! The six stages of §6.4, reporting the first failure. A later-stage fact may be found early,
//! but it is always reported at its normative stage; stage 3, 4 and 6 rejections do the same
//! work (see [`SignedDocumentCodec::verify_value`]).

use core::hint::black_box;
use std::sync::OnceLock;

use super::SignedDocumentCodec;
use super::error::VerificationError;
use super::kind::{ExpectedSignerRule, SignedDocumentKind};
use crate::crypto::{SignatureParts, check_r, split_signature, stand_in};
use crate::error::Stage;
use crate::json::{Document, ObjectView, ParseErrorKind, Value, View, sha256_prefixed};
use crate::principal::Principal;
use crate::registry::{ExpectedSigner, KeyResolutionRequest, KeyResolver};
use crate::schema_formats::{Timestamp, decode_base64url};

/// A document that passed all six stages: cryptographically verified — not admitted, not
/// authorized (§6.4). Keeps what admission needs.
#[derive(Debug, Clone)]
pub struct VerifiedSignedDocument {
    pub kind: SignedDocumentKind,
    /// The parsed document, lossless: [`Self::view`], [`Self::document`],
    /// [`Self::into_document`].
    body: Body,
    /// The exact JCS signing bytes (stage 5).
    pub signing_bytes: Vec<u8>,
    /// `sha256:` of the signing bytes: the First-Admission lookup key.
    pub signing_hash: String,
    /// The Registry evidence's Organization.
    pub organization_id: String,
    pub key_id: String,
    /// The Principal the resolved key is bound to.
    pub principal: Principal,
    /// The protected signed time, text verbatim.
    pub protected_time: Timestamp,
    /// `signature.value`, verbatim.
    pub signature: String,
    pub valid_from: Timestamp,
    pub valid_until: Option<Timestamp>,
    pub revoked_at: Option<Timestamp>,
    /// The resolved key's 32 bytes and its `publicKey` text as registered.
    pub public_key: [u8; 32],
    pub public_key_text: String,
}

/// How a verified document is kept.
#[derive(Debug, Clone)]
enum Body {
    /// As received: the stage-1 tape over a copy of the bytes. The owned tree (about one
    /// allocation per value) is built on the first [`VerifiedSignedDocument::document`] call,
    /// so a caller that reads through [`VerifiedSignedDocument::view`] never pays for it.
    Received {
        parsed: Document<'static>,
        tree: OnceLock<Value>,
    },
    /// Verified from a tree the caller already had ([`SignedDocumentCodec::verify_value`]).
    Tree(Value),
}

impl VerifiedSignedDocument {
    /// The document, read in place (the tape of the received bytes, or the tree).
    pub fn view(&self) -> View<'_> {
        match &self.body {
            Body::Received { parsed, .. } => parsed.root(),
            Body::Tree(value) => value.view(),
        }
    }

    /// The document as an owned tree, built on first use from the received document's tape.
    pub fn document(&self) -> &Value {
        match &self.body {
            Body::Received { parsed, tree } => tree.get_or_init(|| parsed.to_value()),
            Body::Tree(value) => value,
        }
    }

    /// The owned tree, taken out (built now if it was not yet).
    pub fn into_document(self) -> Value {
        match self.body {
            Body::Received { parsed, tree } => {
                tree.into_inner().unwrap_or_else(|| parsed.to_value())
            }
            Body::Tree(value) => value,
        }
    }

    /// `sha256:` of the JCS of the whole document including `signature`.
    pub fn signed_document_hash(&self) -> String {
        // Received in its canonical form (as signers send it): the hash of those bytes.
        if let Body::Received { parsed, .. } = &self.body
            && parsed.is_canonical()
        {
            return sha256_prefixed(parsed.source().as_bytes());
        }
        // Otherwise written: the document without `signature` was canonicalized at stage 5 and
        // the envelope holds only schema-checked ASCII strings, so this cannot fail.
        let mut bytes = Vec::with_capacity(self.signing_bytes.len() + 256);
        match crate::json::write_view(self.view(), &mut bytes) {
            Ok(()) => sha256_prefixed(&bytes),
            Err(_) => String::new(),
        }
    }
}

fn stage3(reason: &'static str, detail: impl Into<String>) -> VerificationError {
    VerificationError::new(Stage::SignatureEnvelope, reason, detail)
}

/// The stage-5 signing input of §6.4: the RFC 8785 form of the document with exactly its
/// top-level `signature` member omitted. Fails at stage 5 for values outside I-JSON.
pub fn signing_bytes(document: &Value) -> Result<Vec<u8>, VerificationError> {
    signing_bytes_of(document.view())
}

/// [`signing_bytes`] of a [`View`].
pub fn signing_bytes_of(document: View<'_>) -> Result<Vec<u8>, VerificationError> {
    signing_bytes_sized(document, 2048)
}

/// [`signing_bytes_of`] into a buffer of `capacity` bytes: the received length, which the
/// signing bytes of a canonical document never exceed, so the buffer does not grow by doubling
/// on the verification path.
fn signing_bytes_sized(document: View<'_>, capacity: usize) -> Result<Vec<u8>, VerificationError> {
    let View::Object(object) = document else {
        return Err(VerificationError::new(
            Stage::Canonicalization,
            "not-an-object",
            "document is not an object",
        ));
    };
    let mut out = Vec::with_capacity(capacity);
    crate::json::write_object(object, Some("signature"), &mut out).map_err(|e| {
        VerificationError::new(Stage::Canonicalization, "outside-i-json", e.to_string())
    })?;
    Ok(out)
}

/// Stage 3 facts needed by later stages.
struct Envelope<'d> {
    protected_time: Timestamp,
    key_id: &'d str,
    signature_text: &'d str,
    parts: SignatureParts,
    signer: ExpectedSigner,
}

fn envelope<'d>(
    kind: SignedDocumentKind,
    document: View<'d>,
) -> Result<Envelope<'d>, VerificationError> {
    let protected_text = document
        .pointer(kind.protected_time_pointer())
        .and_then(|value| value.as_str())
        .ok_or_else(|| {
            stage3(
                "protected-time-missing",
                "protected signed time is not a string",
            )
        })?;
    let protected_time = Timestamp::parse(protected_text)
        .map_err(|e| stage3("protected-time-malformed", format!("protected time: {e}")))?;
    let signature: ObjectView<'d> = document
        .get("signature")
        .and_then(|value| value.as_object())
        .ok_or_else(|| stage3("signature-missing", "signature envelope is not an object"))?;
    let created_text = signature
        .get("createdAt")
        .and_then(|value| value.as_str())
        .ok_or_else(|| stage3("created-at-missing", "signature.createdAt is not a string"))?;
    Timestamp::parse(created_text)
        .map_err(|e| stage3("created-at-malformed", format!("signature.createdAt: {e}")))?;
    if !protected_time.is_utc_z() || !created_text.ends_with('Z') {
        return Err(stage3(
            "protected-time-not-utc-z",
            "protected time and createdAt must use the UTC Z form",
        ));
    }
    if protected_text != created_text {
        return Err(stage3(
            "created-at-mismatch",
            "signature.createdAt differs from the protected time",
        ));
    }
    if signature.get("algorithm").and_then(|value| value.as_str()) != Some("Ed25519") {
        return Err(stage3(
            "algorithm-unsupported",
            "signature.algorithm is not Ed25519",
        ));
    }
    let key_id = signature
        .get("keyId")
        .and_then(|value| value.as_str())
        .ok_or_else(|| stage3("key-id-missing", "signature.keyId is not a string"))?;
    let rule = kind.expected_signer_rule();
    let signer = match rule.resolve(document) {
        Ok(None) => ExpectedSigner::ServicePrincipal,
        Ok(Some(principal)) => ExpectedSigner::Principal(principal),
        Err(pointer) => {
            let what = match rule {
                ExpectedSignerRule::AgentId(_) => "a string",
                _ => "a Principal object",
            };
            return Err(stage3(
                "signer-unresolvable",
                format!("{pointer} is not {what}"),
            ));
        }
    };
    let signature_text = signature
        .get("value")
        .and_then(|value| value.as_str())
        .ok_or_else(|| stage3("signature-value-missing", "signature.value is not a string"))?;
    let signature_bytes = decode_base64url(signature_text).ok_or_else(|| {
        stage3(
            "signature-value-encoding",
            "signature.value is not canonical unpadded base64url",
        )
    })?;
    let parts = split_signature(&signature_bytes)
        .map_err(|e| stage3("signature-encoding", e.to_string()))?;
    Ok(Envelope {
        protected_time,
        key_id,
        signature_text,
        parts,
        signer,
    })
}

impl SignedDocumentCodec<'_> {
    /// Runs the six stages of §6.4 on the exact received bytes.
    ///
    /// On failure, send the peer only [`VerificationError::wire_code`] and the fixed
    /// [`wire_message`](VerificationError::wire_message); the stage and reason are protected.
    ///
    /// ```
    /// use missionweaveprotocol::registry::AgentRegistryKeyResolver;
    /// use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind, Stage, WireCode};
    ///
    /// # use missionweaveprotocol::crypto::SigningKey;
    /// # use missionweaveprotocol::registry::RegistryBuilder;
    /// # use missionweaveprotocol::{Principal, PrincipalType};
    /// # let key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);
    /// # let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
    /// # builder.add_key(
    /// #     key.key_id(),
    /// #     Principal::new(PrincipalType::Agent, "urn:missionweaveprotocol:agent:planner"),
    /// #     &key.public_key_bytes(),
    /// #     "2026-01-01T00:00:00Z",
    /// # )?;
    /// # let (registry_bytes, _) = builder.build()?;
    /// # let command = missionweaveprotocol::json::parse_state(br#"{"protocolVersion": "0.1",
    /// #     "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
    /// #     "actor": {"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"},
    /// #     "sessionEpoch": 3, "membershipEpoch": 1, "groupId": "urn:missionweaveprotocol:group:finance",
    /// #     "kind": "work.checkpoint", "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
    /// #     "issuedAt": "2026-07-15T09:30:00Z", "payload": {"step": 1}}"#)?;
    /// # let received = SignedDocumentCodec::new()
    /// #     .sign(SignedDocumentKind::Command, &command, &key)?
    /// #     .bytes;
    /// // `registry_bytes`: Registry evidence; `received`: the bytes exactly as they arrived.
    /// let codec = SignedDocumentCodec::new();
    /// let resolver = AgentRegistryKeyResolver::new(&registry_bytes);
    /// let verified = codec.verify(SignedDocumentKind::Command, &received, &resolver)?;
    /// assert_eq!(verified.principal.id, "urn:missionweaveprotocol:agent:planner");
    /// assert_eq!(verified.key_id, "urn:missionweaveprotocol:key:planner-1");
    ///
    /// // One changed byte: the signature equation fails (stage 6).
    /// let tampered = String::from_utf8(received)?.replace("\"step\":1", "\"step\":2");
    /// let error = codec
    ///     .verify(SignedDocumentKind::Command, tampered.as_bytes(), &resolver)
    ///     .unwrap_err();
    /// assert_eq!(error.wire_code(), WireCode::AuthInvalidSignature);
    /// assert_eq!(error.to_string(), "AUTH_INVALID_SIGNATURE: signed document rejected");
    /// assert_eq!((error.stage, error.reason), (Stage::Signature, "signature-mismatch"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify(
        &self,
        kind: SignedDocumentKind,
        bytes: &[u8],
        resolver: &dyn KeyResolver,
    ) -> Result<VerifiedSignedDocument, VerificationError> {
        // Stage 1: strict parse, within the codec's limits, into the bounded tape; the owned
        // tree is built only for a document that passed all six stages.
        let document = Document::parse(bytes, &self.limits).map_err(|e| {
            let reason = match e.kind {
                ParseErrorKind::LimitExceeded { .. } => "limit-exceeded",
                _ => "invalid-json",
            };
            VerificationError::new(Stage::Parse, reason, e.to_string())
        })?;
        let mut verified = self.verify_view(kind, document.root(), Some(&document), resolver)?;
        verified.body = Body::Received {
            parsed: document.into_owned(),
            tree: OnceLock::new(),
        };
        Ok(verified)
    }

    /// Stages 2–6 on a document that was strictly parsed from the received bytes.
    ///
    /// Stage 3, 4 and 6 rejections look the same on the wire (§6.4), so they also cost the
    /// same: once the schema holds, every such rejection computes the signing input, evaluates
    /// the equation (on a stand-in key, `R` and `S` when the envelope or the key selection
    /// failed) and strictly decodes `R`, and only then reports its first failing stage. The
    /// Registry lookup runs only for an envelope that names a key: a resolver is never asked
    /// about a malformed one. An accepted document skips the decoding of `R`: the equation
    /// holding proves `R` canonical and in the prime-order subgroup.
    pub fn verify_value(
        &self,
        kind: SignedDocumentKind,
        document: Value,
        resolver: &dyn KeyResolver,
    ) -> Result<VerifiedSignedDocument, VerificationError> {
        let mut verified = self.verify_view(kind, document.view(), None, resolver)?;
        verified.body = Body::Tree(document);
        Ok(verified)
    }

    /// Stages 2–6 on a view (`received`: its parsed bytes, when it has them); the caller puts
    /// the document into the accepted result.
    fn verify_view(
        &self,
        kind: SignedDocumentKind,
        document: View<'_>,
        received: Option<&Document<'_>>,
        resolver: &dyn KeyResolver,
    ) -> Result<VerifiedSignedDocument, VerificationError> {
        // Stage 2: the profile's schema, formats asserted.
        self.catalog
            .validate_view(kind.schema_file(), document)
            .map_err(|issue| {
                VerificationError::new(Stage::Schema, "schema-invalid", issue.to_string())
            })?;
        // Stage 3, except the strict decoding of R, which comes last.
        let envelope = envelope(kind, document);
        // Stage 4: complete Registry evidence, then selection, signer rule and interval.
        let stage4 = |e: crate::registry::RegistryError| {
            VerificationError::new(Stage::KeyResolution, e.reason.as_str(), e.detail)
        };
        let snapshot = envelope.as_ref().ok().map(|envelope| {
            resolver
                .registry_evidence(&KeyResolutionRequest {
                    kind,
                    key_id: envelope.key_id,
                    expected_signer: &envelope.signer,
                    protected_time: &envelope.protected_time,
                })
                .map_err(stage4)
        });
        let binding = match (&envelope, &snapshot) {
            (Ok(envelope), Some(Ok(snapshot))) => Some(
                snapshot
                    .select(
                        envelope.key_id,
                        &envelope.signer,
                        envelope.protected_time.instant(),
                    )
                    .map_err(stage4),
            ),
            _ => None,
        };
        // Stage 5: JCS of the document without its top-level `signature`, for a rejection at
        // stage 3 or 4 too, whose stand-in equation hashes it (an empty message when stage 5
        // fails: that document is either rejected at stage 3 or 4 or shows stage 5's own code).
        crate::work_count::tally(|work| work.signing_inputs += 1);
        // A received document that is its own canonical form (a signer sends its JCS bytes)
        // gives its signing input by cutting `signature` out of the source; any other is
        // written member by member, into a buffer of the received length, which the signing
        // bytes of a canonical document never exceed.
        let message = match received.and_then(|received| received.canonical_without("signature")) {
            Some(bytes) => Ok(bytes),
            None => signing_bytes_sized(
                document,
                received.map_or(2048, |received| received.source().len()),
            ),
        };
        // Stage 6: the cofactorless equation, on stand-ins where stage 3 or 4 left no input.
        let stand_in = stand_in();
        let key = match &binding {
            Some(Ok(binding)) => &binding.public_key,
            _ => &stand_in.key,
        };
        let (r, s) = match &envelope {
            Ok(envelope) => (&envelope.parts.r, &envelope.parts.s),
            Err(_) => (&stand_in.r, &stand_in.s),
        };
        // Evaluated before any verdict is looked at, so it cannot be skipped on a rejection.
        let holds = black_box(key.verify_equation(r, s, message.as_deref().unwrap_or_default()));
        if holds
            && let Ok(envelope) = &envelope
            && let Some(Ok(snapshot)) = &snapshot
            && let Some(Ok(binding)) = binding
            && let Ok(signing_bytes) = message
        {
            return Ok(VerifiedSignedDocument {
                kind,
                signing_hash: sha256_prefixed(&signing_bytes),
                signing_bytes,
                organization_id: snapshot.organization_id().to_owned(),
                key_id: binding.key_id.clone(),
                principal: binding.principal.clone(),
                protected_time: envelope.protected_time.clone(),
                signature: envelope.signature_text.to_owned(),
                valid_from: binding.valid_from.clone(),
                valid_until: binding.valid_until.clone(),
                revoked_at: binding.revoked_at.clone(),
                public_key: *binding.public_key.as_bytes(),
                public_key_text: binding.public_key_text.clone(),
                body: Body::Tree(Value::Null),
            });
        }
        // A rejection: decode R in full (a stand-in R when the envelope has none), then report
        // the first failing stage in the order of §6.4; a bad R is a stage-3 fact.
        let r_verdict = black_box(check_r(r));
        Err(match (&envelope, &snapshot, &binding, &message) {
            (Err(error), ..) => error.clone(),
            _ if r_verdict.is_err() => stage3(
                "signature-encoding",
                r_verdict.err().map(|e| e.to_string()).unwrap_or_default(),
            ),
            (_, Some(Err(error)), ..) | (_, _, Some(Err(error)), _) | (.., Err(error)) => {
                error.clone()
            }
            _ => VerificationError::new(
                Stage::Signature,
                "signature-mismatch",
                "Ed25519 equation does not hold",
            ),
        })
    }
}
