//! `HELLO` on the server (§6.3; digest §2.10): `client_init` → `server_challenge`,
//! `client_response` → `server_accept`.
//!
//! The response is verified **before** the Core is asked for an epoch: only an Agent that
//! proved possession of its registered key can open a Session Epoch (which fences its other
//! sessions and revokes its Execution Leases, §6.3, §11.3). Then the gateway opens the epoch
//! through the Core (the Group Authority's `session_open`), so the epoch is the authoritative
//! store's and every gateway process agrees on it, and seals the session token at that epoch
//! (`agent::auth::Handshake::open_at`).
//!
//! A failed response spends its challenge (one use, even a failed one); the connection stays
//! open and may start again with `client_init`, at most `Limits::max_hello_attempts` times,
//! within the handshake timeout.

use missionweaveprotocol::json::Value;
use missionweaveprotocol::wire::Frame;
use missionweaveprotocol::{Principal, WireCode};
use missionweaveprotocol_agent::auth::{
    AuthError, ClientInit, ClientResponse, Handshake, HelloPhase,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::connection::{Connection, GroupMoved, Session, timestamp};
use super::errors;
use crate::frames::{self, ErrorBody};

fn text(frame: &Frame, name: &str) -> String {
    frame
        .value
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Connection {
    pub(super) fn on_hello(&mut self, frame: &Frame, now: UnixMillis) {
        let frame_id = frame.frame_id().to_owned();
        match frame.phase().and_then(HelloPhase::parse) {
            Some(HelloPhase::ClientInit) => self.on_client_init(frame, &frame_id, now),
            Some(HelloPhase::ClientResponse) => self.on_client_response(frame, &frame_id, now),
            _ => {
                let body = errors::violation("this HELLO phase is sent by the server")
                    .related_to(&frame_id);
                self.reply_error(body, now);
            }
        }
    }

    fn auth_refused(&mut self, error: &AuthError, frame_id: &str, now: UnixMillis) {
        self.reply_error(errors::auth_error(error).related_to(frame_id), now);
    }

    fn on_client_init(&mut self, frame: &Frame, frame_id: &str, now: UnixMillis) {
        if self.session.is_some() {
            return self.auth_refused(&AuthError::UnexpectedPhase, frame_id, now);
        }
        // A failed response ended the previous attempt: a new one may begin.
        if matches!(self.handshake, Handshake::Failed) {
            self.handshake = Handshake::Open;
        }
        let max = self.gateway.limits().max_hello_attempts;
        if self.hello_attempts >= max {
            let body = errors::limit("max_hello_attempts", u64::from(max)).related_to(frame_id);
            return self.reply_error(body, now);
        }
        self.hello_attempts += 1;
        let init = ClientInit {
            agent_id: text(frame, "agentId"),
            key_id: text(frame, "keyId"),
            client_nonce: text(frame, "clientNonce"),
            supported_versions: frame
                .value
                .get("supportedVersions")
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        };
        let keys = self.gateway.core().agent_keys(&init.agent_id, &init.key_id);
        let issued = {
            let mut sessions = self.gateway.sessions();
            self.handshake.client_init(&mut sessions, &keys, &init, now)
        };
        let challenge = match issued {
            Ok(challenge) => challenge,
            Err(error) => return self.auth_refused(&error, frame_id, now),
        };
        let Some(wire) = frames::wire_challenge(&challenge) else {
            self.handshake = Handshake::Failed;
            return self.auth_refused(
                &AuthError::InvalidArgument("the challenge is not base64url"),
                frame_id,
                now,
            );
        };
        let reply_id = self.ids.next_id();
        match frames::hello_server_challenge(
            &reply_id,
            &challenge.protocol_version,
            &challenge.client_nonce,
            &challenge.server_nonce,
            &wire,
        ) {
            Ok(bytes) => self.reply(bytes),
            Err(_) => {
                self.handshake = Handshake::Failed;
                let body = ErrorBody::new(WireCode::InternalError, "the challenge frame failed")
                    .related_to(frame_id);
                self.reply_error(body, now);
            }
        }
    }

    fn on_client_response(&mut self, frame: &Frame, frame_id: &str, now: UnixMillis) {
        if self.session.is_some() {
            return self.auth_refused(&AuthError::UnexpectedPhase, frame_id, now);
        }
        let response = ClientResponse {
            agent_id: text(frame, "agentId"),
            key_id: text(frame, "keyId"),
            client_nonce: text(frame, "clientNonce"),
            server_nonce: text(frame, "serverNonce"),
            challenge_signature: text(frame, "challengeSignature"),
        };
        // The keys of the challenged Agent and key (the response must echo them anyway).
        let (agent_id, key_id) = match &self.handshake {
            Handshake::Challenged(challenge) => {
                (challenge.agent_id.clone(), challenge.key_id.clone())
            }
            _ => return self.auth_refused(&AuthError::UnexpectedPhase, frame_id, now),
        };
        let keys = self.gateway.core().agent_keys(&agent_id, &key_id);
        let verified = {
            let mut sessions = self.gateway.sessions();
            self.handshake
                .verify_response(&mut sessions, &keys, &response, now)
        };
        if let Err(error) = verified {
            return self.auth_refused(&error, frame_id, now);
        }
        // The key's principal: an Agent, or a human (docs/network.md "Human sessions"). The
        // keys just verified exist only when the Registry binds one of them.
        let Some(principal) = self.gateway.core().session_principal(&agent_id, &key_id) else {
            self.handshake = Handshake::Failed;
            return self.auth_refused(&AuthError::UnexpectedPhase, frame_id, now);
        };
        if !self.gateway.agents().acquire(&agent_id) {
            self.handshake = Handshake::Failed;
            let max = self.gateway.limits().max_connections_per_agent as u64;
            let body = errors::limit("max_connections_per_agent", max).related_to(frame_id);
            return self.reply_error(body, now);
        }
        let action_id = self.ids.next_action_id();
        let opened = match self.gateway.core().open_session(&agent_id, &action_id, now) {
            Ok(opened) => opened,
            Err(error) => {
                self.gateway.agents().release(&agent_id);
                self.handshake = Handshake::Failed;
                let body = errors::core_error(&error, None).related_to(frame_id);
                return self.reply_error(body, now);
            }
        };
        let granted = {
            let mut sessions = self.gateway.sessions();
            self.handshake.open_at(&mut sessions, opened.epoch, now)
        };
        let grant = match granted {
            Ok(grant) => grant,
            Err(error) => {
                self.gateway.agents().release(&agent_id);
                return self.auth_refused(&error, frame_id, now);
            }
        };
        // §11.3: the new session revoked the Agent's Execution Leases in their Groups; those
        // heads moved.
        for record in &opened.performed.events {
            if record.sequence > 0
                && let Some(group) = super::command::group_of(&record.body)
            {
                self.notify(GroupMoved {
                    group_id: group,
                    sequence: record.sequence,
                });
            }
        }
        self.session = Some(Session {
            principal: Principal::new(principal.kind, grant.agent_id.clone()),
            key_id: grant.key_id.clone(),
            epoch: grant.session_epoch,
        });
        let reply_id = self.ids.next_id();
        match frames::hello_server_accept(
            &reply_id,
            &grant.protocol_version,
            &grant.token,
            grant.session_epoch,
            &timestamp(grant.expires_at),
        ) {
            Ok(bytes) => self.reply(bytes),
            Err(_) => {
                let body = ErrorBody::new(WireCode::InternalError, "the accept frame failed")
                    .related_to(frame_id);
                self.reply_error(body, now);
            }
        }
    }
}
