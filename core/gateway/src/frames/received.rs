//! A frame received by the client. An `EVENT` keeps the exact bytes of its Event, which the
//! client verifies with the six stages (§6.4, Event profile) and hands to the host unchanged,
//! as the server keeps a `COMMAND`'s Command bytes (`wire::parse_received_frame`). The Event
//! is judged at its normative stages there, so only the envelope is checked here.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Document, ParseLimits, View};
use missionweaveprotocol::schema_formats::is_protocol_id;
use missionweaveprotocol::wire::{self, Frame, FrameError};

use super::PROTOCOL_VERSION;

/// A received `EVENT` frame: envelope checked, Event bytes exactly as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedEvent {
    /// `frameId`.
    pub frame_id: String,
    /// The nested Event's bytes.
    pub event_bytes: Vec<u8>,
}

/// What [`parse_server_frame`] returns.
#[derive(Debug, Clone)]
pub enum ReceivedServerFrame {
    /// An `EVENT`.
    Event(ReceivedEvent),
    /// Any other frame, schema-valid.
    Other(Frame),
}

fn failure(code: WireCode, detail: &str) -> FrameError {
    FrameError {
        code,
        detail: detail.to_owned(),
    }
}

/// Strictly parses a frame received from the server.
pub fn parse_server_frame(bytes: &[u8]) -> Result<ReceivedServerFrame, FrameError> {
    let (document, spans) = Document::parse_with_member_spans(bytes, &ParseLimits::DOCUMENT)
        .map_err(|e| failure(WireCode::ProtocolViolation, &e.to_string()))?;
    let View::Object(object) = document.root() else {
        return Err(failure(
            WireCode::ProtocolViolation,
            "a frame must be a JSON object",
        ));
    };
    if object.get("frameType").and_then(|v| v.as_str()) != Some("EVENT") {
        return wire::parse_frame(bytes).map(ReceivedServerFrame::Other);
    }
    let mut event = None;
    let mut frame_id = None;
    for ((key, member), span) in object.iter().zip(&spans) {
        match key.as_str() {
            Some("protocolVersion") if member.as_str() == Some(PROTOCOL_VERSION) => {}
            Some("frameType") => {}
            Some("frameId") if member.as_str().is_some_and(is_protocol_id) => {
                frame_id = member.as_str();
            }
            Some("event") if member.as_object().is_some() => event = Some(*span),
            _ => {
                return Err(failure(
                    WireCode::SchemaValidationFailed,
                    "EVENT frame member is not allowed or invalid",
                ));
            }
        }
    }
    match (frame_id, event, object.len()) {
        (Some(frame_id), Some((start, end)), 4) => Ok(ReceivedServerFrame::Event(ReceivedEvent {
            frame_id: frame_id.to_owned(),
            event_bytes: bytes[start..end].to_vec(),
        })),
        _ => Err(failure(
            WireCode::SchemaValidationFailed,
            "EVENT frame must have protocolVersion, frameId, frameType and event",
        )),
    }
}
