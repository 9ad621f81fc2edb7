//! `SUBSCRIBE` (§17.2, §8, §16) and `ACK` (§16) on the server.
//!
//! SUBSCRIBE: the whole frame is refused (nothing subscribed) when it breaks a limit
//! (`RATE_LIMITED`: Groups per frame, subscriptions per connection, attention entries) or
//! names a Group twice (`PROTOCOL_VIOLATION`). Then each Group on its own: Membership is
//! enforced on the Core — a Group the Agent may not see is `GROUP_NOT_FOUND`, byte for byte
//! the answer for an absent Group (§17.2 "MUST NOT reveal whether an unauthorized Group
//! exists"); an `afterSequence` beyond the Group's last sequence is `PROTOCOL_VIOLATION` (no
//! Cursor can be there, §16); otherwise replay starts after
//! `max(afterSequence, visibilityStartSequence − 1)` (§8) and a cursor before the online log
//! is `CURSOR_TOO_OLD` with the snapshot's hash (§16). Subscribing a Group again replaces its
//! cursor and filter.
//!
//! ACK: each Cursor of a Group the Agent sees, at most its last sequence, advances the durable
//! delivery Cursor (never backwards; history is never deleted, §16).
//!
//! With the host's Cursor store (`host_cursors.rs`, the reference's `cursors=`), SUBSCRIBE
//! first asks the host for the stored Cursors and ACK reports what moved.

use std::collections::HashSet;
use std::sync::Arc;

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol::wire::Frame;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::connection::Connection;
use super::delivery::Subscription;
use super::errors;
use super::limits::attention_cost;
use crate::frames::{Attention, ErrorBody};

#[derive(Debug)]
pub(super) struct Entry {
    pub(super) group: String,
    after: u64,
    attention: Option<Attention>,
}

fn sequence(value: &Value, name: &str) -> u64 {
    value
        .get(name)
        .and_then(Value::as_number)
        .and_then(Number::as_u64)
        .unwrap_or(0)
}

impl Connection {
    pub(super) fn on_subscribe(&mut self, frame: &Frame, now: UnixMillis) {
        let frame_id = frame.frame_id().to_owned();
        let limits = *self.gateway.limits();
        let items = frame
            .value
            .get("groups")
            .and_then(Value::as_array)
            .unwrap_or_default();
        if items.len() > limits.max_groups_per_subscribe {
            let body = errors::limit(
                "max_groups_per_subscribe",
                limits.max_groups_per_subscribe as u64,
            );
            return self.reply_error(body.related_to(&frame_id), now);
        }
        let entries: Vec<Entry> = items
            .iter()
            .map(|item| Entry {
                group: item
                    .get("groupId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                after: sequence(item, "afterSequence"),
                attention: item.get("attention").map(Attention::from_value),
            })
            .collect();
        let mut seen = HashSet::new();
        if let Some(twice) = entries.iter().find(|e| !seen.insert(e.group.as_str())) {
            let body = errors::violation("a Group appears twice in one SUBSCRIBE")
                .in_group(&twice.group)
                .related_to(&frame_id);
            return self.reply_error(body, now);
        }
        if entries.iter().any(|e| {
            e.attention
                .as_ref()
                .is_some_and(|a| a.entries() > limits.max_attention_entries)
        }) {
            let body = errors::limit("max_attention_entries", limits.max_attention_entries as u64);
            return self.reply_error(body.related_to(&frame_id), now);
        }
        let replaced: usize = entries
            .iter()
            .filter_map(|e| self.subscriptions.get(e.group.as_str()))
            .map(Subscription::attention_cost)
            .sum();
        let added: usize = entries
            .iter()
            .filter_map(|e| e.attention.as_ref())
            .map(attention_cost)
            .sum();
        if self.attention_bytes - replaced + added > limits.max_attention_bytes {
            let body = errors::limit("max_attention_bytes", limits.max_attention_bytes as u64);
            return self.reply_error(body.related_to(&frame_id), now);
        }
        let new = entries
            .iter()
            .filter(|e| !self.subscriptions.contains_key(e.group.as_str()))
            .count();
        if self.subscriptions.len() + new > limits.max_subscriptions {
            let body = errors::limit("max_subscriptions", limits.max_subscriptions as u64);
            return self.reply_error(body.related_to(&frame_id), now);
        }
        self.subscribe_entries(entries, &frame_id, now);
    }

    /// One Group of a SUBSCRIBE; `stored` is the host store's durable Cursor (0 without one,
    /// `host_cursors.rs`): it is where replay starts when the Agent names no Cursor of its own
    /// (`afterSequence` 0; at most the head), then the visibility start applies.
    pub(super) fn subscribe_one(
        &mut self,
        entry: Entry,
        stored: u64,
        frame_id: &str,
        now: UnixMillis,
    ) {
        let Some(member) = self.session.as_ref().map(|s| s.principal.clone()) else {
            return;
        };
        let core = Arc::clone(self.gateway.core());
        let group = entry.group.as_str();
        let visibility = match core.visibility(&member, group) {
            Ok(Some(visibility)) => visibility,
            Ok(None) => {
                return self.reply_error(errors::group_not_found(group).related_to(frame_id), now);
            }
            Err(error) => {
                let body = errors::core_error(&error, Some(group)).related_to(frame_id);
                return self.reply_error(body, now);
            }
        };
        let head = match core.head(group) {
            Ok(head) => head,
            Err(error) => {
                let body = errors::core_error(&error, Some(group)).related_to(frame_id);
                return self.reply_error(body, now);
            }
        };
        if entry.after > head {
            let body = errors::violation("afterSequence is after the Group's last sequence")
                .in_group(group)
                .related_to(frame_id);
            return self.reply_error(body, now);
        }
        let after = if entry.after == 0 {
            stored.min(head)
        } else {
            entry.after
        };
        let fresh = Subscription::new(after, head, visibility, entry.attention, now);
        self.attention_bytes += fresh.attention_cost();
        let group: Arc<str> = match self.subscriptions.get_key_value(group) {
            Some((key, _)) => Arc::clone(key),
            None => Arc::from(group),
        };
        match self.subscriptions.get_mut(&group) {
            Some(existing) => {
                self.attention_bytes -= existing.attention_cost();
                existing.restart(fresh);
            }
            None => {
                self.subscriptions.insert(Arc::clone(&group), fresh);
                self.gateway.hub().subscribe(self.id, &group);
            }
        }
        self.relating = Some(frame_id.to_owned());
        self.pull(&group, now);
        self.relating = None;
    }

    pub(super) fn on_ack(&mut self, frame: &Frame, now: UnixMillis) {
        let frame_id = frame.frame_id().to_owned();
        let limits = *self.gateway.limits();
        let Some(member) = self.session.as_ref().map(|s| s.principal.clone()) else {
            return;
        };
        let agent_id = member.id.as_str();
        let items = frame
            .value
            .get("acknowledgements")
            .and_then(Value::as_array)
            .unwrap_or_default();
        if items.len() > limits.max_acknowledgements {
            let body = errors::limit("max_acknowledgements", limits.max_acknowledgements as u64);
            return self.reply_error(body.related_to(&frame_id), now);
        }
        let core = Arc::clone(self.gateway.core());
        for item in items {
            let group = item
                .get("groupId")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let acknowledged = sequence(item, "sequence");
            let refusal: Option<ErrorBody> = match core.visibility(&member, group) {
                Ok(None) => Some(errors::group_not_found(group)),
                Err(error) => Some(errors::core_error(&error, Some(group))),
                Ok(Some(_)) => match core.head(group) {
                    Err(error) => Some(errors::core_error(&error, Some(group))),
                    Ok(head) if acknowledged > head => Some(
                        errors::violation("a Cursor cannot be after the Group's last sequence")
                            .in_group(group),
                    ),
                    Ok(_) => core
                        .acknowledge(agent_id, group, acknowledged)
                        .err()
                        .map(|error| errors::core_error(&error, Some(group))),
                },
            };
            match refusal {
                Some(body) => self.reply_error(body.related_to(&frame_id), now),
                None => self.report_acknowledged(group, acknowledged, &frame_id),
            }
        }
    }
}
