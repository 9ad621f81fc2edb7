//! `COMMAND` on the server (§15.1, §6.3): the exact received bytes of the nested Command go to
//! ingress first (six stages, freshness, the Organization's authorizer), then the session
//! checks, then Group visibility, then the Core. The resulting Events reach the sender — and
//! every subscriber of their Groups, in Group order, through the subscriptions — and the heads
//! they moved are reported to the host. A refusal is one `ERROR` with `relatedFrameId` and
//! `relatedActionId`; nothing was applied.
//!
//! Session checks (a connection carries its own principal's Commands only):
//!
//! - the signed actor is the session's Agent (or human, on a human session), otherwise
//!   `AUTH_FORBIDDEN`;
//! - the Command is signed with the key the Agent authenticated with, otherwise
//!   `AUTH_INVALID_SIGNATURE` ("key validity … failed" for this session, §19);
//! - an Agent Command's `sessionEpoch` is the session's, otherwise `AUTH_STALE_SESSION` (a
//!   human Command carries none, §15.1; the Core fences it
//!   again against the authoritative epoch: a session superseded on another process is refused
//!   there, "even if its WebSocket remains connected", digest §2.10).
//!
//! A Command naming a Group the Agent may not see is `GROUP_NOT_FOUND`, exactly as for an
//! absent Group (§17.2, §4 invariant 9): the engine's own refusals could otherwise tell a
//! hidden Group from a missing one.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use missionweaveprotocol::json::{Document, ParseLimits};
use missionweaveprotocol::schema_formats::is_protocol_id;
use missionweaveprotocol::wire::ReceivedCommandFrame;
use missionweaveprotocol::{Principal, PrincipalType, WireCode};
use missionweaveprotocol_engine::Performed;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::connection::{Connection, GroupMoved};
use super::core_seam::Visibility;
use super::errors;
use crate::frames::{self, ErrorBody};

/// The `groupId` of a stored Event's bytes.
pub(crate) fn group_of(body: &[u8]) -> Option<String> {
    let document = Document::parse(body, &ParseLimits::DOCUMENT).ok()?;
    document
        .root()
        .get("groupId")
        .and_then(|g| g.as_str())
        .map(str::to_owned)
}

/// A member of the raw Command, when it is a protocol ID (for an error about a Command that
/// did not verify: its Action ID still relates the error, §19).
pub(super) fn raw_id(command: &[u8], name: &str) -> Option<String> {
    let document = Document::parse(command, &ParseLimits::DOCUMENT).ok()?;
    document
        .root()
        .get(name)
        .and_then(|v| v.as_str())
        .filter(|id| is_protocol_id(id))
        .map(str::to_owned)
}

impl Connection {
    pub(super) fn on_command(&mut self, frame: ReceivedCommandFrame, now: UnixMillis) {
        let frame_id = frame.frame_id;
        let bytes = frame.command_bytes;
        let refuse = |body: ErrorBody, action_id: Option<String>| {
            let mut body = body.related_to(&frame_id);
            body.related_action_id = action_id;
            body
        };
        let Some(session) = self.session.clone() else {
            let body = ErrorBody::new(WireCode::AuthRequired, "authenticate with HELLO first");
            return self.reply_error(refuse(body, raw_id(&bytes, "actionId")), now);
        };
        let core = Arc::clone(self.gateway.core());
        let verified = match core.verify(&bytes, now) {
            Ok(verified) => verified,
            Err(error) => {
                let group = raw_id(&bytes, "groupId");
                let body = errors::core_error(&error, group.as_deref());
                return self.reply_error(refuse(body, raw_id(&bytes, "actionId")), now);
            }
        };
        let action_id = Some(verified.action_id().to_owned());
        let group = verified.group_id().map(str::to_owned);
        let in_group = |body: ErrorBody| match &group {
            Some(group) => body.in_group(group),
            None => body,
        };
        let actor = verified.actor();
        if *actor != session.principal {
            let body = ErrorBody::new(
                WireCode::AuthForbidden,
                "a connection carries only the Commands of its authenticated principal",
            );
            return self.reply_error(refuse(in_group(body), action_id), now);
        }
        if verified.key_id() != session.key_id {
            let body = ErrorBody::new(
                WireCode::AuthInvalidSignature,
                "the Command is not signed with the key this session authenticated",
            );
            return self.reply_error(refuse(in_group(body), action_id), now);
        }
        // A human Command carries no Session Epoch (§6.3, §15.1; the schema refuses one): the
        // epoch of a human session names the connection only.
        let fenced = session.principal.kind == PrincipalType::Agent;
        if fenced && verified.session_epoch() != Some(session.epoch) {
            let body = ErrorBody::new(
                WireCode::AuthStaleSession,
                "the Command's Session Epoch is not this session's",
            );
            return self.reply_error(refuse(in_group(body), action_id), now);
        }
        if let Some(group) = &group {
            match core.visibility(&session.principal, group) {
                Ok(Some(_)) => {}
                Ok(None) => {
                    let body = errors::group_not_found(group);
                    return self.reply_error(refuse(body, action_id), now);
                }
                Err(error) => {
                    let body = errors::core_error(&error, Some(group));
                    return self.reply_error(refuse(body, action_id), now);
                }
            }
        }
        match core.perform(&verified, now) {
            Ok(performed) => self.deliver_own(&session.principal, &performed, now),
            Err(error) => {
                let body = errors::core_error(&error, group.as_deref());
                self.reply_error(refuse(body, action_id), now);
            }
        }
    }

    /// The Events of this connection's own Command: an Event its subscription will deliver
    /// (later than the subscription's cursor) is left to it, so each Group stays in order;
    /// any other Event the Agent may see is sent directly — the first always (it answers the
    /// Command), the others while the reply queue has room. Moved heads are reported and wake
    /// this connection's own subscriptions.
    fn deliver_own(&mut self, member: &Principal, performed: &Performed, now: UnixMillis) {
        let limits = *self.gateway.limits();
        let mut views: HashMap<String, Option<Visibility>> = HashMap::new();
        let mut first = true;
        for record in &performed.events {
            let group = if record.sequence == 0 {
                None
            } else {
                match group_of(&record.body) {
                    Some(group) => Some(group),
                    None => continue,
                }
            };
            if let Some(group) = &group {
                if self
                    .subscriptions
                    .get(group.as_str())
                    .is_some_and(|s| record.sequence > s.cursor())
                {
                    continue;
                }
                let view = views.entry(group.clone()).or_insert_with(|| {
                    self.gateway.core().visibility(member, group).ok().flatten()
                });
                if !view.is_some_and(|v| record.sequence >= v.start_sequence) {
                    continue;
                }
            }
            let room = self.outbound.reply_frames < limits.max_reply_frames
                && self.outbound.reply_bytes < limits.max_reply_bytes;
            if first || room {
                let frame_id = self.ids.next_id();
                if let Ok(bytes) = frames::event(&frame_id, &record.body) {
                    self.reply(bytes);
                    first = false;
                }
            }
        }
        for moved in heads_moved(performed) {
            self.on_group_moved(&moved.group_id, Some(moved.sequence), now);
            self.notify(moved);
        }
    }
}

/// The Group heads `performed` moved: per Group, its last sequence (none for a duplicate, whose
/// Events were committed before), in Group ID order. The host wakes the other subscribers of
/// each and tells other processes (`NOTIFY`).
pub(super) fn heads_moved(performed: &Performed) -> Vec<GroupMoved> {
    if performed.duplicate {
        return Vec::new();
    }
    let mut heads: BTreeMap<String, u64> = BTreeMap::new();
    for record in performed.events.iter().filter(|r| r.sequence > 0) {
        if let Some(group) = group_of(&record.body) {
            let head = heads.entry(group).or_insert(0);
            *head = (*head).max(record.sequence);
        }
    }
    heads
        .into_iter()
        .map(|(group_id, sequence)| GroupMoved { group_id, sequence })
        .collect()
}
