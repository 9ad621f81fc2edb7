//! One builder per frame type (and `HELLO` phase) of §17.1. Each returns the frame's bytes: one
//! UTF-8 JSON text frame (§17.1), in RFC 8785 form for the frames built from values.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Document, Number, Object, ParseLimits, Value, write_json_string};
use missionweaveprotocol::wire::{self, FrameError};

use super::PROTOCOL_VERSION;
use super::attention::Attention;
use super::error_body::ErrorBody;

fn envelope(frame_id: &str, frame_type: &str) -> Object {
    let mut frame = Object::new();
    frame.insert("protocolVersion", Value::string(PROTOCOL_VERSION));
    frame.insert("frameId", Value::string(frame_id));
    frame.insert("frameType", Value::string(frame_type));
    frame
}

fn hello(frame_id: &str, phase: &str) -> Object {
    let mut frame = envelope(frame_id, "HELLO");
    frame.insert("phase", Value::string(phase));
    frame
}

fn integer(value: u64) -> Value {
    Value::Number(Number::from_u64(value))
}

/// `HELLO/client_init` (§6.3 step 1).
pub fn hello_client_init(
    frame_id: &str,
    agent_id: &str,
    key_id: &str,
    client_nonce: &str,
    supported_versions: &[&str],
) -> Result<Vec<u8>, FrameError> {
    let mut frame = hello(frame_id, "client_init");
    frame.insert("agentId", Value::string(agent_id));
    frame.insert("keyId", Value::string(key_id));
    frame.insert("clientNonce", Value::string(client_nonce));
    frame.insert(
        "supportedVersions",
        Value::Array(
            supported_versions
                .iter()
                .map(|v| Value::string(*v))
                .collect(),
        ),
    );
    wire::encode_frame(&Value::Object(frame))
}

/// `HELLO/server_challenge` (§6.3 step 2); `challenge` is [`super::wire_challenge`]'s.
pub fn hello_server_challenge(
    frame_id: &str,
    selected_version: &str,
    client_nonce: &str,
    server_nonce: &str,
    challenge: &str,
) -> Result<Vec<u8>, FrameError> {
    let mut frame = hello(frame_id, "server_challenge");
    frame.insert("selectedVersion", Value::string(selected_version));
    frame.insert("clientNonce", Value::string(client_nonce));
    frame.insert("serverNonce", Value::string(server_nonce));
    frame.insert("challenge", Value::string(challenge));
    wire::encode_frame(&Value::Object(frame))
}

/// `HELLO/client_response` (§6.3 step 3).
pub fn hello_client_response(
    frame_id: &str,
    agent_id: &str,
    key_id: &str,
    client_nonce: &str,
    server_nonce: &str,
    challenge_signature: &str,
) -> Result<Vec<u8>, FrameError> {
    let mut frame = hello(frame_id, "client_response");
    frame.insert("agentId", Value::string(agent_id));
    frame.insert("keyId", Value::string(key_id));
    frame.insert("clientNonce", Value::string(client_nonce));
    frame.insert("serverNonce", Value::string(server_nonce));
    frame.insert("challengeSignature", Value::string(challenge_signature));
    wire::encode_frame(&Value::Object(frame))
}

/// `HELLO/server_accept` (§6.3 step 4).
pub fn hello_server_accept(
    frame_id: &str,
    selected_version: &str,
    session_token: &str,
    session_epoch: u64,
    expires_at: &str,
) -> Result<Vec<u8>, FrameError> {
    let mut frame = hello(frame_id, "server_accept");
    frame.insert("selectedVersion", Value::string(selected_version));
    frame.insert("sessionToken", Value::string(session_token));
    frame.insert("sessionEpoch", integer(session_epoch));
    frame.insert("expiresAt", Value::string(expires_at));
    wire::encode_frame(&Value::Object(frame))
}

/// One Group of a `SUBSCRIBE` frame (§17.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscribeGroup {
    /// The Group.
    pub group_id: String,
    /// Replay Events after this sequence (the Agent's durable Cursor, §16).
    pub after_sequence: u64,
    /// The live attention filter, if any.
    pub attention: Option<Attention>,
}

/// `SUBSCRIBE` (§17.2).
pub fn subscribe(
    frame_id: &str,
    subscription_id: &str,
    groups: &[SubscribeGroup],
) -> Result<Vec<u8>, FrameError> {
    let mut frame = envelope(frame_id, "SUBSCRIBE");
    frame.insert("subscriptionId", Value::string(subscription_id));
    let groups = groups
        .iter()
        .map(|group| {
            let mut entry = Object::new();
            entry.insert("groupId", Value::string(group.group_id.as_str()));
            entry.insert("afterSequence", integer(group.after_sequence));
            if let Some(attention) = &group.attention {
                entry.insert("attention", attention.to_value());
            }
            Value::Object(entry)
        })
        .collect();
    frame.insert("groups", Value::Array(groups));
    wire::encode_frame(&Value::Object(frame))
}

/// The nested document must be one strict JSON object (the splice below keeps its bytes).
fn check_nested_object(bytes: &[u8]) -> Result<(), FrameError> {
    let document = Document::parse(bytes, &ParseLimits::DOCUMENT).map_err(|e| FrameError {
        code: WireCode::ProtocolViolation,
        detail: e.to_string(),
    })?;
    if document.root().as_object().is_none() {
        return Err(FrameError {
            code: WireCode::SchemaValidationFailed,
            detail: "the nested document must be a JSON object".into(),
        });
    }
    Ok(())
}

/// `{"<member>":<bytes>,"frameId":…,"frameType":"<type>","protocolVersion":"0.1"}`: member
/// names in RFC 8785 order ("command" and "event" sort before "frameId").
fn splice(member: &str, bytes: &[u8], frame_id: &str, frame_type: &str) -> Vec<u8> {
    let mut id = String::with_capacity(frame_id.len() + 2);
    write_json_string(&mut id, frame_id);
    const TAIL: &[u8] = b"\",\"protocolVersion\":\"0.1\"}";
    const ID: &[u8] = b",\"frameId\":";
    const TYPE: &[u8] = b",\"frameType\":\"";
    // Exactly the frame's length: a queued frame is shrunk to its length (the connection's
    // memory bound counts lengths), which reallocated every frame built with room to spare.
    let len = 2
        + member.len()
        + 2
        + bytes.len()
        + ID.len()
        + id.len()
        + TYPE.len()
        + frame_type.len()
        + TAIL.len();
    let mut frame = Vec::with_capacity(len);
    frame.extend_from_slice(b"{\"");
    frame.extend_from_slice(member.as_bytes());
    frame.extend_from_slice(b"\":");
    frame.extend_from_slice(bytes);
    frame.extend_from_slice(ID);
    frame.extend_from_slice(id.as_bytes());
    frame.extend_from_slice(TYPE);
    frame.extend_from_slice(frame_type.as_bytes());
    frame.extend_from_slice(TAIL);
    debug_assert_eq!(frame.len(), len);
    frame
}

/// `COMMAND` (§15.1) around the exact signed Command `command_bytes`: the server verifies the
/// bytes it receives (six stages), so they are never re-serialized. The envelope is checked
/// here (`wire::parse_received_frame`); the Command itself is judged by the server's ingress.
pub fn command(frame_id: &str, command_bytes: &[u8]) -> Result<Vec<u8>, FrameError> {
    check_nested_object(command_bytes)?;
    let frame = splice("command", command_bytes, frame_id, "COMMAND");
    wire::parse_received_frame(&frame)?;
    Ok(frame)
}

/// `EVENT` (§15.2) around a signed Event's stored canonical bytes. Debug builds and tests
/// check the whole frame against the schema (the Core checked the Event before serving it).
pub fn event(frame_id: &str, event_bytes: &[u8]) -> Result<Vec<u8>, FrameError> {
    let frame = splice("event", event_bytes, frame_id, "EVENT");
    if cfg!(debug_assertions) {
        wire::parse_frame(&frame)?;
    } else if !is_protocol_frame_id(frame_id) {
        return Err(FrameError {
            code: WireCode::SchemaValidationFailed,
            detail: "frameId is not a protocol ID".into(),
        });
    }
    Ok(frame)
}

fn is_protocol_frame_id(frame_id: &str) -> bool {
    missionweaveprotocol::schema_formats::is_protocol_id(frame_id)
}

/// One Cursor of an `ACK` frame (§16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acknowledgement<'a> {
    /// The Group.
    pub group_id: &'a str,
    /// The highest contiguous sequence durably processed.
    pub sequence: u64,
}

/// `ACK` (§16): one or more Cursors.
pub fn ack(
    frame_id: &str,
    acknowledgements: &[Acknowledgement<'_>],
    sent_at: &str,
) -> Result<Vec<u8>, FrameError> {
    let mut frame = envelope(frame_id, "ACK");
    let items = acknowledgements
        .iter()
        .map(|a| {
            let mut item = Object::new();
            item.insert("groupId", Value::string(a.group_id));
            item.insert("sequence", integer(a.sequence));
            Value::Object(item)
        })
        .collect();
    frame.insert("acknowledgements", Value::Array(items));
    frame.insert("sentAt", Value::string(sent_at));
    wire::encode_frame(&Value::Object(frame))
}

/// `PING` (§17.3): a fresh `nonce`, the peer's nonce when this is a reply, and optionally a
/// Presence Record (§6.2).
pub fn ping(
    frame_id: &str,
    nonce: &str,
    reply_to_nonce: Option<&str>,
    sent_at: &str,
    presence: Option<&Value>,
) -> Result<Vec<u8>, FrameError> {
    let mut frame = envelope(frame_id, "PING");
    frame.insert("nonce", Value::string(nonce));
    if let Some(reply) = reply_to_nonce {
        frame.insert("replyToNonce", Value::string(reply));
    }
    frame.insert("sentAt", Value::string(sent_at));
    if let Some(presence) = presence {
        frame.insert("presence", presence.clone());
    }
    wire::encode_frame(&Value::Object(frame))
}

/// `ERROR` (§19).
pub fn error(frame_id: &str, body: &ErrorBody, occurred_at: &str) -> Result<Vec<u8>, FrameError> {
    let mut frame = envelope(frame_id, "ERROR");
    frame.insert("error", Value::Object(body.to_object(occurred_at)));
    wire::encode_frame(&Value::Object(frame))
}
