//! The payloads of the four Message Commands (digest §8 item 1: the spec gives every payload
//! only `{"type": "object"}`, so the engine states the members; `docs/engine.md`).
//!
//! | kind | members (`?` optional) |
//! | --- | --- |
//! | `message.post` | `messageId`, `content`, `conversationId?` (else the envelope's), `workItemId?` (else the envelope's), `replyTo?`, `mentions?`, `references?`, `authority?` (only `false`) |
//! | `message.correct` | `messageId` (the correction's own), `targetMessageId`, `content`, `reason`, `mentions?`, `references?`, `authority?` |
//! | `message.retract` / `message.redact` | `messageId`, `targetMessageId`, `reason`, `content?`, `authority?` |
//!
//! The member sets are closed (`crate::input::members`, §21): anything else (an
//! `authorization`, a capability token, an approval) is refused `SCHEMA_VALIDATION_FAILED`
//! `unknown_payload_member`, so a Message Command can carry no authority under any name (§4
//! invariant 2). `authority` other than `false` is refused
//! `SCHEMA_VALIDATION_FAILED`: the Message it would commit violates `message.schema.json`
//! `authority: const false` (conformance vector `message-authorizes-action`).

use missionweaveprotocol::Principal;
use missionweaveprotocol::json::Value;

use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::input::{member, opt_text, text};

/// At most this many mentions per Message: each one is a Membership read and a commit-time
/// check (§20 "limits on Message … rates" is policy; this bounds one Command's cost).
pub const MAX_MENTIONS: usize = 64;

/// What a Message Command's payload says, checked for shape only.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MessagePayload {
    /// The new Message's ID.
    pub message_id: String,
    /// `content`, if given (required for post and correct).
    pub content: Option<Value>,
    /// The addressed Conversation: payload, else envelope (post; amendments inherit it).
    pub conversation_id: Option<String>,
    /// The WorkItem whose Conversation is addressed: envelope, else payload.
    pub work_item_id: Option<String>,
    /// The Message this one replies to (post).
    pub reply_to: Option<String>,
    /// The amended Message (correct, retract, redact).
    pub target_message_id: Option<String>,
    /// The amendment's reason (correct, retract, redact).
    pub reason: Option<String>,
    /// The mentioned Principals, in payload order.
    pub mentions: Vec<Principal>,
    /// `mentions` as given (kept verbatim in the Message).
    pub mentions_value: Option<Value>,
    /// `references` as given.
    pub references: Option<Value>,
}

/// Parses and shape-checks `command`'s payload for its Message kind.
pub(crate) fn parse(command: &VerifiedCommand) -> Result<MessagePayload, EngineError> {
    let p = command.payload();
    let kind = command.kind();
    if p.as_object().is_none() {
        return Err(EngineError::invalid(
            "missing_member",
            "the payload is not an object",
        ));
    }
    // The engine checked this before reading anything (`Engine::perform`); checked again here
    // so no path into the Message decision takes a Message carrying authority under any name.
    crate::input::members::check(kind, p)?;
    refuse_authority(p)?;
    let post = kind == "message.post";
    let amendment = !post;
    let content = match (p.get("content"), kind) {
        (None, "message.post" | "message.correct") => Some(member(p, "content")?.clone()),
        (c, _) => c.cloned(),
    };
    let conversation_id = match (opt_text(p, "conversationId")?, command.conversation_id()) {
        (Some(inner), Some(outer)) if inner != outer => {
            return Err(EngineError::invalid(
                "conversation_mismatch",
                "payload conversationId differs from the envelope's",
            ));
        }
        (inner, outer) => inner.or(outer).map(str::to_owned),
    };
    let work_item_id = match (opt_text(p, "workItemId")?, command.work_item_id()) {
        (Some(inner), Some(outer)) if inner != outer => {
            return Err(EngineError::invalid(
                "work_item_mismatch",
                "payload workItemId differs from the envelope's",
            ));
        }
        (inner, outer) => outer.or(inner).map(str::to_owned),
    };
    if post && conversation_id.is_none() {
        return Err(EngineError::invalid(
            "missing_member",
            "conversationId is required (payload or envelope, §9)",
        ));
    }
    let mentions_value = p.get("mentions").cloned();
    let mentions = match &mentions_value {
        None => Vec::new(),
        Some(v) => mentions(v)?,
    };
    Ok(MessagePayload {
        message_id: text(p, "messageId")?.to_owned(),
        content,
        conversation_id,
        work_item_id,
        reply_to: opt_text(p, "replyTo")?.map(str::to_owned),
        target_message_id: match amendment {
            true => Some(text(p, "targetMessageId")?.to_owned()),
            false => None,
        },
        reason: match amendment {
            true => Some(text(p, "reason")?.to_owned()),
            false => None,
        },
        mentions,
        mentions_value,
        references: p.get("references").cloned(),
    })
}

/// §4 invariant 2, §9: "Every Message object has `authority: false`".
fn refuse_authority(p: &Value) -> Result<(), EngineError> {
    if super::authority::claims_authority(p) {
        return Err(EngineError::SchemaInvalid {
            schema: "message",
            detail: "/authority must be false: a Message never authorizes an action (§4 invariant 2, §9)"
                .into(),
        });
    }
    Ok(())
}

fn mentions(value: &Value) -> Result<Vec<Principal>, EngineError> {
    let items = value.as_array().ok_or_else(|| {
        EngineError::invalid("invalid_mentions", "mentions must be an array of actors")
    })?;
    if items.len() > MAX_MENTIONS {
        return Err(EngineError::invalid(
            "too_many_mentions",
            format!("a Message mentions at most {MAX_MENTIONS} Principals"),
        ));
    }
    items
        .iter()
        .map(|item| {
            Principal::from_value(item).ok_or_else(|| {
                EngineError::invalid("invalid_mentions", "each mention is an actor {type, id}")
            })
        })
        .collect()
}
