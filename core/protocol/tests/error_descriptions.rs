//! The verification layer's errors describe themselves (§19, §6.4); one vocabulary of classes,
//! codes and stages; the fail-closed reading of Admission Log replies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;

use missionweaveprotocol::admission::{AppendOutcome, AuthenticatedRecord, LookupOutcome};
use missionweaveprotocol::json::{CanonicalError, parse};
use missionweaveprotocol::registry::AgentRegistryKeyResolver;
use missionweaveprotocol::wire::parse_frame;
use missionweaveprotocol::{
    ArgumentError, DescribeError, ErrorClass, FieldValue, Principal, PrincipalType,
    SignedDocumentCodec, SignedDocumentKind, Stage, WireCode,
};

#[test]
fn vocabularies_have_one_spelling_each() {
    for code in WireCode::ALL {
        assert_eq!(WireCode::parse(code.as_str()), Some(code));
    }
    assert_eq!(WireCode::parse("INVALID_ARGUMENT"), None);
    let mut python = HashSet::new();
    let mut js = HashSet::new();
    for class in ErrorClass::ALL {
        assert_eq!(ErrorClass::parse(class.as_str()), Some(class));
        python.insert(class.python_name());
        assert!(js.insert(class.js_name()), "{class}: JS names are distinct");
    }
    // The reference has one class for verification and Registry failures, and one for the
    // ledger; everything else is distinct.
    assert_eq!(python.len(), ErrorClass::ALL.len() - 2);
}

#[test]
fn api_misuse_is_protocol_violation_everywhere() {
    let e = ArgumentError::new("seed", "expected 32 bytes");
    assert_eq!(e.class(), ErrorClass::Argument);
    assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
    assert_eq!(e.reason(), "invalid-argument");
    assert_eq!(e.to_string(), "seed: expected 32 bytes");
    assert_eq!(
        e.fields().get("argument"),
        Some(&FieldValue::Text("seed".into()))
    );
    assert!(ArgumentError::general("x").fields().is_empty());
}

#[test]
fn parse_and_canonical_errors_name_their_stage() {
    let e = parse(b"{\"a\":1,\"a\":2}").unwrap_err();
    assert_eq!(e.class(), ErrorClass::Parse);
    assert_eq!(e.stage(), Some(Stage::Parse));
    assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
    assert_eq!(e.reason(), "duplicate-member");
    assert!(matches!(
        e.fields().get("offset"),
        Some(FieldValue::Integer(_))
    ));
    let e = CanonicalError::NonFiniteNumber("1e400".into());
    assert_eq!(e.stage(), Some(Stage::Canonicalization));
    assert_eq!(e.reason(), "non-finite-number");
    assert_eq!(CanonicalError::NotJson("x".into()).reason(), "not-json");
}

#[test]
fn verification_errors_show_only_the_wire_view() {
    let codec = SignedDocumentCodec::new();
    let resolver = AgentRegistryKeyResolver::new(b"{\"organizationId\":\"x\",\"bindings\":[]}");
    let e = codec
        .verify(
            SignedDocumentKind::Command,
            common::valid_document("command"),
            &resolver,
        )
        .unwrap_err();
    assert_eq!(e.class(), ErrorClass::Verification);
    assert_eq!(
        e.to_string(),
        "AUTH_INVALID_SIGNATURE: signed document rejected"
    );
    assert_eq!(DescribeError::stage(&e), Some(Stage::KeyResolution));
    assert!(!DescribeError::retryable(&e));
    assert_eq!(
        e.fields().get("wire_message"),
        Some(&FieldValue::Text("signed document rejected".into()))
    );
    // The protected detail is not the message.
    assert_ne!(DescribeError::detail(&e), e.to_string());
}

#[test]
fn frame_errors_keep_their_code() {
    let e = parse_frame(b"{}").unwrap_err();
    assert_eq!(e.class(), ErrorClass::Frame);
    assert!(matches!(
        e.wire_code(),
        WireCode::SchemaValidationFailed | WireCode::ProtocolViolation
    ));
    assert!(e.reason().starts_with("frame-"));
}

fn record() -> AuthenticatedRecord {
    AuthenticatedRecord {
        bytes: b"{}".to_vec(),
        authenticated_service: Principal::new(PrincipalType::Service, "urn:x:service:log"),
    }
}

#[test]
fn log_replies_are_read_fail_closed_by_the_core() {
    // A found/committed record that cannot be authenticated is `unauthenticated`.
    assert_eq!(
        LookupOutcome::from_reply(Some("found"), None),
        LookupOutcome::Unauthenticated
    );
    for status in ["committed", "existing"] {
        assert_eq!(
            AppendOutcome::from_reply(Some(status), None),
            AppendOutcome::Unauthenticated
        );
    }
    // A failed call or an unknown answer is `indeterminate`.
    assert_eq!(
        LookupOutcome::from_reply(None, None),
        LookupOutcome::Indeterminate
    );
    assert_eq!(
        LookupOutcome::from_reply(Some("FOUND"), Some(record())),
        LookupOutcome::Indeterminate
    );
    assert_eq!(
        AppendOutcome::from_reply(None, Some(record())),
        AppendOutcome::Indeterminate
    );
    // Well-formed replies pass through.
    assert_eq!(
        LookupOutcome::from_reply(Some("found"), Some(record())),
        LookupOutcome::Found(record())
    );
    assert_eq!(
        LookupOutcome::from_reply(Some("authoritative-absence"), None),
        LookupOutcome::AuthoritativeAbsence
    );
    assert_eq!(
        AppendOutcome::from_reply(Some("existing"), Some(record())),
        AppendOutcome::Existing(record())
    );
}
