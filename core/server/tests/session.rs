//! A whole session over real TLS sockets against the server process, with the gateway's
//! sans-IO client session as the Agent: HELLO, SUBSCRIBE to two Groups, COMMANDs, Events fanned
//! out to a second connection, ACK, PING; every HELLO failure and error frame reaches the wire
//! with the connection kept open; framing violations close with the machine's code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use futures_util::SinkExt;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_gateway::client::{ClientConfig, Session, SessionEvent};
use missionweaveprotocol_host::OsRandom;
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::tungstenite::Message;

fn code(frame: &Value) -> String {
    frame
        .pointer("/error/code")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("not an ERROR: {frame:?}"))
        .to_owned()
}

fn is_fatal(frame: &Value) -> bool {
    frame.pointer("/error/fatal").and_then(Value::as_bool) == Some(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_session_two_groups_fan_out_ack_and_ping() {
    let org = Org::new();
    let server = org.dev_server();
    let cert = org.path("dev-cert.pem");
    let url = server.url.clone();

    let mut planner = Agent::connect(&url, Some(&cert), &org, COORDINATOR).await;
    let mut worker = Agent::connect(&url, Some(&cert), &org, WORKER).await;
    worker.subscribe(&[(GROUP, 0), (OTHER_GROUP, 0)]).await;
    let replay = worker.wait_event(GROUP, 2).await;
    assert!(delivered(&replay).contains(&(GROUP.to_owned(), 1)));
    planner.subscribe(&[(GROUP, 0), (OTHER_GROUP, 0)]).await;

    // Commands in both Groups: accepted on the sender, fanned out to the worker.
    let (in_group, _) = planner.post_accepted(&org, GROUP, "full-1", "first").await;
    let (in_other, _) = planner
        .post_accepted(&org, OTHER_GROUP, "full-2", "second")
        .await;
    let mut seen = Vec::new();
    while !(seen.contains(&(GROUP.to_owned(), in_group))
        && seen.contains(&(OTHER_GROUP.to_owned(), in_other)))
    {
        seen.extend(delivered(&[worker.next_event().await]));
    }
    // In order per Group, nothing skipped.
    for group in [GROUP, OTHER_GROUP] {
        let mut sequences: Vec<u64> = delivered(&replay)
            .into_iter()
            .chain(seen.iter().cloned())
            .filter(|(g, _)| g == group)
            .map(|(_, s)| s)
            .collect();
        sequences.dedup();
        let expected: Vec<u64> = (1..=sequences.len() as u64).collect();
        assert_eq!(sequences, expected, "{group}");
    }

    // ACK the Cursors, then PING: the PONG comes back and no ERROR before it.
    let cursor = worker.session.cursor(GROUP).unwrap();
    worker
        .session
        .acknowledge(&[(GROUP, cursor), (OTHER_GROUP, in_other)], now())
        .unwrap();
    let nonce = worker.session.ping(None, now()).unwrap();
    worker.flush().await;
    let events = worker
        .until(|e| matches!(e, SessionEvent::Pong { nonce: n } if *n == nonce))
        .await;
    assert!(
        !events.iter().any(|e| matches!(e, SessionEvent::Error(_))),
        "{events:?}"
    );

    // The worker's own Command reaches the planner too.
    let (by_worker, _) = worker
        .post_accepted(&org, GROUP, "full-3", "from the worker")
        .await;
    planner.wait_event(GROUP, by_worker).await;

    // Two sessions of one Agent: a later HELLO fences the earlier session's Commands.
    let mut second = Agent::connect(&url, Some(&cert), &org, WORKER).await;
    assert!(second.epoch() > worker.epoch());
    let action = worker.post(&org, GROUP, "full-4", "stale").await;
    let events = worker
        .until(|e| matches!(e, SessionEvent::CommandRefused { ticket, .. } if ticket.action_id == action))
        .await;
    match events.last() {
        Some(SessionEvent::CommandRefused { error, .. }) => {
            assert_eq!(error.code, WireCode::AuthStaleSession);
        }
        other => panic!("{other:?}"),
    }
    second.subscribe(&[(GROUP, 0)]).await;
    second.wait_event(GROUP, by_worker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_failures_reach_the_wire_and_the_connection_stays_open() {
    let org = Org::new();
    let server = org.dev_server();
    let cert = org.path("dev-cert.pem");
    let mut agent = Agent::open(&server.url, Some(&cert), &org, WORKER).await;

    // Anything before HELLO: AUTH_REQUIRED.
    agent
        .send_raw(
            r#"{"protocolVersion":"0.1","frameId":"urn:x:f1","frameType":"PING","nonce":"bm9uY2Utbm9uY2U","sentAt":"2026-01-01T00:00:00Z"}"#
                .into(),
        )
        .await;
    let error = agent.recv_frame().await.unwrap();
    assert_eq!(code(&error), "AUTH_REQUIRED");
    assert!(!is_fatal(&error));

    // No version of ours offered: UNSUPPORTED_VERSION, open.
    agent
        .send_raw(format!(
            r#"{{"protocolVersion":"0.1","frameId":"urn:x:f2","frameType":"HELLO","phase":"client_init","agentId":"{WORKER}","keyId":"{}","clientNonce":"bm9uY2Utbm9uY2Utbm9uY2U","supportedVersions":["0.2"]}}"#,
            org.key(WORKER).key_id()
        ))
        .await;
    let error = agent.recv_frame().await.unwrap();
    assert_eq!(code(&error), "UNSUPPORTED_VERSION");
    assert!(!is_fatal(&error));

    let session = |agent_id: &str, signer: SigningKey| {
        let config = ClientConfig::new(
            agent_id,
            Arc::clone(&org.registry),
            Principal::new(PrincipalType::Service, AUTHORITY),
        );
        Session::new(config, Arc::new(signer), Box::new(OsRandom)).unwrap()
    };
    // Another Agent's key: AUTH_INVALID_SIGNATURE.
    agent.session = session(OUTSIDER, org.key(WORKER).clone());
    agent.session.start(now()).unwrap();
    agent.flush().await;
    match agent.next_event().await {
        SessionEvent::HandshakeFailed(error) => {
            assert_eq!(error.code, WireCode::AuthInvalidSignature);
        }
        other => panic!("{other:?}"),
    }
    // The right key ID, signed by another key: AUTH_INVALID_SIGNATURE.
    let forged = SigningKey::from_seed(org.key(WORKER).key_id().to_owned(), &[99; 32]);
    agent.session = session(WORKER, forged);
    agent.session.start(now()).unwrap();
    agent.flush().await;
    match agent.next_event().await {
        SessionEvent::HandshakeFailed(error) => {
            assert_eq!(error.code, WireCode::AuthInvalidSignature);
        }
        other => panic!("{other:?}"),
    }
    // Still the same socket: the real key authenticates.
    agent.session = session(WORKER, org.key(WORKER).clone());
    agent.session.start(now()).unwrap();
    agent.flush().await;
    assert!(matches!(
        agent.next_event().await,
        SessionEvent::Authenticated { .. }
    ));
    agent.subscribe(&[(GROUP, 0)]).await;
    agent.wait_event(GROUP, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_frames_reach_the_wire_and_the_connection_stays_open() {
    let org = Org::new();
    let server = org.dev_server();
    let cert = org.path("dev-cert.pem");
    let mut agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;

    // A Group that does not exist (or is hidden): GROUP_NOT_FOUND.
    agent.subscribe(&[(ABSENT_GROUP, 0)]).await;
    match agent.next_event().await {
        SessionEvent::Error(error) => assert_eq!(error.code, WireCode::GroupNotFound),
        other => panic!("{other:?}"),
    }
    // A Command signed for a Session Epoch that is not the session's: refused, open.
    let (bytes, action) = org.command(
        GROUP,
        "message.post",
        WORKER,
        agent.epoch() + 5,
        &Org::post_payload("err-1", GROUP, "x"),
    );
    agent.session.send_command(&bytes, now()).unwrap();
    agent.flush().await;
    let events = agent
        .until(|e| matches!(e, SessionEvent::CommandRefused { ticket, .. } if ticket.action_id == action))
        .await;
    match events.last() {
        Some(SessionEvent::CommandRefused { error, .. }) => {
            assert_eq!(error.code, WireCode::AuthStaleSession);
        }
        other => panic!("{other:?}"),
    }
    // A frame of ours that fails its schema: SCHEMA_VALIDATION_FAILED, open.
    agent
        .send_raw(r#"{"protocolVersion":"0.1","frameId":"urn:x:bad-sub","frameType":"SUBSCRIBE","subscriptionId":"urn:x:s","groups":[]}"#.into())
        .await;
    let error = agent.recv_frame().await.unwrap();
    assert_eq!(code(&error), "SCHEMA_VALIDATION_FAILED");
    assert!(!is_fatal(&error));
    // A peer's ERROR (never answered).
    agent
        .send_raw(r#"{"protocolVersion":"0.1","frameId":"urn:x:ev","frameType":"ERROR","error":{"code":"INTERNAL_ERROR","message":"peer","retryable":false,"occurredAt":"2026-01-01T00:00:00Z"}}"#.into())
        .await;
    // A peer's ERROR is never answered: the next frame is the PONG.
    let nonce = agent.session.ping(None, now()).unwrap();
    agent.flush().await;
    let events = agent
        .until(|e| matches!(e, SessionEvent::Pong { nonce: n } if *n == nonce))
        .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(agent.closed.is_none());
}

/// Frames the machine treats as framing violations: one fatal ERROR, then the close code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_violations_close_with_the_machines_code() {
    let org = Org::new();
    let server = org.dev_server();
    let cert = org.path("dev-cert.pem");

    // Binary: 1003.
    let mut agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;
    agent.ws.send(Message::binary(vec![1, 2, 3])).await.unwrap();
    let error = agent.recv_frame().await.unwrap();
    assert_eq!(code(&error), "PROTOCOL_VIOLATION");
    assert!(is_fatal(&error));
    assert_eq!(agent.recv_frame().await.unwrap_err(), Some(1003));

    // Not JSON: 1007.
    let mut agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;
    agent.send_raw("not json".into()).await;
    let error = agent.recv_frame().await.unwrap();
    assert!(is_fatal(&error));
    assert_eq!(agent.recv_frame().await.unwrap_err(), Some(1007));

    // JSON but not a frame: 1008.
    let mut agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;
    agent.send_raw(r#"{"hello": 1}"#.into()).await;
    let error = agent.recv_frame().await.unwrap();
    assert!(is_fatal(&error));
    assert_eq!(agent.recv_frame().await.unwrap_err(), Some(1008));

    // A text frame that is not UTF-8 (refused by the WebSocket library): 1007.
    let mut agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;
    let mut frame = vec![0x81, 0x80 | 2, 1, 2, 3, 4];
    frame.extend([0xFF ^ 1, 0xFE ^ 2]);
    agent.ws.get_mut().write_all(&frame).await.unwrap();
    agent.ws.get_mut().flush().await.unwrap();
    let error = agent.recv_frame().await.unwrap();
    assert!(is_fatal(&error));
    assert_eq!(agent.recv_frame().await.unwrap_err(), Some(1007));

    // A message over max_frame_bytes (refused from its header): ERROR, 1009.
    let mut agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;
    let mut header = vec![0x81, 0x80 | 127];
    header.extend((5u64 << 20).to_be_bytes());
    header.extend([0, 0, 0, 0]);
    header.extend(b"{\"a\":");
    agent.ws.get_mut().write_all(&header).await.unwrap();
    agent.ws.get_mut().flush().await.unwrap();
    let error = agent.recv_frame().await.unwrap();
    assert_eq!(code(&error), "PROTOCOL_VIOLATION");
    assert!(is_fatal(&error));
    assert_eq!(agent.recv_frame().await.unwrap_err(), Some(1009));

    // The server still serves.
    let mut agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;
    agent.subscribe(&[(GROUP, 0)]).await;
    agent.wait_event(GROUP, 1).await;
}
