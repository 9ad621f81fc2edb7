//! The `HELLO` challenge on the wire, and the transcript both sides sign (§6.3).
//!
//! §6.3 asks for a signature "over the canonical challenge transcript" without defining it
//! (digest ambiguity 7); `agent::auth::Challenge::signing_bytes` defines it: the RFC 8785 bytes
//! of `{agentId, challengeId, clientNonce, expiresAt, keyId, protocolVersion, serverNonce}`.
//! The `server_challenge` frame has no `expiresAt` member (the schema closes the object), yet
//! the client must sign the same bytes the server verifies. So the frame's `challenge` member
//! carries the challenge ID and its expiry together: the unpadded base64url of the challenge
//! ID's 32 random bytes followed by `expiresAt` in Unix milliseconds as an 8-byte big-endian
//! integer. The client decodes it ([`challenge_from_wire`]) into the same
//! `agent::auth::Challenge` the server holds and calls the same `signing_bytes`: one
//! transcript, one function, both sides. The challenge stays unpredictable (its random part is
//! unchanged) and one-use (the server spends it on the first answer).

use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use missionweaveprotocol_agent::auth::Challenge;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The `challenge` member of `HELLO/server_challenge` for `challenge`, or `None` when its ID
/// is not canonical base64url.
pub fn wire_challenge(challenge: &Challenge) -> Option<String> {
    let mut bytes = decode_base64url(&challenge.challenge_id)?;
    if bytes.is_empty() {
        return None;
    }
    bytes.extend_from_slice(&challenge.expires_at.0.to_be_bytes());
    Some(encode_base64url(&bytes))
}

/// The challenge the client answers, from the `server_challenge` members and its own
/// `client_init` members; `None` when `wire` is not a challenge of [`wire_challenge`]'s form.
pub fn challenge_from_wire(
    agent_id: &str,
    key_id: &str,
    client_nonce: &str,
    server_nonce: &str,
    selected_version: &str,
    wire: &str,
) -> Option<Challenge> {
    let bytes = decode_base64url(wire)?;
    // The encoder never emits a non-canonical form, so a re-encoding must give back `wire`.
    if encode_base64url(&bytes) != wire || bytes.len() <= 8 {
        return None;
    }
    let (id, expiry) = bytes.split_at(bytes.len() - 8);
    let expires_at = i64::from_be_bytes(expiry.try_into().ok()?);
    Some(Challenge {
        protocol_version: selected_version.to_owned(),
        challenge_id: encode_base64url(id),
        agent_id: agent_id.to_owned(),
        key_id: key_id.to_owned(),
        client_nonce: client_nonce.to_owned(),
        server_nonce: server_nonce.to_owned(),
        expires_at: UnixMillis(expires_at),
    })
}
