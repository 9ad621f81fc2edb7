//! WebSocket frames (§17, `websocket-frame.schema.json`): one UTF-8 JSON text frame per message,
//! exactly the frame types `HELLO`, `SUBSCRIBE`, `COMMAND`, `EVENT`, `ACK`, `PING`, `ERROR`.
//! A received `COMMAND` keeps the exact bytes of its nested Command for six-stage verification.

use core::fmt;

use crate::error::WireCode;
use crate::json::{Document, Object, ParseLimits, Value, View, canonical_bytes, write_view};
use crate::schema::SchemaCatalog;
use crate::schema_formats::is_protocol_uri;

const FRAME_SCHEMA: &str = "websocket-frame.schema.json";

/// The seven frame types of §17.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameType {
    Hello,
    Subscribe,
    Command,
    Event,
    Ack,
    Ping,
    Error,
}

impl FrameType {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Hello => "HELLO",
            Self::Subscribe => "SUBSCRIBE",
            Self::Command => "COMMAND",
            Self::Event => "EVENT",
            Self::Ack => "ACK",
            Self::Ping => "PING",
            Self::Error => "ERROR",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Hello,
            Self::Subscribe,
            Self::Command,
            Self::Event,
            Self::Ack,
            Self::Ping,
            Self::Error,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == text)
    }
}

/// A frame that failed strict parsing (`PROTOCOL_VIOLATION`) or the schema
/// (`SCHEMA_VALIDATION_FAILED`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError {
    pub code: WireCode,
    pub detail: String,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The code is a separate member of every binding's error, not part of the message.
        f.write_str(&self.detail)
    }
}

impl std::error::Error for FrameError {}

fn violation(detail: impl Into<String>) -> FrameError {
    FrameError {
        code: WireCode::ProtocolViolation,
        detail: detail.into(),
    }
}

fn schema_failure(detail: impl Into<String>) -> FrameError {
    FrameError {
        code: WireCode::SchemaValidationFailed,
        detail: detail.into(),
    }
}

/// A schema-valid frame.
#[derive(Debug, Clone)]
pub struct Frame {
    pub frame_type: FrameType,
    pub value: Value,
}

impl Frame {
    /// `frameId`.
    pub fn frame_id(&self) -> &str {
        self.value
            .get("frameId")
            .and_then(|value| value.as_str())
            .unwrap_or_default()
    }

    /// `phase` of a `HELLO` frame.
    pub fn phase(&self) -> Option<&str> {
        self.value.get("phase").and_then(Value::as_str)
    }
}

/// A received `COMMAND` frame: envelope checked, Command bytes kept exactly as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedCommandFrame {
    pub protocol_version: String,
    pub frame_id: String,
    pub command_bytes: Vec<u8>,
}

/// What [`parse_received_frame`] returns.
#[derive(Debug, Clone)]
pub enum ReceivedFrame {
    Command(ReceivedCommandFrame),
    Other(Frame),
}

/// Strictly parses a frame and validates it against the frame schema.
///
/// ```
/// use missionweaveprotocol::WireCode;
/// use missionweaveprotocol::wire::{FrameType, parse_frame};
///
/// let frame = parse_frame(br#"{"protocolVersion": "0.1", "frameType": "PING",
///     "frameId": "urn:uuid:00000000-0000-4000-8000-000000000001",
///     "nonce": "bm9uY2U", "sentAt": "2026-07-15T09:30:00Z"}"#)?;
/// assert_eq!(frame.frame_type, FrameType::Ping);
/// assert_eq!(frame.frame_id(), "urn:uuid:00000000-0000-4000-8000-000000000001");
///
/// // Not JSON, or not a frame of the schema: `PROTOCOL_VIOLATION` / schema failure codes.
/// let error = parse_frame(b"{").unwrap_err();
/// assert_eq!(error.code, WireCode::ProtocolViolation);
/// assert!(parse_frame(br#"{"frameType": "PING"}"#).is_err());
/// # Ok::<(), missionweaveprotocol::wire::FrameError>(())
/// ```
pub fn parse_frame(bytes: &[u8]) -> Result<Frame, FrameError> {
    let document = received(bytes)?;
    frame_from_view(document.root())
}

/// Stage 1 for a received frame: strict, within [`ParseLimits::DOCUMENT`], into the bounded
/// tape (the owned tree is built only for a frame that passed its schema).
fn received(bytes: &[u8]) -> Result<Document<'_>, FrameError> {
    Document::parse(bytes, &ParseLimits::DOCUMENT).map_err(|e| violation(e.to_string()))
}

fn frame_type_of(value: View<'_>) -> Result<FrameType, FrameError> {
    let object = value
        .as_object()
        .ok_or_else(|| violation("a frame must be a JSON object"))?;
    let name = object
        .get("frameType")
        .and_then(|value| value.as_str())
        .ok_or_else(|| schema_failure("frameType is missing"))?;
    FrameType::parse(name).ok_or_else(|| schema_failure(format!("unknown frame type {name:?}")))
}

fn frame_from_view(value: View<'_>) -> Result<Frame, FrameError> {
    let frame_type = frame_type_of(value)?;
    SchemaCatalog::embedded()
        .validate_view(FRAME_SCHEMA, value)
        .map_err(|issue| schema_failure(issue.to_string()))?;
    // A frame is I-JSON (§2): one with a lone surrogate or a number outside binary64 has no
    // canonical form, so it could not be forwarded or logged as received; refuse it here, as
    // stage 5 of §6.4 refuses such a document (a fuzz finding).
    write_view(value, &mut Vec::new()).map_err(|e| violation(e.to_string()))?;
    Ok(Frame {
        frame_type,
        value: value.to_value(),
    })
}

/// Parses a received frame. A `COMMAND` frame's envelope is checked and the nested Command is
/// returned as its exact bytes: the Command itself is judged by the six stages of §6.4, so a
/// schema problem inside it is reported there, at its normative stage.
pub fn parse_received_frame(bytes: &[u8]) -> Result<ReceivedFrame, FrameError> {
    let (document, spans) = Document::parse_with_member_spans(bytes, &ParseLimits::DOCUMENT)
        .map_err(|e| violation(e.to_string()))?;
    let value = document.root();
    if frame_type_of(value)? != FrameType::Command {
        return frame_from_view(value).map(ReceivedFrame::Other);
    }
    let View::Object(object) = value else {
        return Err(violation("a frame must be a JSON object"));
    };
    let mut command_span = None;
    for ((key, member), span) in object.iter().zip(&spans) {
        match key.as_str() {
            Some("protocolVersion") if member.as_str() == Some("0.1") => {}
            Some("frameId")
                if member
                    .as_str()
                    .is_some_and(|id| is_protocol_uri(id) && id.len() <= 512) => {}
            Some("frameType") => {}
            Some("command") if member.as_object().is_some() => command_span = Some(*span),
            _ => {
                return Err(schema_failure(format!(
                    "COMMAND frame member {:?} is not allowed or invalid",
                    key.to_lossy()
                )));
            }
        }
    }
    let (start, end) =
        command_span.ok_or_else(|| schema_failure("COMMAND frame has no command object"))?;
    if object.len() != 4 {
        return Err(schema_failure(
            "COMMAND frame must have protocolVersion, frameId, frameType and command",
        ));
    }
    Ok(ReceivedFrame::Command(ReceivedCommandFrame {
        protocol_version: "0.1".into(),
        frame_id: object
            .get("frameId")
            .and_then(|value| value.as_str())
            .unwrap_or_default()
            .to_owned(),
        command_bytes: bytes[start..end].to_vec(),
    }))
}

/// Validates a frame value and encodes it (RFC 8785 form: one compact text frame).
pub fn encode_frame(value: &Value) -> Result<Vec<u8>, FrameError> {
    frame_type_of(value.view())?;
    SchemaCatalog::embedded()
        .validate(FRAME_SCHEMA, value)
        .map_err(|issue| schema_failure(issue.to_string()))?;
    canonical_bytes(value).map_err(|e| violation(e.to_string()))
}

/// Builds an `ERROR` frame (§19): the wire code, a message, `retryable` and `occurredAt`.
pub fn error_frame(
    frame_id: &str,
    code: WireCode,
    message: &str,
    occurred_at: &str,
    related_frame_id: Option<&str>,
) -> Result<Vec<u8>, FrameError> {
    let mut error = Object::new();
    error.insert("code", Value::string(code.as_str()));
    error.insert("message", Value::string(message));
    error.insert("retryable", Value::Bool(code.retryable()));
    error.insert("occurredAt", Value::string(occurred_at));
    if let Some(related) = related_frame_id {
        error.insert("relatedFrameId", Value::string(related));
    }
    let mut frame = Object::new();
    frame.insert("protocolVersion", Value::string("0.1"));
    frame.insert("frameId", Value::string(frame_id));
    frame.insert("frameType", Value::string("ERROR"));
    frame.insert("error", Value::Object(error));
    encode_frame(&Value::Object(frame))
}
