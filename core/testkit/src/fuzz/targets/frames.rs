//! Target `frames`: the §17 WebSocket frame entry points of `wire` (`parse_frame`,
//! `parse_received_frame`, `encode_frame`).
//!
//! Oracles: no panic; errors are [`FrameError`]s with `PROTOCOL_VIOLATION`,
//! `SCHEMA_VALIDATION_FAILED` or `UNSUPPORTED_VERSION`; an accepted frame re-encodes and parses
//! back to the same value (round trip); a received `COMMAND` frame's Command bytes are a slice
//! of the input that is itself a JSON object, and verifying them (as a gateway does next) gives a
//! typed stage error or a verified Command; both parsers agree on non-`COMMAND` frames.
//!
//! [`FrameError`]: missionweaveprotocol::wire::FrameError

use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::json::parse;
use missionweaveprotocol::wire::{
    FrameType, ReceivedFrame, encode_frame, parse_frame, parse_received_frame,
};
use missionweaveprotocol::{
    AgentRegistryKeyResolver, SignedDocumentCodec, SignedDocumentKind, WireCode,
};

use super::super::mutate_json::J;
use super::super::{OracleFailure, Outcome, Rng, Target, Verdict, typed_error};
use super::{bundle_file, mutate_json_or_bytes};

const CODES: &[WireCode] = &[
    WireCode::ProtocolViolation,
    WireCode::SchemaValidationFailed,
    WireCode::UnsupportedVersion,
];

/// The frames target.
#[derive(Debug, Clone, Copy, Default)]
pub struct FramesTarget;

/// The frame type named by the input, if it is one of the seven (keeps signals few).
fn frame_type(input: &[u8]) -> &'static str {
    match J::parse(input).as_ref().and_then(|v| v.get("frameType")) {
        Some(J::Str(name)) => FrameType::parse(name).map_or("other", FrameType::as_str),
        _ => "?",
    }
}

impl Target for FramesTarget {
    fn name(&self) -> &'static str {
        "frames"
    }

    fn memory_factor(&self) -> f64 {
        // a frame is parsed, kept as a tree, encoded again and, for a COMMAND, its nested Command verified: several trees at once.
        64.0
    }

    fn buckets(&self) -> &'static [&'static str] {
        &["1-parse", "2-schema", "accepted"]
    }

    fn seeds(&self) -> Vec<Vec<u8>> {
        let command = bundle_file("cryptography/vectors/signed-documents/valid/command.json");
        let mut command_frame = br#"{"protocolVersion":"0.1","frameType":"COMMAND","frameId":"urn:uuid:00000000-0000-4000-8000-000000000009","command":"#.to_vec();
        command_frame.extend_from_slice(&command);
        command_frame.push(b'}');
        vec![
            bundle_file("conformance/vectors/valid/websocket-frame.json"),
            br#"{"protocolVersion":"0.1","frameType":"PING","frameId":"urn:uuid:00000000-0000-4000-8000-000000000001","nonce":"bm9uY2U","sentAt":"2026-07-15T09:30:00Z"}"#.to_vec(),
            br#"{"protocolVersion":"0.1","frameId":"urn:uuid:00000000-0000-4000-8000-000000000002","frameType":"ERROR","error":{"code":"RATE_LIMITED","message":"slow down","retryable":true,"occurredAt":"2026-07-15T09:30:00Z"}}"#.to_vec(),
            command_frame,
        ]
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        mutate_json_or_bytes(rng, base, 75)
    }

    fn execute(&self, input: &[u8]) -> Verdict {
        let received = parse_received_frame(input);
        let plain = parse_frame(input);
        match (&received, &plain) {
            (Ok(ReceivedFrame::Command(command)), _) => {
                let bytes = &command.command_bytes;
                if !input.windows(bytes.len().max(1)).any(|w| w == &bytes[..]) {
                    return Err(OracleFailure(
                        "COMMAND bytes are not a slice of the frame".into(),
                    ));
                }
                if !parse(bytes).is_ok_and(|v| v.as_object().is_some()) {
                    return Err(OracleFailure("COMMAND bytes are not a JSON object".into()));
                }
                // What a gateway does next: the six stages on the exact nested bytes.
                let registry = AgentRegistryKeyResolver::new(
                    embedded_file("cryptography/keys/registry-valid.json").unwrap_or_default(),
                );
                let signal = match SignedDocumentCodec::new().verify(
                    SignedDocumentKind::Command,
                    bytes,
                    &registry,
                ) {
                    Ok(_) => "accepted:COMMAND:verified".to_owned(),
                    Err(error) if error.wire_code() == error.stage.wire_code() => {
                        format!("accepted:COMMAND:{}", error.stage.as_str())
                    }
                    Err(error) => {
                        return Err(OracleFailure(format!(
                            "nested Command: stage {:?} with wire code {}",
                            error.stage,
                            error.wire_code().as_str()
                        )));
                    }
                };
                Ok(Outcome { bucket: 2, signal })
            }
            (Ok(ReceivedFrame::Other(frame)), Ok(again)) => {
                if !frame.value.json_eq(&again.value) {
                    return Err(OracleFailure(
                        "the two frame parsers read different values".into(),
                    ));
                }
                let encoded = encode_frame(&frame.value).map_err(|e| {
                    OracleFailure(format!("an accepted frame does not encode: {e}"))
                })?;
                let back = parse_frame(&encoded)
                    .map_err(|e| OracleFailure(format!("an encoded frame does not parse: {e}")))?;
                if !back.value.json_eq(&frame.value) || back.frame_type != frame.frame_type {
                    return Err(OracleFailure("frame round trip changed the value".into()));
                }
                Ok(Outcome {
                    bucket: 2,
                    signal: format!("accepted:{}", frame.frame_type.as_str()),
                })
            }
            (Ok(ReceivedFrame::Other(_)), Err(e)) => Err(OracleFailure(format!(
                "parse_received_frame accepted what parse_frame refuses: {e}"
            ))),
            (Err(error), _) => {
                let reason = typed_error("frame", error, CODES)?;
                if let Err(plain_error) = &plain {
                    typed_error("frame", plain_error, CODES)?;
                }
                let bucket = usize::from(error.code != WireCode::ProtocolViolation);
                Ok(Outcome {
                    bucket,
                    signal: format!("{reason}:{}", frame_type(input)),
                })
            }
        }
    }
}
