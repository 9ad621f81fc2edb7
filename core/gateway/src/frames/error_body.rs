//! The `error.schema.json` object of an `ERROR` frame (§19): machine-readable, stating whether
//! an unchanged retry is safe, identifying the related frame or Action ID, and carrying only
//! what the receiver may know.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::schema_formats::is_protocol_id;

/// `error.schema.json` `message` `maxLength`.
pub const MAX_ERROR_MESSAGE_CHARS: usize = 2000;

/// One protocol error. `occurredAt` is given when the frame is built.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorBody {
    /// The §19 code.
    pub code: WireCode,
    /// A wire-safe message (1–2000 characters; longer ones are cut, an empty one is the code).
    pub message: String,
    /// Whether an unchanged retry is safe (§19).
    pub retryable: bool,
    /// Set when the sender closes the connection after this error.
    pub fatal: Option<bool>,
    /// The frame this error answers.
    pub related_frame_id: Option<String>,
    /// The Action ID of the Command this error answers.
    pub related_action_id: Option<String>,
    /// The Group the error is about (only one the receiver named itself or may see).
    pub group_id: Option<String>,
    /// `REVISION_CONFLICT`: the revision the Command expected.
    pub expected_revision: Option<u64>,
    /// `REVISION_CONFLICT`: the current revision.
    pub current_revision: Option<u64>,
    /// `BACKPRESSURE`, `RATE_LIMITED`: when to try again.
    pub retry_after_ms: Option<u64>,
    /// `CURSOR_TOO_OLD`: the signed snapshot to restore (§16).
    pub snapshot_artifact_hash: Option<String>,
    /// Structured details (the limit refused, …).
    pub details: Option<Object>,
}

/// The largest safe integer of the schemas (`safeInteger`).
const MAX_SAFE: u64 = (1 << 53) - 1;

impl ErrorBody {
    /// An error with `code` and `message`; `retryable` is the vocabulary's
    /// ([`WireCode::retryable`]).
    pub fn new(code: WireCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: code.retryable(),
            fatal: None,
            related_frame_id: None,
            related_action_id: None,
            group_id: None,
            expected_revision: None,
            current_revision: None,
            retry_after_ms: None,
            snapshot_artifact_hash: None,
            details: None,
        }
    }

    /// The same error answering frame `frame_id`.
    pub fn related_to(mut self, frame_id: &str) -> Self {
        self.related_frame_id = Some(frame_id.to_owned());
        self
    }

    /// The same error about Group `group_id`.
    pub fn in_group(mut self, group_id: &str) -> Self {
        self.group_id = Some(group_id.to_owned());
        self
    }

    /// The message as the schema allows it: at most 2000 characters, never empty.
    fn wire_message(&self) -> String {
        let message: String = self.message.chars().take(MAX_ERROR_MESSAGE_CHARS).collect();
        if message.is_empty() {
            self.code.as_str().to_owned()
        } else {
            message
        }
    }

    /// The `error.schema.json` object. Identifiers that are not protocol IDs and integers
    /// beyond the safe range are left out rather than producing an invalid frame.
    pub fn to_object(&self, occurred_at: &str) -> Object {
        let mut error = Object::new();
        error.insert("code", Value::string(self.code.as_str()));
        error.insert("message", Value::string(self.wire_message()));
        error.insert("retryable", Value::Bool(self.retryable));
        error.insert("occurredAt", Value::string(occurred_at));
        if let Some(fatal) = self.fatal {
            error.insert("fatal", Value::Bool(fatal));
        }
        let ids = [
            ("relatedFrameId", &self.related_frame_id),
            ("relatedActionId", &self.related_action_id),
            ("groupId", &self.group_id),
        ];
        for (name, id) in ids {
            if let Some(id) = id.as_deref().filter(|id| is_protocol_id(id)) {
                error.insert(name, Value::string(id));
            }
        }
        let integers = [
            ("expectedRevision", self.expected_revision),
            ("currentRevision", self.current_revision),
            ("retryAfterMs", self.retry_after_ms),
        ];
        for (name, value) in integers {
            if let Some(value) = value.filter(|v| *v <= MAX_SAFE) {
                error.insert(name, Value::Number(Number::from_u64(value)));
            }
        }
        if let Some(hash) = self
            .snapshot_artifact_hash
            .as_deref()
            .filter(|h| is_sha256(h))
        {
            error.insert("snapshotArtifactHash", Value::string(hash));
        }
        if let Some(details) = &self.details {
            error.insert("details", Value::Object(details.clone()));
        }
        error
    }

    /// The error of a schema-valid `error` object (the client reading an `ERROR` frame).
    pub fn from_value(value: &Value) -> Option<Self> {
        let text = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
        let integer = |name: &str| {
            value
                .get(name)
                .and_then(Value::as_number)
                .and_then(Number::as_u64)
        };
        let code = WireCode::parse(value.get("code")?.as_str()?)?;
        Some(Self {
            code,
            message: text("message")?,
            retryable: value.get("retryable")?.as_bool()?,
            fatal: value.get("fatal").and_then(Value::as_bool),
            related_frame_id: text("relatedFrameId"),
            related_action_id: text("relatedActionId"),
            group_id: text("groupId"),
            expected_revision: integer("expectedRevision"),
            current_revision: integer("currentRevision"),
            retry_after_ms: integer("retryAfterMs"),
            snapshot_artifact_hash: text("snapshotArtifactHash"),
            details: value.get("details").and_then(Value::as_object).cloned(),
        })
    }
}

fn is_sha256(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}
