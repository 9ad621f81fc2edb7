//! `POST /control`: the control plane's relay of one signed human Command (§15; the decision
//! is the gateway's `relay_human_command`, this module moves bytes). The body is the Command's
//! exact bytes (`content-length`, at most `MAX_CONTROL_BYTES`); the answer is JSON:
//!
//! - `200 {"events": [<signed Event>, …]}` — applied (or the original Events of a duplicate,
//!   §15.1); the moved Group heads wake the WebSocket subscribers and, on PostgreSQL, other
//!   processes (`NOTIFY`), exactly as a Command on a connection does;
//! - `409 <error.schema.json object>` — refused with its §19 wire code, nothing applied;
//! - `400`/`413` — no `content-length`, or a body over the bound (nothing read past it).

use std::sync::Arc;

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_gateway::frames::ErrorBody;
use missionweaveprotocol_gateway::server::{
    MAX_CONTROL_BYTES, control_too_large, relay_human_command,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use crate::http;
use crate::server::{HANDSHAKE_TIMEOUT, Shared};

fn error_json(body: &ErrorBody, shared: &Shared) -> String {
    let now = shared.clock.now().to_rfc3339().unwrap_or_default();
    json::canonical_bytes(&Value::Object(body.to_object(&now)))
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| "{}".to_owned())
}

/// Reads the body after `head` (bounded, within the handshake timeout), relays it and answers.
pub async fn serve<S>(shared: &Arc<Shared>, head: Vec<u8>, stream: &mut S) -> std::io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Some((length, start)) = http::body_start(&head) else {
        return http::respond(
            stream,
            "400 Bad Request",
            "text/plain",
            "POST /control needs a content-length\n",
        )
        .await;
    };
    if length > MAX_CONTROL_BYTES {
        let text = error_json(&control_too_large(), shared);
        return http::respond(stream, "413 Payload Too Large", "application/json", &text).await;
    }
    let mut body = head.get(start..).unwrap_or_default().to_vec();
    body.truncate(length);
    if body.len() < length {
        let mut rest = vec![0u8; length - body.len()];
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, stream.read_exact(&mut rest)).await {
            Ok(Ok(_)) => body.extend_from_slice(&rest),
            _ => {
                return http::respond(
                    stream,
                    "400 Bad Request",
                    "text/plain",
                    "the body ended before content-length\n",
                )
                .await;
            }
        }
    }
    let relay_shared = Arc::clone(shared);
    let outcome = tokio::task::spawn_blocking(move || {
        let now = relay_shared.clock.now();
        relay_human_command(relay_shared.gateway.core().as_ref(), &body, now)
    })
    .await;
    let relayed = match outcome {
        Ok(Ok(relayed)) => relayed,
        Ok(Err(refusal)) => {
            let text = error_json(&refusal, shared);
            return http::respond(stream, "409 Conflict", "application/json", &text).await;
        }
        Err(_) => {
            let body = ErrorBody::new(WireCode::InternalError, "the relay failed");
            let text = error_json(&body, shared);
            return http::respond(
                stream,
                "500 Internal Server Error",
                "application/json",
                &text,
            )
            .await;
        }
    };
    for moved in &relayed.moved {
        shared.announce(moved, None);
    }
    // The Events are signed canonical JSON already: spliced, not re-encoded.
    let mut text = String::from("{\"events\":[");
    for (i, record) in relayed.performed.events.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(std::str::from_utf8(&record.body).unwrap_or("null"));
    }
    text.push_str("]}");
    http::respond(stream, "200 OK", "application/json", &text).await
}
