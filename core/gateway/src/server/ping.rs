//! `PING` on the server (§17.3, §6.2): a `PING` without `replyToNonce` is answered with a
//! `PING` echoing its nonce; one with `replyToNonce` answers ours and is not answered again.
//! A Presence Record rides on the authenticated session (§6.3: heartbeats and presence "rely on
//! the authenticated session"): it must name the session's Agent (`AUTH_FORBIDDEN`) and Session
//! Epoch (`AUTH_STALE_SESSION`) and is kept, ephemeral, for the host (`Connection::presence`),
//! never in the log (§6.2).

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Number, Value, canonical_bytes};
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol::wire::Frame;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::connection::{Connection, timestamp};
use super::errors;
use crate::frames::{self, ErrorBody};

impl Connection {
    pub(super) fn on_ping(&mut self, frame: &Frame, now: UnixMillis) {
        let frame_id = frame.frame_id().to_owned();
        if let Some(presence) = frame.value.get("presence")
            && !self.keep_presence(presence, &frame_id, now)
        {
            return;
        }
        if frame.value.get("replyToNonce").is_some() {
            return;
        }
        let nonce = frame
            .value
            .get("nonce")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        self.send_ping(Some(&nonce), now);
    }

    /// Queues a `PING` (a reply when `reply_to` is set). The host may call
    /// [`Connection::ping`] on its own liveness timer.
    fn send_ping(&mut self, reply_to: Option<&str>, now: UnixMillis) {
        let reply_id = self.ids.next_id();
        // A nonce identifies, it protects nothing: without randomness the frame ID's bytes do.
        let nonce = frames::random_nonce(&mut *self.random)
            .unwrap_or_else(|_| encode_base64url(reply_id.as_bytes()));
        if let Ok(bytes) = frames::ping(&reply_id, &nonce, reply_to, &timestamp(now), None) {
            self.reply(bytes);
        }
    }

    /// A liveness `PING` from the server (the peer answers with `replyToNonce`).
    pub fn ping(&mut self, now: UnixMillis) {
        if !self.closed && self.closing.is_none() && self.session.is_some() {
            self.send_ping(None, now);
        }
    }

    fn keep_presence(&mut self, presence: &Value, frame_id: &str, now: UnixMillis) -> bool {
        let Some(session) = &self.session else {
            return false;
        };
        let agent = presence.get("agentId").and_then(Value::as_str);
        let epoch = presence
            .get("sessionEpoch")
            .and_then(Value::as_number)
            .and_then(Number::as_u64);
        let refusal = if agent != Some(session.principal.id.as_str()) {
            Some(ErrorBody::new(
                WireCode::AuthForbidden,
                "a Presence Record names the session's own Agent",
            ))
        } else if epoch != Some(session.epoch) {
            Some(ErrorBody::new(
                WireCode::AuthStaleSession,
                "the Presence Record's Session Epoch is not this session's",
            ))
        } else {
            None
        };
        if let Some(body) = refusal {
            self.reply_error(body.related_to(frame_id), now);
            return false;
        }
        let max = self.gateway.limits().max_presence_bytes;
        match canonical_bytes(presence) {
            Ok(bytes) if bytes.len() <= max => {
                self.presence = Some(bytes);
                true
            }
            _ => {
                let body = errors::limit("max_presence_bytes", max as u64).related_to(frame_id);
                self.reply_error(body, now);
                false
            }
        }
    }
}
