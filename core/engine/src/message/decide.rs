//! The pure decisions of the four Message Commands (§9, §9.1 last paragraph, digest 2.14).
//!
//! | target state | Command | by | target after | Event |
//! | --- | --- | --- | --- | --- |
//! | none | `message.post` | a Group member or the current Coordinator | `posted` | `message.posted` |
//! | `posted`, `corrected` (a `message`) | `message.correct` | its author | `corrected` | `message.corrected` |
//! | `posted`, `corrected` (a `message`) | `message.retract` | its author | `retracted` | `message.retracted` |
//! | any but `redacted` (not a redaction) | `message.redact` | its author, the MissionOwner or the current Coordinator | `redacted` | `message.redacted` |
//!
//! Every amendment is a new Message (`kind` `correction`, `retraction`, `redaction`,
//! `targetMessageId`, `reason`) in the target's Conversation, stored under its own ID; the
//! target's Event is never touched (§4 invariant 6). The Event payload is `{"message": <the
//! new Message document>}`, plus `targetState` for an amendment; its `aggregateRevision` is
//! the revision of the Message it changes (the new one for a post, the target for an
//! amendment), its `conversationId` and `workItemId` those of the Conversation, so live
//! attention filters (§8, §17.2 `conversationIds`, `workItemIds`) select it.

use missionweaveprotocol::json::{Object, Value};

use super::aggregate::{MESSAGE_KIND, MessageState, StoredMessage, message_key};
use super::eligibility::{require_mentioned, require_sender, resolve_conversation};
use super::payload::{MessagePayload, parse};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::rfc3339;
use crate::mission::{
    self,
    aggregate::{GROUP_KIND, MISSION_KIND, Mission},
};
use crate::store::{AggregateKey, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// What every Message decision starts from: the Group (active, not archived) and its Mission.
struct Context {
    mission: Mission,
    group_revision: u64,
    main_conversation_id: Option<String>,
}

fn context(store: &dyn Store, command: &VerifiedCommand) -> Result<Context, EngineError> {
    let read = mission::read(store, command)?;
    let not_found = || EngineError::GroupNotFound {
        group: read.group_id.clone(),
    };
    let group = read.group.as_ref().ok_or_else(not_found)?;
    let mission = read.mission.clone().ok_or_else(not_found)?;
    let state = group.document.get("state").and_then(Value::as_str);
    if state != Some("active") {
        // §7.4: an archived Group is a closed record.
        return Err(EngineError::InvalidStateTransition {
            aggregate: GROUP_KIND,
            id: read.group_id.clone(),
            state: state.unwrap_or("none").to_owned(),
            command: command.kind().to_owned(),
        });
    }
    Ok(Context {
        mission,
        group_revision: group.revision,
        main_conversation_id: group
            .document
            .get("mainConversationId")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// The new Message's ID must be free in the Group (append-only: IDs are never reused).
fn require_free(
    store: &dyn Store,
    command: &VerifiedCommand,
    group_id: &str,
    message_id: &str,
) -> Result<(), EngineError> {
    match StoredMessage::read(store, group_id, message_id)? {
        None => Ok(()),
        Some(existing) => Err(EngineError::InvalidStateTransition {
            aggregate: MESSAGE_KIND,
            id: message_id.to_owned(),
            state: existing.state().as_str().to_owned(),
            command: command.kind().to_owned(),
        }),
    }
}

/// §15.3: `expectedRevision` names the revision of the Message the Command changes (0 for a
/// post: the new Message is absent).
fn expected_revision(
    command: &VerifiedCommand,
    key: &AggregateKey,
    current: u64,
) -> Result<(), EngineError> {
    match command.expected_revision() {
        Some(expected) if expected != current => Err(EngineError::RevisionConflict {
            key: key.clone(),
            expected,
            current,
        }),
        _ => Ok(()),
    }
}

/// The Message document a Command commits (schema-checked by [`StoredMessage::committed`]).
fn document(
    command: &VerifiedCommand,
    mission: &Mission,
    p: &MessagePayload,
    conversation_id: &str,
    kind: &str,
    content: Value,
    now: UnixMillis,
) -> Object {
    let mut doc = Object::new();
    doc.insert("messageId", Value::string(&p.message_id));
    doc.insert("missionId", Value::string(mission.mission_id()));
    doc.insert("groupId", Value::string(mission.group_id()));
    doc.insert("conversationId", Value::string(conversation_id));
    doc.insert("author", command.actor().to_value());
    doc.insert("kind", Value::string(kind));
    doc.insert("authority", Value::Bool(false));
    if let Some(target) = &p.target_message_id {
        doc.insert("targetMessageId", Value::string(target));
    }
    doc.insert("content", content);
    if let Some(m) = &p.mentions_value {
        doc.insert("mentions", m.clone());
    }
    let mut references: Vec<Value> = Vec::new();
    if let Some(reply) = &p.reply_to {
        references.push(Value::string(reply));
    }
    match &p.references {
        Some(Value::Array(items)) => references.extend(
            items
                .iter()
                .filter(|r| p.reply_to.as_deref() != r.as_str())
                .cloned(),
        ),
        // Not an array: kept as given, so the schema check names it.
        Some(other) if references.is_empty() => {
            doc.insert("references", other.clone());
        }
        _ => {}
    }
    if !references.is_empty() {
        doc.insert("references", Value::Array(references));
    }
    if let Some(reason) = &p.reason {
        doc.insert("reason", Value::string(reason));
    }
    doc.insert("committedAt", Value::string(rfc3339(now)));
    doc
}

fn event(
    command: &VerifiedCommand,
    kind: &str,
    message: &StoredMessage,
    target_state: Option<MessageState>,
) -> EventDraft {
    let mut payload = Object::new();
    payload.insert("message", Value::Object(message.document().clone()));
    if let Some(state) = target_state {
        payload.insert("targetState", Value::string(state.as_str()));
    }
    let mut draft = EventDraft::for_command(command, kind, payload);
    draft.conversation_id = Some(message.conversation_id().to_owned());
    draft.work_item_id = message.work_item_id().map(str::to_owned);
    draft
}

/// The checks every Message decision carries: the Group and the Mission it read.
fn base(ctx: &Context) -> Decision {
    Decision::default()
        .check(
            AggregateKey::new(GROUP_KIND, ctx.mission.group_id()),
            ctx.group_revision,
        )
        .check(
            AggregateKey::new(MISSION_KIND, ctx.mission.mission_id()),
            ctx.mission.revision(),
        )
}

/// `message.post`.
pub(crate) fn post(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let ctx = context(store, command)?;
    let mission = &ctx.mission;
    let group_id = mission.group_id();
    let decision = require_sender(store, command, mission, base(&ctx))?;
    let p = parse(command)?;
    let key = message_key(group_id, &p.message_id);
    expected_revision(command, &key, 0)?;
    require_free(store, command, group_id, &p.message_id)?;
    let conversation_id = p.conversation_id.clone().unwrap_or_default();
    let work_item_id = resolve_conversation(
        store,
        ctx.main_conversation_id.as_deref(),
        mission,
        &conversation_id,
        p.work_item_id.as_deref(),
    )?;
    let mut decision = require_mentioned(store, mission, &p.mentions, decision)?;
    if let Some(reply) = &p.reply_to {
        // A thread stays in its Conversation and its Group.
        let target = StoredMessage::read(store, group_id, reply)?.ok_or_else(|| {
            EngineError::invalid(
                "unknown_reply_target",
                format!("replyTo names no Message of Group {group_id}"),
            )
        })?;
        if target.conversation_id() != conversation_id {
            return Err(EngineError::invalid(
                "reply_across_conversations",
                "a reply stays in the Conversation of the Message it answers",
            ));
        }
        decision = decision.check(message_key(group_id, reply), target.revision());
    }
    let content = p.content.clone().unwrap_or(Value::Null);
    let doc = document(
        command,
        mission,
        &p,
        &conversation_id,
        "message",
        content,
        now,
    );
    let message = StoredMessage::committed(doc, work_item_id)?;
    Ok(decision.put(key, 0, message.to_blob()?).event(
        event(command, "message.posted", &message, None),
        group_id,
        1,
    ))
}

/// `message.correct`, `message.retract` and `message.redact`.
pub(crate) fn amend(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (amendment_kind, event_kind, next) = match command.kind() {
        "message.correct" => ("correction", "message.corrected", MessageState::Corrected),
        "message.retract" => ("retraction", "message.retracted", MessageState::Retracted),
        _ => ("redaction", "message.redacted", MessageState::Redacted),
    };
    let ctx = context(store, command)?;
    let mission = &ctx.mission;
    let group_id = mission.group_id();
    let decision = require_sender(store, command, mission, base(&ctx))?;
    let p = parse(command)?;
    let target_id = p.target_message_id.clone().unwrap_or_default();
    let target_key = message_key(group_id, &target_id);
    let target = StoredMessage::read(store, group_id, &target_id)?.ok_or_else(|| {
        EngineError::invalid(
            "unknown_message",
            format!("targetMessageId names no Message of Group {group_id}"),
        )
    })?;
    require_author_or_moderator(command, mission, &target, next)?;
    expected_revision(command, &target_key, target.revision())?;
    require_transition(command, &target, next)?;
    if p.conversation_id
        .as_deref()
        .is_some_and(|c| c != target.conversation_id())
    {
        return Err(EngineError::invalid(
            "conversation_mismatch",
            "an amendment stays in the Conversation of the Message it amends",
        ));
    }
    let new_key = message_key(group_id, &p.message_id);
    require_free(store, command, group_id, &p.message_id)?;
    let decision = require_mentioned(store, mission, &p.mentions, decision)?;
    // message.schema.json requires content (≥ 1 item) on every Message; a retraction or
    // redaction that gives none states its reason as its content. A redaction never repeats
    // the body it removes.
    let reason = p.reason.clone().unwrap_or_default();
    let content = p.content.clone().unwrap_or_else(|| {
        let mut item = Object::new();
        item.insert("type", Value::string("text"));
        item.insert("text", Value::string(&reason));
        Value::Array(vec![Value::Object(item)])
    });
    let doc = document(
        command,
        mission,
        &p,
        target.conversation_id(),
        amendment_kind,
        content,
        now,
    );
    let amendment = StoredMessage::committed(doc, target.work_item_id().map(str::to_owned))?;
    let after = target.amended(next, &p.message_id);
    Ok(decision
        .put(new_key, 0, amendment.to_blob()?)
        .put(target_key, target.revision(), after.to_blob()?)
        .event(
            event(command, event_kind, &amendment, Some(next)),
            group_id,
            after.revision(),
        ))
}

/// Correction and retraction: only the author (§9.1 "Accepted Messages are immutable"; the
/// author alone may restate or withdraw what it said). Redaction: the author, the MissionOwner
/// or the current Coordinator, who must be able to inspect everything in the Mission's audit
/// boundary (§9) and so to remove a body that must not be there (§12: tokens and secrets MUST
/// NOT appear in Messages).
fn require_author_or_moderator(
    command: &VerifiedCommand,
    mission: &Mission,
    target: &StoredMessage,
    next: MessageState,
) -> Result<(), EngineError> {
    let actor = command.actor();
    if target.author().as_ref() == Some(actor) {
        return Ok(());
    }
    if next == MessageState::Redacted {
        let coordinator = actor.kind == missionweaveprotocol::PrincipalType::Agent
            && actor.id == mission.coordinator().agent_id;
        if actor == mission.owner() || coordinator {
            return Ok(());
        }
        return Err(EngineError::forbidden(
            "not_author_owner_or_coordinator",
            "only the author, the MissionOwner or the current Coordinator may redact a Message",
        ));
    }
    Err(EngineError::forbidden(
        "not_message_author",
        format!(
            "only the author of {} may {} it",
            target.message_id(),
            command.kind().trim_start_matches("message.")
        ),
    ))
}

/// The target's state and kind must allow the amendment (module table).
fn require_transition(
    command: &VerifiedCommand,
    target: &StoredMessage,
    next: MessageState,
) -> Result<(), EngineError> {
    let original = target.kind() == "message";
    if next != MessageState::Redacted && !original {
        return Err(EngineError::invalid(
            "target_is_amendment",
            format!(
                "{} is a {}: only an original Message is corrected or retracted",
                target.message_id(),
                target.kind()
            ),
        ));
    }
    if next == MessageState::Redacted && target.kind() == "redaction" {
        return Err(EngineError::invalid(
            "target_is_amendment",
            "a redaction is not redacted again",
        ));
    }
    let allowed = match next {
        MessageState::Redacted => target.state() != MessageState::Redacted,
        _ => matches!(
            target.state(),
            MessageState::Posted | MessageState::Corrected
        ),
    };
    if allowed {
        Ok(())
    } else {
        Err(EngineError::InvalidStateTransition {
            aggregate: MESSAGE_KIND,
            id: target.message_id().to_owned(),
            state: target.state().as_str().to_owned(),
            command: command.kind().to_owned(),
        })
    }
}
