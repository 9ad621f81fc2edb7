#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! §17 frames and §22 bundle verification.

mod common;

use common::{json, valid_document};
use missionweaveprotocol::WireCode;
use missionweaveprotocol::bundle::{
    SOURCE_COMMIT, verify_admission_bundle, verify_cryptography_bundle,
    verify_cryptography_bundle_from,
};
use missionweaveprotocol::conformance::{BundleReadError, BundleSource, EmbeddedBundle};
use missionweaveprotocol::json::{canonical_bytes, parse};
use missionweaveprotocol::wire::{
    FrameType, ReceivedFrame, encode_frame, error_frame, parse_frame, parse_received_frame,
};
use std::borrow::Cow;

#[test]
fn the_structural_frame_vectors_parse_or_fail_as_declared() {
    let frame = parse_frame(common::file(
        "conformance/vectors/valid/websocket-frame.json",
    ));
    assert_eq!(frame.unwrap().frame_type, FrameType::Subscribe);
    let error = parse_frame(common::file(
        "conformance/vectors/invalid/websocket-partial-stream.json",
    ))
    .unwrap_err();
    assert_eq!(error.code, WireCode::SchemaValidationFailed);
}

#[test]
fn malformed_frames_are_protocol_violations() {
    for bytes in [
        &b"{"[..],
        b"[]",
        b"{\"frameType\":\"PING\",\"frameType\":\"PING\"}",
        b"\xEF\xBB\xBF{}",
    ] {
        assert_eq!(
            parse_frame(bytes).unwrap_err().code,
            WireCode::ProtocolViolation,
            "{bytes:?}"
        );
    }
    assert_eq!(
        parse_frame(b"{\"frameType\":\"PONG\"}").unwrap_err().code,
        WireCode::SchemaValidationFailed
    );
}

#[test]
fn a_received_command_keeps_its_exact_bytes() {
    let command = valid_document("command");
    let mut frame = b"{\"protocolVersion\":\"0.1\",\"frameId\":\"urn:uuid:f1\",\"frameType\":\"COMMAND\",\"command\":".to_vec();
    frame.extend_from_slice(command);
    frame.push(b'}');
    let ReceivedFrame::Command(received) = parse_received_frame(&frame).unwrap() else {
        panic!("not a command")
    };
    assert_eq!(received.command_bytes, command.trim_ascii_end());
    assert_eq!(received.frame_id, "urn:uuid:f1");
    // The envelope is checked.
    let extra =
        String::from_utf8(frame.clone())
            .unwrap()
            .replacen("\"frameId\"", "\"x\":1,\"frameId\"", 1);
    assert_eq!(
        parse_received_frame(extra.as_bytes()).unwrap_err().code,
        WireCode::SchemaValidationFailed
    );
    let no_command =
        br#"{"protocolVersion":"0.1","frameId":"urn:uuid:f1","frameType":"COMMAND","command":[]}"#;
    assert_eq!(
        parse_received_frame(no_command).unwrap_err().code,
        WireCode::SchemaValidationFailed
    );
    // Other frames go through the full schema.
    let ping = br#"{"protocolVersion":"0.1","frameId":"urn:uuid:p","frameType":"PING","nonce":"AAAA","sentAt":"2026-07-15T00:00:00Z"}"#;
    assert!(matches!(
        parse_received_frame(ping),
        Ok(ReceivedFrame::Other(_))
    ));
}

#[test]
fn encoding_validates_and_is_canonical() {
    let value = json("conformance/vectors/valid/websocket-frame.json");
    let bytes = encode_frame(&value).unwrap();
    assert_eq!(bytes, canonical_bytes(&value).unwrap());
    assert!(parse_frame(&bytes).is_ok());
    assert!(encode_frame(&parse(b"{\"frameType\":\"ACK\"}").unwrap()).is_err());
    let error = error_frame(
        "urn:uuid:e",
        WireCode::Backpressure,
        "slow down",
        "2026-07-15T00:00:00Z",
        Some("urn:uuid:f1"),
    )
    .unwrap();
    let frame = parse_frame(&error).unwrap();
    assert_eq!(frame.frame_type, FrameType::Error);
    assert_eq!(
        frame
            .value
            .pointer("/error/retryable")
            .and_then(|v| v.as_bool()),
        Some(true)
    );
}

#[test]
fn a_frame_outside_i_json_is_refused_as_received() {
    // A fuzz finding: an ERROR frame whose message holds a lone surrogate escape was accepted
    // by parse_frame, but has no canonical form, so encode_frame of it failed.
    let good = error_frame(
        "urn:uuid:e",
        WireCode::Backpressure,
        "slow down",
        "2026-07-15T00:00:00Z",
        None,
    )
    .unwrap();
    let text = String::from_utf8(good.clone()).unwrap();
    let lone = text.replace("slow down", "\\ud800slow down");
    for bytes in [lone.as_bytes(), &good[..]] {
        let parsed = parse_frame(bytes);
        let received = parse_received_frame(bytes);
        if bytes == &good[..] {
            let frame = parsed.unwrap();
            assert_eq!(encode_frame(&frame.value).unwrap(), good);
            assert!(received.is_ok());
        } else {
            assert_eq!(parsed.unwrap_err().code, WireCode::ProtocolViolation);
            assert_eq!(received.unwrap_err().code, WireCode::ProtocolViolation);
        }
    }
}

#[test]
fn embedded_bundles_verify_with_their_summaries() {
    let crypto = verify_cryptography_bundle().unwrap();
    assert_eq!(crypto.source_commit, SOURCE_COMMIT);
    assert_eq!(
        crypto.artifact_digest,
        "sha256:5eade516e4bc5dcf04477727ebcccd11f33348b2d9135fb6fe0365c6e6cc2ea3"
    );
    assert_eq!(
        (
            crypto.artifact_count,
            crypto.case_count,
            crypto.evaluation_count
        ),
        (98, 22, 62)
    );
    let admission = verify_admission_bundle().unwrap();
    assert_eq!(
        admission.artifact_digest,
        "sha256:39971bfafb68ef6c18f9026220cccc4f023fd4d5c8074f8ff0276cb1129cd0a0"
    );
    assert_eq!(
        (
            admission.artifact_count,
            admission.case_count,
            admission.evaluation_count
        ),
        (19, 5, 30)
    );
}

/// The embedded bundle with one file's bytes replaced or removed.
struct Tampered {
    path: &'static str,
    bytes: Option<Vec<u8>>,
}

impl BundleSource for Tampered {
    fn read(&self, path: &str) -> Result<Cow<'_, [u8]>, BundleReadError> {
        if path == self.path {
            return self.bytes.as_deref().map(Cow::Borrowed).ok_or_else(|| {
                BundleReadError::Missing {
                    path: path.to_owned(),
                }
            });
        }
        EmbeddedBundle.read(path)
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, BundleReadError> {
        Ok(EmbeddedBundle
            .list(prefix)?
            .into_iter()
            .filter(|p| p != self.path || self.bytes.is_some())
            .collect())
    }
    fn describe(&self) -> String {
        "tampered".into()
    }
}

#[test]
fn tampered_bundles_are_detected() {
    let fixture = "cryptography/keys/registry-valid.json";
    let mut bytes = common::file(fixture).to_vec();
    bytes.push(b'\n');
    let error = verify_cryptography_bundle_from(&Tampered {
        path: fixture,
        bytes: Some(bytes),
    })
    .unwrap_err();
    assert!(
        error.problems.iter().any(|p| p.contains(fixture)),
        "{error}"
    );
    let error = verify_cryptography_bundle_from(&Tampered {
        path: fixture,
        bytes: None,
    })
    .unwrap_err();
    assert!(
        error.problems.iter().any(|p| p.contains("missing")),
        "{error}"
    );
    let manifest = "cryptography/manifest.json";
    let altered = String::from_utf8(common::file(manifest).to_vec())
        .unwrap()
        .replacen("\"manifestVersion\": 1", "\"manifestVersion\": 2", 1);
    let error = verify_cryptography_bundle_from(&Tampered {
        path: manifest,
        bytes: Some(altered.into_bytes()),
    })
    .unwrap_err();
    assert!(
        error.problems.iter().any(|p| p.contains("artifactDigest")),
        "{error}"
    );
}

#[test]
fn bundle_summaries_have_a_json_form() {
    let value = verify_cryptography_bundle().unwrap().to_value();
    assert_eq!(
        value
            .get("evaluationCount")
            .and_then(|v| v.as_number())
            .and_then(|n| n.as_i64()),
        Some(62)
    );
    assert_eq!(
        value.get("sourceCommit").and_then(|v| v.as_str()),
        Some(SOURCE_COMMIT)
    );
    let value = verify_admission_bundle().unwrap().to_value();
    assert_eq!(
        value
            .get("cryptographyArtifactDigest")
            .and_then(|v| v.as_str()),
        Some("sha256:5eade516e4bc5dcf04477727ebcccd11f33348b2d9135fb6fe0365c6e6cc2ea3")
    );
}

/// The embedded bundle plus one extra manifest file.
struct WithManifest(Vec<u8>);

impl BundleSource for WithManifest {
    fn read(&self, path: &str) -> Result<Cow<'_, [u8]>, BundleReadError> {
        if path == "conformance/custom.json" {
            return Ok(Cow::Borrowed(&self.0));
        }
        EmbeddedBundle.read(path)
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, BundleReadError> {
        EmbeddedBundle.list(prefix)
    }
    fn describe(&self) -> String {
        "custom manifest".into()
    }
}

#[test]
fn another_structural_manifest_can_be_run() {
    use missionweaveprotocol::conformance::run_structural_manifest;
    let two = br#"[{"name":"a","schema":"schemas/command.schema.json","instance":"conformance/vectors/valid/command.json","valid":true},
                   {"name":"b","schema":"schemas/command.schema.json","instance":"conformance/vectors/invalid/command-missing-signature.json","valid":false}]"#;
    let report = run_structural_manifest(&WithManifest(two.to_vec()), "conformance/custom.json");
    assert!(report.ok(), "{:?}", report.failures);
    assert_eq!((report.passed, report.total), (2, 2));
    let wrong = String::from_utf8(two.to_vec())
        .unwrap()
        .replace("\"valid\":false", "\"valid\":true");
    let report =
        run_structural_manifest(&WithManifest(wrong.into_bytes()), "conformance/custom.json");
    assert_eq!((report.passed, report.total), (1, 2));
    let pinned = run_structural_manifest(&EmbeddedBundle, "conformance/manifest.json");
    assert_eq!((pinned.passed, pinned.total), (58, 58));
}
