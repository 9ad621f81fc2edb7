//! The sign-once path of `EventIssuer` (issue 10): the Event it produces is byte for byte the
//! document the strict `SignedDocumentCodec::sign` produces, passes the six-stage verifier, and
//! what the strict signer would refuse is still refused — cheap checks in every build, the
//! signature re-verification under the self-check (always on in debug and test builds).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "ingress_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::crypto::{Signer, SignerError, SigningKey};
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::{
    DescribeError, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind, Stage,
    WireCode,
};
use missionweaveprotocol_engine::events::{
    EventBuildError, EventDraft, EventIdSource, EventIssuer, SequentialEventIds,
};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn authority() -> Principal {
    Principal::new(PrincipalType::Service, AUTHORITY)
}

fn command(f: &Fixture) -> VerifiedCommand {
    let bytes = sign(&agent_command(NOW_TEXT, ""), &f.agent_key);
    CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(&bytes, &f.registry, NOW)
        .unwrap()
}

fn draft(c: &VerifiedCommand, n: u64) -> EventDraft {
    let mut payload = Object::new();
    payload.insert("n", Value::Number(Number::from_u64(n)));
    payload.insert("text", Value::string(format!("é\u{1F600}<{n}>")));
    EventDraft::for_command(c, "work.checkpointed", payload).at(GROUP, n, n)
}

#[test]
fn sign_once_is_byte_identical_to_the_strict_signer_and_verifies() {
    let f = fixture();
    let c = command(&f);
    let codec = SignedDocumentCodec::new();
    for self_check in [false, true] {
        let issuer =
            EventIssuer::new(authority(), f.authority_key.clone()).with_self_check(self_check);
        let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:s-");
        for n in 1..=50u64 {
            let now = UnixMillis(NOW.0 + n as i64 * 13);
            let d = draft(&c, n);
            let event = issuer.issue(&d, &mut ids, now).unwrap();
            let unsigned = issuer.unsigned(&d, event.event_id(), now).unwrap();
            let strict = codec
                .sign(SignedDocumentKind::Event, &unsigned, &f.authority_key)
                .unwrap();
            let fast = event.signed_document();
            assert_eq!(fast.bytes, strict.bytes);
            assert_eq!(fast.document, strict.document);
            assert_eq!(fast.signing_bytes, strict.signing_bytes);
            assert_eq!(fast.signing_hash, strict.signing_hash);
            assert_eq!(fast.document_hash, strict.document_hash);
            assert_eq!(fast.signature, strict.signature);
            assert_eq!(fast.protected_time, strict.protected_time);
            assert_eq!(fast.kind, SignedDocumentKind::Event);
            let verified = event.verify(&f.registry).unwrap();
            assert_eq!(verified.principal, authority());
            assert_eq!(verified.signing_hash, event.signing_hash());
        }
    }
}

#[test]
fn the_self_check_is_always_on_in_debug_builds_and_optional_in_release() {
    let f = fixture();
    let issuer = EventIssuer::new(authority(), f.authority_key.clone());
    assert_eq!(issuer.self_checks(), cfg!(debug_assertions));
    assert!(issuer.clone().with_self_check(true).self_checks());
    assert_eq!(
        issuer.with_self_check(false).self_checks(),
        cfg!(debug_assertions)
    );
}

/// A signer that misbehaves the way a faulty HSM could.
struct Faulty {
    key: SigningKey,
    fault: Fault,
}

#[derive(Clone, Copy)]
enum Fault {
    /// A well-formed signature over other bytes.
    WrongMessage,
    /// 63 bytes.
    Short,
    /// `S` not reduced modulo L (all ones).
    UnreducedS,
    /// Claims another algorithm.
    NotEd25519,
}

impl Signer for Faulty {
    fn key_id(&self) -> &str {
        self.key.key_id()
    }
    fn algorithm(&self) -> &str {
        match self.fault {
            Fault::NotEd25519 => "Ed448",
            _ => "Ed25519",
        }
    }
    fn public_key_bytes(&self) -> [u8; 32] {
        self.key.public_key_bytes()
    }
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, SignerError> {
        let mut signature = self.key.sign(message).to_vec();
        match self.fault {
            Fault::WrongMessage => signature = self.key.sign(b"something else").to_vec(),
            Fault::Short => signature.truncate(63),
            Fault::UnreducedS => signature[32..].fill(0xff),
            Fault::NotEd25519 => {}
        }
        Ok(signature)
    }
}

fn faulty_issue(f: &Fixture, fault: Fault, self_check: bool) -> Result<(), EventBuildError> {
    let c = command(f);
    let issuer = EventIssuer::new(
        authority(),
        Faulty {
            key: f.authority_key.clone(),
            fault,
        },
    )
    .with_self_check(self_check);
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:f-");
    issuer.issue(&draft(&c, 1), &mut ids, NOW).map(|_| ())
}

#[test]
fn a_malformed_signature_or_algorithm_is_refused_in_every_build() {
    let f = fixture();
    for self_check in [false, true] {
        for (fault, stage) in [
            (Fault::Short, Stage::SignatureEnvelope),
            (Fault::UnreducedS, Stage::SignatureEnvelope),
            (Fault::NotEd25519, Stage::SignatureEnvelope),
        ] {
            let e = faulty_issue(&f, fault, self_check).unwrap_err();
            assert_eq!(e.stage(), Some(stage));
            assert_eq!(e.wire_code(), WireCode::InternalError);
            assert_eq!(DescribeError::reason(&e), "event_unsignable");
        }
    }
}

#[test]
fn a_signature_over_other_bytes_is_refused_by_the_self_check() {
    let f = fixture();
    let e = faulty_issue(&f, Fault::WrongMessage, true).unwrap_err();
    assert_eq!(e.stage(), Some(Stage::Signature));
    assert!(e.to_string().contains("does not verify"));
    // Without the self-check (release builds only) the signer is trusted; debug builds still
    // refuse.
    let unchecked = faulty_issue(&f, Fault::WrongMessage, false);
    assert_eq!(unchecked.is_err(), cfg!(debug_assertions));
}

#[test]
fn a_schema_invalid_event_is_refused_in_every_build() {
    let f = fixture();
    let c = command(&f);
    for self_check in [false, true] {
        let issuer =
            EventIssuer::new(authority(), f.authority_key.clone()).with_self_check(self_check);
        let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:v-");
        // Sequence 0 is not a Group sequence (`positiveInteger`).
        let zero = EventDraft::for_command(&c, "work.checkpointed", Object::new()).at(GROUP, 0, 0);
        assert_eq!(
            issuer.issue(&zero, &mut ids, NOW).unwrap_err().stage(),
            Some(Stage::Schema)
        );
        // An Event ID that is not a protocol URI.
        struct Bad;
        impl EventIdSource for Bad {
            fn next_event_id(&mut self) -> String {
                "not a uri".into()
            }
        }
        assert_eq!(
            issuer
                .issue(&draft(&c, 1), &mut Bad, NOW)
                .unwrap_err()
                .stage(),
            Some(Stage::Schema)
        );
        // The valid draft passes.
        issuer.issue(&draft(&c, 1), &mut ids, NOW).unwrap();
    }
}
