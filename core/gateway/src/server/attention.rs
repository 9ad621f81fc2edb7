//! What a live attention filter selects (§8: "live delivery MUST support attention filters. A
//! Worker SHOULD receive its WorkItem Conversations, direct mentions, important announcements,
//! and subscribed cross-cutting topics"; §17.2: a filter changes live delivery, not
//! authorization or durable history).
//!
//! The spec names the filter members but not their semantics; ours, with a filter present:
//!
//! - the Agent's own actions (`actor` = the Agent) and facts about its own Membership
//!   (`payload.membership.member` = the Agent) are always delivered: they answer its Commands
//!   and change what it may do;
//! - a Message Event (`message.*`) that mentions the Agent (`payload.message.mentions`) is
//!   delivered; with `mentionsOnly: true`, a Message Event is delivered *only* then;
//! - otherwise an Event is delivered when any list selects it: its `kind` is in `eventKinds`,
//!   its `conversationId` in `conversationIds`, its `workItemId` in `workItemIds`, or
//!   `announcements: true` and it is a Mission- or Group-level fact (`mission.*`, `group.*`).
//!
//! Replay is never filtered: Events up to the Group's head when the subscription was made are
//! delivered whatever the filter (`delivery.rs`). A filtered subscription leaves gaps in live
//! delivery; the client knows it asked for one (`client::Session` delivers such Events as
//! attention, without moving the durable Cursor over the gap, §16).

use missionweaveprotocol::json::View;

use crate::frames::Attention;

fn listed(list: &Option<Vec<String>>, value: Option<&str>) -> bool {
    match (list, value) {
        (Some(list), Some(value)) => list.iter().any(|item| item == value),
        _ => false,
    }
}

fn is_agent(principal: Option<View<'_>>, agent_id: &str) -> bool {
    principal.is_some_and(|p| {
        p.get("type").and_then(|t| t.as_str()) == Some("agent")
            && p.get("id").and_then(|i| i.as_str()) == Some(agent_id)
    })
}

fn mentions(event: View<'_>, agent_id: &str) -> bool {
    event
        .pointer("/payload/message/mentions")
        .and_then(|m| m.as_array())
        .is_some_and(|list| list.iter().any(|p| is_agent(Some(p), agent_id)))
}

/// Whether `attention` selects `event` (a parsed Event) for live delivery to `agent_id`.
pub(crate) fn selects(attention: &Attention, event: View<'_>, agent_id: &str) -> bool {
    if is_agent(event.get("actor"), agent_id)
        || is_agent(event.pointer("/payload/membership/member"), agent_id)
    {
        return true;
    }
    let kind = event
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or_default();
    let mentioned = mentions(event, agent_id);
    if kind.starts_with("message.") && attention.mentions_only == Some(true) {
        return mentioned;
    }
    mentioned
        || listed(&attention.event_kinds, Some(kind))
        || listed(
            &attention.conversation_ids,
            event.get("conversationId").and_then(|v| v.as_str()),
        )
        || listed(
            &attention.work_item_ids,
            event.get("workItemId").and_then(|v| v.as_str()),
        )
        || (attention.announcements == Some(true)
            && (kind.starts_with("mission.") || kind.starts_with("group.")))
}
