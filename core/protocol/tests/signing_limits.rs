//! The signer refuses to emit what no verifier would accept (§6.4 stage 1): a signed document
//! whose bytes pass the codec's parse limits (`DOCUMENT` by default) is a `SigningError` with
//! the verifier's own verdict — wire `PROTOCOL_VIOLATION`, reason `limit-exceeded`, fields
//! `limit` and `maximum` — and the same document under roomier limits signs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use missionweaveprotocol::json::{Limit, ParseLimits, parse_state};
use missionweaveprotocol::{
    DescribeError, FieldValue, SignedDocumentCodec, SignedDocumentKind, Stage, WireCode,
};

fn command(data: &str) -> missionweaveprotocol::json::Value {
    parse_state(
        format!(
            r#"{{"protocolVersion": "0.1",
            "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
            "actor": {{"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"}},
            "sessionEpoch": 3, "membershipEpoch": 1,
            "groupId": "urn:missionweaveprotocol:group:finance", "kind": "work.checkpoint",
            "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
            "issuedAt": "2026-07-15T09:30:00Z", "payload": {{"data": {data}}}}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

fn refused_for(codec: &SignedDocumentCodec, data: &str, limit: Limit, maximum: usize) {
    let fixture = common::signing_fixture();
    let e = match codec.sign(SignedDocumentKind::Command, &command(data), &fixture.key) {
        Ok(signed) => panic!(
            "{limit:?}: {} bytes were signed: {}",
            signed.bytes.len(),
            String::from_utf8_lossy(&signed.bytes)
        ),
        Err(e) => e,
    };
    assert_eq!(e.stage, Stage::Parse);
    assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
    assert_eq!(e.reason(), "limit-exceeded");
    let fields = e.fields();
    assert!(matches!(fields.get("limit"), Some(FieldValue::Text(t)) if t == limit.as_str()));
    assert!(matches!(fields.get("maximum"), Some(FieldValue::Integer(n)) if *n == maximum as i64));
}

#[test]
fn each_limit_refuses_the_signed_output_and_roomier_limits_sign_it() {
    let fixture = common::signing_fixture();
    let tight = |limits: ParseLimits| SignedDocumentCodec::new().with_limits(limits);
    let base = ParseLimits::DOCUMENT;
    // The whole document: about 1,100 bytes signed.
    let doc = ParseLimits {
        max_document_bytes: 600,
        ..base
    };
    refused_for(&tight(doc), "1", Limit::DocumentBytes, 600);
    // One container: an array of 40 items, limit 32.
    let items = format!("[{}]", vec!["0"; 40].join(","));
    let entries = ParseLimits {
        max_container_entries: 32,
        ..base
    };
    refused_for(&tight(entries), &items, Limit::ContainerEntries, 32);
    // One string: 300 bytes, limit 256 (the signature value is 86).
    let text = format!("\"{}\"", "x".repeat(300));
    let strings = ParseLimits {
        max_string_bytes: 256,
        ..base
    };
    refused_for(&tight(strings), &text, Limit::StringBytes, 256);
    // One number: 40 digits, written by RFC 8785 as `1.1111111111111112e+39` (22
    // characters), limit 16: the limit applies to what is emitted.
    let digits = "1".repeat(40);
    let numbers = ParseLimits {
        max_number_chars: 16,
        ..base
    };
    refused_for(&tight(numbers), &digits, Limit::NumberChars, 16);
    // The same documents sign, and verify, under the default limits.
    for data in ["1", items.as_str(), text.as_str(), digits.as_str()] {
        let signed = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, &command(data), &fixture.key)
            .unwrap();
        let resolver =
            missionweaveprotocol::registry::AgentRegistryKeyResolver::new(&fixture.registry);
        SignedDocumentCodec::new()
            .verify(SignedDocumentKind::Command, &signed.bytes, &resolver)
            .unwrap();
    }
}

#[test]
fn the_default_signer_refuses_a_document_past_four_mebibytes() {
    // Forty-three strings of 99,000 characters: about 4.26 MB signed, each string within the
    // schema's and the limits' string bounds, the whole past `DOCUMENT`'s 4 MiB.
    let part = format!("\"{}\"", "a".repeat(99_000));
    let data = format!("[{}]", vec![part.as_str(); 43].join(","));
    refused_for(
        &SignedDocumentCodec::new(),
        &data,
        Limit::DocumentBytes,
        ParseLimits::DOCUMENT.max_document_bytes,
    );
    // Forty-two fit (about 4.16 MB).
    let fixture = common::signing_fixture();
    let data = format!("[{}]", vec![part.as_str(); 42].join(","));
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &command(&data), &fixture.key)
        .unwrap();
}
