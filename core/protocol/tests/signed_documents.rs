#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! §6.4: six-stage verification of all nine kinds, stage classification beyond the vectors, the
//! wire/protected split, and strict signing.

mod common;

use common::{file, json, registry, replace, signing_key, unsigned, valid_document};
use missionweaveprotocol::json::{Value, canonical_bytes, parse};
use missionweaveprotocol::registry::{KeyResolutionRequest, KeyResolver, RegistryError};
use missionweaveprotocol::signed_documents::{
    SignedDocumentCodec, SignedDocumentKind, WIRE_MESSAGE,
};
use missionweaveprotocol::{AgentRegistryKeyResolver, KeyRegistrySnapshot, Stage, WireCode};

fn verify(
    kind: SignedDocumentKind,
    bytes: &[u8],
) -> Result<missionweaveprotocol::VerifiedSignedDocument, missionweaveprotocol::VerificationError> {
    SignedDocumentCodec::new().verify(kind, bytes, &registry())
}

fn stage(kind: SignedDocumentKind, bytes: &[u8]) -> Stage {
    verify(kind, bytes).unwrap_err().stage
}

#[test]
fn all_nine_valid_documents_verify_with_their_evidence() {
    for kind in SignedDocumentKind::ALL {
        let verified = verify(kind, valid_document(kind.as_str())).unwrap();
        assert_eq!(verified.kind, kind);
        assert_eq!(
            verified.organization_id,
            "urn:missionweaveprotocol:organization:acme"
        );
        assert!(verified.signing_hash.starts_with("sha256:"));
        let expected_bytes = file(&format!(
            "cryptography/vectors/canonicalization/{}.signing.jcs",
            kind.as_str()
        ));
        assert_eq!(verified.signing_bytes, expected_bytes);
    }
}

#[test]
fn each_stage_is_reported_at_its_position() {
    let command = valid_document("command");
    let kind = SignedDocumentKind::Command;
    assert_eq!(stage(kind, b"{\"a\":1,\"a\":2}"), Stage::Parse);
    assert_eq!(
        stage(kind, b"[]"),
        Stage::Schema,
        "a non-object passes stage 1 and fails the schema"
    );
    assert_eq!(
        stage(kind, &replace(command, "\"Ed25519\"", "\"Ed448\"")),
        Stage::Schema
    );
    // Wrong kind for the bytes: the Event schema rejects a Command.
    assert_eq!(stage(SignedDocumentKind::Event, command), Stage::Schema);
    let value = parse(command).unwrap();
    let created = value
        .pointer("/signature/createdAt")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let later = created.replace("00:00Z", "00:01Z");
    assert_eq!(
        stage(
            kind,
            &replace(
                command,
                &format!("\"createdAt\": \"{created}\""),
                &format!("\"createdAt\": \"{later}\"")
            )
        ),
        Stage::SignatureEnvelope
    );
    let signature = value
        .pointer("/signature/value")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        stage(
            kind,
            &replace(command, &signature, &signature[..signature.len() - 4])
        ),
        Stage::SignatureEnvelope,
        "48-byte signature"
    );
    let key_id = value
        .pointer("/signature/keyId")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        stage(
            kind,
            &replace(command, &key_id, "urn:missionweaveprotocol:key:unknown")
        ),
        Stage::KeyResolution
    );
    assert_eq!(
        stage(
            kind,
            &replace(command, "\"payload\": {", "\"payload\": {\"big\": 1e400,")
        ),
        Stage::Canonicalization
    );
    assert_eq!(
        stage(
            kind,
            &replace(command, "\"payload\": {", "\"payload\": {\"x\": 1,")
        ),
        Stage::Signature
    );
}

#[test]
fn a_bad_r_is_reported_at_stage_3_even_when_later_stages_also_fail() {
    let command = valid_document("command");
    let value = parse(command).unwrap();
    let signature = value
        .pointer("/signature/value")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    // R = negative zero (x = 0, sign bit set), keeping S.
    let mut bytes = missionweaveprotocol::schema_formats::decode_base64url(&signature).unwrap();
    bytes[..32].copy_from_slice(&[0; 32]);
    bytes[0] = 1;
    bytes[31] = 0x80;
    let bad_r = missionweaveprotocol::schema_formats::encode_base64url(&bytes);
    let tampered = replace(command, &signature, &bad_r);
    assert_eq!(
        stage(SignedDocumentKind::Command, &tampered),
        Stage::SignatureEnvelope
    );
    // Also with an unknown key (stage 4) and a 1e400 (stage 5) in the same document.
    let key_id = value
        .pointer("/signature/keyId")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let worse = replace(
        &replace(&tampered, &key_id, "urn:missionweaveprotocol:key:unknown"),
        "\"payload\": {",
        "\"payload\": {\"n\": 1e400,",
    );
    let error = verify(SignedDocumentKind::Command, &worse).unwrap_err();
    assert_eq!(
        error.stage,
        Stage::SignatureEnvelope,
        "{}",
        error.protected()
    );
}

#[test]
fn wire_errors_do_not_reveal_which_check_failed() {
    let command = valid_document("command");
    let value = parse(command).unwrap();
    let key_id = value
        .pointer("/signature/keyId")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let failures = [
        replace(
            command,
            "\"issuedAt\": \"2026-07-15T00:00:00Z\"",
            "\"issuedAt\": \"2026-07-15T00:00:01Z\"",
        ),
        replace(command, &key_id, "urn:missionweaveprotocol:key:unknown"),
        replace(command, "\"payload\": {", "\"payload\": {\"x\": 1,"),
    ];
    let mut stages = Vec::new();
    for bytes in &failures {
        let error = verify(SignedDocumentKind::Command, bytes).unwrap_err();
        assert_eq!(error.wire_code(), WireCode::AuthInvalidSignature);
        assert_eq!(
            error.to_string(),
            format!("AUTH_INVALID_SIGNATURE: {WIRE_MESSAGE}")
        );
        assert!(!error.retryable());
        stages.push(error.stage);
    }
    assert_eq!(
        stages,
        [
            Stage::SignatureEnvelope,
            Stage::KeyResolution,
            Stage::Signature
        ]
    );
}

struct Unavailable;
impl KeyResolver for Unavailable {
    fn registry_evidence(
        &self,
        _: &KeyResolutionRequest<'_>,
    ) -> Result<std::sync::Arc<KeyRegistrySnapshot>, RegistryError> {
        Err(RegistryError {
            reason: missionweaveprotocol::registry::RegistryErrorReason::EvidenceUnavailable,
            detail: "registry service down".into(),
        })
    }
}

#[test]
fn unavailable_registry_evidence_fails_stage_4() {
    let error = SignedDocumentCodec::new()
        .verify(
            SignedDocumentKind::Command,
            valid_document("command"),
            &Unavailable,
        )
        .unwrap_err();
    assert_eq!(
        (error.stage, error.reason),
        (Stage::KeyResolution, "registry-evidence-unavailable")
    );
    // And invalid evidence given as bytes is reported at stage 4, not earlier.
    let resolver = AgentRegistryKeyResolver::new(b"{\"organizationId\":\"x\"}");
    let error = SignedDocumentCodec::new()
        .verify(
            SignedDocumentKind::Command,
            valid_document("command"),
            &resolver,
        )
        .unwrap_err();
    assert_eq!(error.stage, Stage::KeyResolution);
    let error = SignedDocumentCodec::new()
        .verify(SignedDocumentKind::Command, b"{", &resolver)
        .unwrap_err();
    assert_eq!(error.stage, Stage::Parse);
}

#[test]
fn signing_reproduces_the_bundle_signatures_for_all_nine_kinds() {
    let codec = SignedDocumentCodec::new();
    for kind in SignedDocumentKind::ALL {
        let document = json(&format!(
            "cryptography/vectors/signed-documents/valid/{}.json",
            kind.as_str()
        ));
        let key = signing_key(
            document
                .pointer("/signature/keyId")
                .unwrap()
                .as_str()
                .unwrap(),
        );
        let (signed, verified) = codec
            .sign_and_verify(kind, &unsigned(&document), &key, &registry())
            .unwrap();
        assert_eq!(
            Some(signed.signature.as_str()),
            document.pointer("/signature/value").and_then(Value::as_str),
            "{kind}"
        );
        assert_eq!(signed.bytes, canonical_bytes(&document).unwrap());
        assert_eq!(verified.signing_hash, signed.signing_hash);
    }
}

#[test]
fn signing_refuses_what_would_not_verify() {
    let codec = SignedDocumentCodec::new();
    let document = json("cryptography/vectors/signed-documents/valid/command.json");
    let key = signing_key(
        document
            .pointer("/signature/keyId")
            .unwrap()
            .as_str()
            .unwrap(),
    );
    let refuse = |value: &Value| {
        codec
            .sign(SignedDocumentKind::Command, value, &key)
            .unwrap_err()
            .stage
    };
    assert_eq!(refuse(&document), Stage::Schema, "already signed");
    assert_eq!(refuse(&Value::Array(vec![])), Stage::Schema);
    let mut lower = unsigned(&document);
    if let Value::Object(object) = &mut lower {
        object.insert("issuedAt", Value::string("2026-07-15T00:00:00z"));
    }
    assert_eq!(refuse(&lower), Stage::SignatureEnvelope, "lowercase z");
    let mut offset = unsigned(&document);
    if let Value::Object(object) = &mut offset {
        object.insert("issuedAt", Value::string("2026-07-15T08:00:00+08:00"));
    }
    assert_eq!(
        refuse(&offset),
        Stage::SignatureEnvelope,
        "offset instead of Z"
    );
    let mut big = unsigned(&document);
    if let Value::Object(object) = &mut big {
        object.insert("payload", parse(b"{\"n\":1e400}").unwrap());
    }
    assert_eq!(refuse(&big), Stage::Canonicalization);
    let mut missing = unsigned(&document);
    if let Value::Object(object) = &mut missing {
        object.remove("actor");
    }
    assert!(matches!(
        refuse(&missing),
        Stage::Schema | Stage::SignatureEnvelope
    ));
    // A key that is not bound to the actor signs, but the full self-check rejects it.
    let other = signing_key("urn:missionweaveprotocol:key:crypto-vector-group-authority");
    assert!(
        codec
            .sign(SignedDocumentKind::Command, &unsigned(&document), &other)
            .is_ok()
    );
    let error = codec
        .sign_and_verify(
            SignedDocumentKind::Command,
            &unsigned(&document),
            &other,
            &registry(),
        )
        .unwrap_err();
    assert_eq!(error.stage, Stage::KeyResolution);
}

#[test]
fn verify_many_matches_one_by_one() {
    let codec = SignedDocumentCodec::new();
    let tampered = replace(
        valid_document("command"),
        "\"payload\": {",
        "\"payload\": {\"x\": 1,",
    );
    let items: Vec<(SignedDocumentKind, &[u8])> = SignedDocumentKind::ALL
        .iter()
        .map(|kind| (*kind, valid_document(kind.as_str())))
        .chain([
            (SignedDocumentKind::Command, tampered.as_slice()),
            (SignedDocumentKind::Event, b"{".as_slice()),
        ])
        .collect();
    let resolver = registry();
    for threads in [1, 2, 8] {
        let results = codec.verify_many(&items, &resolver, threads);
        assert_eq!(results.len(), items.len());
        for ((kind, bytes), result) in items.iter().zip(&results) {
            let single = codec.verify(*kind, bytes, &resolver);
            assert_eq!(
                result
                    .as_ref()
                    .map(|v| v.signing_hash.clone())
                    .map_err(|e| e.stage),
                single.map(|v| v.signing_hash).map_err(|e| e.stage)
            );
        }
    }
    assert!(codec.verify_many(&[], &resolver, 2).is_empty());
}

/// What an external signer does wrong, if anything.
#[derive(Clone, Copy, PartialEq)]
enum Misbehaviour {
    None,
    FlipBit,
    Truncate,
    Fail,
    Algorithm,
}

/// A host-side signer (an HSM, a KMS, a host-language callback): a real key, or one that
/// misbehaves.
struct External {
    inner: missionweaveprotocol::crypto::SigningKey,
    public_key: Option<[u8; 32]>,
    misbehaviour: Misbehaviour,
}

impl missionweaveprotocol::crypto::Signer for External {
    fn key_id(&self) -> &str {
        self.inner.key_id()
    }
    fn public_key_bytes(&self) -> [u8; 32] {
        self.public_key
            .unwrap_or_else(|| self.inner.public_key_bytes())
    }
    fn algorithm(&self) -> &str {
        if self.misbehaviour == Misbehaviour::Algorithm {
            "Ed448"
        } else {
            "Ed25519"
        }
    }
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, missionweaveprotocol::crypto::SignerError> {
        let mut signature = self.inner.sign(message).to_vec();
        match self.misbehaviour {
            Misbehaviour::FlipBit => signature[40] ^= 1,
            Misbehaviour::Truncate => signature.truncate(63),
            Misbehaviour::Fail => {
                return Err(missionweaveprotocol::crypto::SignerError::new(
                    "device unavailable",
                ));
            }
            Misbehaviour::None | Misbehaviour::Algorithm => {}
        }
        Ok(signature)
    }
}

#[test]
fn external_signers_are_checked_like_local_keys() {
    let codec = SignedDocumentCodec::new();
    let document = json("cryptography/vectors/signed-documents/valid/command.json");
    let inner = signing_key(
        document
            .pointer("/signature/keyId")
            .unwrap()
            .as_str()
            .unwrap(),
    );
    let honest = External {
        inner: inner.clone(),
        public_key: None,
        misbehaviour: Misbehaviour::None,
    };
    let (signed, _) = codec
        .sign_and_verify(
            SignedDocumentKind::Command,
            &unsigned(&document),
            &honest,
            &registry(),
        )
        .unwrap();
    assert_eq!(
        Some(signed.signature.as_str()),
        document.pointer("/signature/value").and_then(Value::as_str)
    );
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let weak = External {
        inner: inner.clone(),
        public_key: Some(identity),
        misbehaviour: Misbehaviour::None,
    };
    assert_eq!(
        codec
            .sign(SignedDocumentKind::Command, &unsigned(&document), &weak)
            .unwrap_err()
            .stage,
        Stage::KeyResolution
    );
    for (misbehaviour, stage, detail) in [
        (
            Misbehaviour::FlipBit,
            Stage::Signature,
            "the produced signature does not verify",
        ),
        (
            Misbehaviour::Truncate,
            Stage::SignatureEnvelope,
            "signature is not 64 bytes",
        ),
        (
            Misbehaviour::Fail,
            Stage::Signature,
            "the signer failed: device unavailable",
        ),
        (Misbehaviour::Algorithm, Stage::SignatureEnvelope, "Ed448"),
    ] {
        let broken = External {
            inner: inner.clone(),
            public_key: None,
            misbehaviour,
        };
        let error = codec
            .sign(SignedDocumentKind::Command, &unsigned(&document), &broken)
            .unwrap_err();
        assert_eq!(error.stage, stage, "{error}");
        assert!(error.detail.contains(detail), "{error}");
    }
}

#[test]
fn a_signing_key_round_trips_through_its_seed() {
    let key = missionweaveprotocol::crypto::SigningKey::from_seed("urn:example:key:1", &[9; 32]);
    assert_eq!(key.seed_bytes(), [9; 32]);
    let again =
        missionweaveprotocol::crypto::SigningKey::from_seed("urn:example:key:1", &key.seed_bytes());
    assert_eq!(again.public_key_bytes(), key.public_key_bytes());
    let other = missionweaveprotocol::crypto::SigningKey::from_seed("urn:example:key:1", &[8; 32]);
    assert_ne!(other.seed_bytes(), key.seed_bytes());
    assert_ne!(other.public_key_bytes(), key.public_key_bytes());
}

#[test]
fn verified_documents_carry_the_resolved_public_key() {
    let verified = verify(SignedDocumentKind::Command, valid_document("command")).unwrap();
    assert_eq!(
        verified.public_key_text,
        "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    );
    assert_eq!(
        missionweaveprotocol::schema_formats::encode_base64url(&verified.public_key),
        verified.public_key_text
    );
}

#[test]
fn kinds_are_detected_by_schema_and_signing_bytes_exposed() {
    let codec = SignedDocumentCodec::new();
    for kind in SignedDocumentKind::ALL {
        let value = parse(valid_document(kind.as_str())).unwrap();
        assert_eq!(codec.detect_kinds(&value), [kind]);
        let bytes = missionweaveprotocol::signed_documents::signing_bytes(&value).unwrap();
        assert_eq!(
            bytes,
            file(&format!(
                "cryptography/vectors/canonicalization/{}.signing.jcs",
                kind.as_str()
            ))
        );
    }
    assert!(codec.detect_kinds(&parse(b"{\"a\":1}").unwrap()).is_empty());
    let error = missionweaveprotocol::signed_documents::signing_bytes(&parse(b"[1e400]").unwrap())
        .unwrap_err();
    assert_eq!(error.stage, Stage::Canonicalization);
    let error =
        missionweaveprotocol::signed_documents::signing_bytes(&parse(b"{\"n\":1e400}").unwrap())
            .unwrap_err();
    assert_eq!(error.stage, Stage::Canonicalization);
}

/// A verified document is kept as its received tape; its tree, read through any accessor, is
/// the document, and its signed-document hash does not depend on how the bytes were laid out.
#[test]
fn a_verified_document_reads_the_same_from_its_tape_and_its_tree() {
    for kind in SignedDocumentKind::ALL {
        let indented = valid_document(kind.as_str());
        let tree = parse(indented).unwrap();
        let canonical = canonical_bytes(&tree).unwrap();
        let from_indented = verify(kind, indented).unwrap();
        let from_canonical = verify(kind, &canonical).unwrap();
        let from_value = SignedDocumentCodec::new()
            .verify_value(kind, tree.clone(), &registry())
            .unwrap();
        // The tree as received: member order and number spelling kept.
        assert_eq!(from_indented.document(), &tree);
        assert_eq!(from_indented.clone().into_document(), tree);
        for verified in [&from_indented, &from_canonical, &from_value] {
            assert!(verified.view().json_eq(&tree.view()));
            assert!(verified.document().json_eq(&tree));
            assert!(verified.clone().into_document().json_eq(&tree));
            assert_eq!(verified.signing_bytes, from_indented.signing_bytes);
            assert_eq!(
                verified.signed_document_hash(),
                missionweaveprotocol::json::canonical_hash(&tree).unwrap()
            );
        }
    }
}

/// The signing input of a received document that is its own RFC 8785 form is cut from its
/// bytes; a changed byte there still fails the equation, and a reordered (non-canonical)
/// spelling of the same document still verifies through the written form.
#[test]
fn canonical_and_reordered_sources_sign_the_same_input() {
    let tree = parse(valid_document("command")).unwrap();
    let canonical = String::from_utf8(canonical_bytes(&tree).unwrap()).unwrap();
    assert!(
        missionweaveprotocol::json::Document::parse(
            canonical.as_bytes(),
            &missionweaveprotocol::json::ParseLimits::DOCUMENT
        )
        .unwrap()
        .is_canonical()
    );
    let tampered = canonical.replacen("\"sessionEpoch\":7", "\"sessionEpoch\":8", 1);
    assert_ne!(tampered, canonical);
    let error = verify(SignedDocumentKind::Command, tampered.as_bytes()).unwrap_err();
    assert_eq!(
        (error.stage, error.reason),
        (Stage::Signature, "signature-mismatch")
    );
    // `signature` moved to the front: not canonical, same signing input, still valid.
    let Value::Object(object) = &tree else {
        panic!("not an object")
    };
    let signature = object.get("signature").unwrap();
    let rest = canonical
        .replacen(
            &format!(
                ",\"signature\":{}",
                String::from_utf8(canonical_bytes(signature).unwrap()).unwrap()
            ),
            "",
            1,
        )
        .split_off(1);
    let reordered = format!(
        "{{\"signature\":{},{rest}",
        String::from_utf8(canonical_bytes(signature).unwrap()).unwrap()
    );
    let verified = verify(SignedDocumentKind::Command, reordered.as_bytes()).unwrap();
    assert!(verified.document().json_eq(&tree));
    assert_eq!(
        verified.signing_bytes,
        verify(SignedDocumentKind::Command, canonical.as_bytes())
            .unwrap()
            .signing_bytes
    );
}
