//! The Message aggregate as stored: one per (Group, Message ID), store kind [`MESSAGE_KIND`],
//! canonical JSON
//!
//! ```json
//! {"message": <message.schema.json document, without "content" once redacted>,
//!  "state": "posted" | "corrected" | "retracted" | "redacted",
//!  "workItemId": "<the WorkItem whose Conversation holds it>",   // optional
//!  "lastAmendmentId": "<the latest correction/retraction/redaction>"}  // optional
//! ```
//!
//! §9.1 / §4 invariant 6: the Message as committed is never rewritten; its Event stays in the
//! Group log byte for byte. The aggregate is the latest effective form a reader is shown
//! (`state`, the last amendment): a redaction drops the body from the projection but keeps its
//! provenance (`messageId`, `author`, `conversationId`, `committedAt`, `mentions`).
//!
//! The store ID is `<groupId>#message:<messageId>`: Message IDs are scoped to their Group
//! (§4 invariant 9, Mission isolation: a Command in one Group can neither find nor collide with
//! another Group's Messages).

use missionweaveprotocol::Principal;
use missionweaveprotocol::json::{self, Object, Value, View};
use missionweaveprotocol::schema::SchemaCatalog;

use crate::error::EngineError;
use crate::store::{Aggregate, AggregateKey, Blob, Store};

/// The store kind of Message aggregates.
pub const MESSAGE_KIND: &str = "message";

/// The store key of Message `message_id` in `group_id`.
pub fn message_key(group_id: &str, message_id: &str) -> AggregateKey {
    AggregateKey::new(MESSAGE_KIND, format!("{group_id}#message:{message_id}"))
}

/// The effective state of a stored Message (digest 2.14: append-only; each amendment is a new
/// Message whose Event references the original).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageState {
    /// As committed (every amendment Message is `posted` too until redacted).
    Posted,
    /// At least one correction was appended; the latest is `lastAmendmentId`.
    Corrected,
    /// Retracted by its author: still readable, no longer asserted.
    Retracted,
    /// Redacted under a policy reason: the body is gone from the projection.
    Redacted,
}

impl MessageState {
    /// The stored spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Posted => "posted",
            Self::Corrected => "corrected",
            Self::Retracted => "retracted",
            Self::Redacted => "redacted",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "posted" => Some(Self::Posted),
            "corrected" => Some(Self::Corrected),
            "retracted" => Some(Self::Retracted),
            "redacted" => Some(Self::Redacted),
            _ => None,
        }
    }
}

/// A stored Message and its effective state.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    document: Object,
    state: MessageState,
    work_item_id: Option<String>,
    last_amendment_id: Option<String>,
    revision: u64,
}

impl StoredMessage {
    /// A newly committed Message: `document` must conform to `message.schema.json` (checked
    /// here: no invalid Message is ever stored or signed into an Event).
    pub(crate) fn committed(
        document: Object,
        work_item_id: Option<String>,
    ) -> Result<Self, EngineError> {
        validate(&document)?;
        Ok(Self {
            document,
            state: MessageState::Posted,
            work_item_id,
            last_amendment_id: None,
            revision: 1,
        })
    }

    /// The next revision of this Message after the amendment `amendment_id` moved it to `state`;
    /// a redaction drops the body (`content`) and keeps the provenance.
    pub(crate) fn amended(&self, state: MessageState, amendment_id: &str) -> Self {
        let mut document = self.document.clone();
        if state == MessageState::Redacted {
            document.remove("content");
        }
        Self {
            document,
            state,
            work_item_id: self.work_item_id.clone(),
            last_amendment_id: Some(amendment_id.to_owned()),
            revision: self.revision + 1,
        }
    }

    /// Reads a stored Message.
    pub fn from_stored(key: &AggregateKey, stored: &Aggregate) -> Result<Self, EngineError> {
        let corrupt = |detail: &str| EngineError::Corrupt {
            key: key.clone(),
            detail: detail.to_owned(),
        };
        let value = json::parse_state(&stored.value).map_err(|e| corrupt(&e.to_string()))?;
        let document = value
            .get("message")
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| corrupt("message is missing"))?;
        let state = value
            .get("state")
            .and_then(Value::as_str)
            .and_then(MessageState::parse)
            .ok_or_else(|| corrupt("state is missing"))?;
        let text = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
        Ok(Self {
            document,
            state,
            work_item_id: text("workItemId"),
            last_amendment_id: text("lastAmendmentId"),
            revision: stored.revision,
        })
    }

    /// Message `message_id` of `group_id`, if stored.
    pub fn read(
        store: &dyn Store,
        group_id: &str,
        message_id: &str,
    ) -> Result<Option<Self>, EngineError> {
        let key = message_key(group_id, message_id);
        match store.aggregate(&key)? {
            None => Ok(None),
            Some(stored) => Self::from_stored(&key, &stored).map(Some),
        }
    }

    /// The stored canonical JSON bytes.
    pub fn to_blob(&self) -> Result<Blob, EngineError> {
        json::canonical_bytes(&self.to_value())
            .map(Blob::from)
            .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))
    }

    /// The stored form (see the module documentation).
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        o.insert("message", Value::Object(self.document.clone()));
        o.insert("state", Value::string(self.state.as_str()));
        if let Some(id) = &self.work_item_id {
            o.insert("workItemId", Value::string(id));
        }
        if let Some(id) = &self.last_amendment_id {
            o.insert("lastAmendmentId", Value::string(id));
        }
        Value::Object(o)
    }

    /// The Message document (without `content` once redacted).
    pub fn document(&self) -> &Object {
        &self.document
    }

    /// The store revision (1 when committed, + 1 per amendment).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The effective state.
    pub fn state(&self) -> MessageState {
        self.state
    }

    /// The WorkItem whose Conversation holds the Message, if any.
    pub fn work_item_id(&self) -> Option<&str> {
        self.work_item_id.as_deref()
    }

    /// The latest amendment's Message ID, if any.
    pub fn last_amendment_id(&self) -> Option<&str> {
        self.last_amendment_id.as_deref()
    }

    fn text(&self, name: &str) -> &str {
        self.document
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// `messageId`.
    pub fn message_id(&self) -> &str {
        self.text("messageId")
    }

    /// `conversationId`.
    pub fn conversation_id(&self) -> &str {
        self.text("conversationId")
    }

    /// `kind`: `message`, `correction`, `retraction` or `redaction`.
    pub fn kind(&self) -> &str {
        self.text("kind")
    }

    /// `author`.
    pub fn author(&self) -> Option<Principal> {
        self.document.get("author").and_then(Principal::from_value)
    }
}

/// `message.schema.json`, through a view (no copy of the document).
pub(crate) fn validate(document: &Object) -> Result<(), EngineError> {
    SchemaCatalog::embedded()
        .validate_view("message", View::Object(document.view()))
        .map_err(|issue| EngineError::SchemaInvalid {
            schema: "message",
            detail: issue.to_string(),
        })
}
