//! HELLO (§6.3, digest §2.10) through the two machines over a real Core: the full handshake
//! opens the Session Epoch through the Core's `session_open`; every failure — unknown key,
//! wrong signature, replayed and expired challenges, a version we do not speak, a later
//! Command at a stale epoch — is its typed `ERROR`; `AUTH_REQUIRED` before authentication;
//! the handshake timeout and the HELLO limits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::crypto::{Signer, SignerError, SigningKey};
use missionweaveprotocol::json::Value;
use missionweaveprotocol_engine::engine::QueryKind;
use missionweaveprotocol_gateway::client::{ClientError, SessionEvent};
use missionweaveprotocol_gateway::frames;
use missionweaveprotocol_gateway::server::{CLOSE_POLICY, Limits};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn core_epoch(world: &World, agent: &str) -> u64 {
    match world
        .core
        .query(QueryKind::SessionEpoch, agent, None, None, NOW)
    {
        Ok(value) => value
            .get("sessionEpoch")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
            .unwrap(),
        Err(e) => {
            assert_eq!(e.wire_code, WireCode::GroupNotFound);
            0
        }
    }
}

fn handshake_error(pair_events: Vec<SessionEvent>) -> (WireCode, String) {
    match pair_events.as_slice() {
        [SessionEvent::HandshakeFailed(error)] => (error.code, error.message.clone()),
        other => panic!("expected a failed handshake, got {other:?}"),
    }
}

/// A signer that names one key but signs with another.
#[derive(Debug)]
struct Impostor {
    named: SigningKey,
    real: SigningKey,
}

impl Signer for Impostor {
    fn key_id(&self) -> &str {
        self.named.key_id()
    }
    fn public_key_bytes(&self) -> [u8; 32] {
        self.named.public_key_bytes()
    }
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, SignerError> {
        Ok(self.real.sign(message).to_vec())
    }
}

#[test]
fn the_handshake_opens_the_epoch_through_the_core() {
    let world = World::new();
    assert_eq!(core_epoch(&world, WORKER), 0);
    let mut server = world.connection();
    let mut client = world.client(WORKER);
    client.start(NOW).unwrap();
    assert_eq!(client.start(NOW).unwrap_err(), ClientError::AlreadyStarted);
    // client_init → server_challenge
    let init = client.poll_output().unwrap();
    let parsed = missionweaveprotocol::wire::parse_frame(&init)
        .unwrap()
        .value;
    assert_eq!(text(&parsed, "/phase"), "client_init");
    assert_eq!(text(&parsed, "/agentId"), WORKER);
    server.on_text(&init, NOW);
    let (frames_out, _) = drain(&mut server, NOW);
    assert_eq!(text(&frames_out[0], "/phase"), "server_challenge");
    assert_eq!(text(&frames_out[0], "/selectedVersion"), "0.1");
    let challenge = missionweaveprotocol::json::canonical_bytes(&frames_out[0]).unwrap();
    client.on_text(&challenge, NOW).unwrap();
    // client_response → server_accept
    let response = client.poll_output().unwrap();
    server.on_text(&response, NOW);
    let (frames_out, close) = drain(&mut server, NOW);
    assert_eq!(close, None);
    assert_eq!(text(&frames_out[0], "/phase"), "server_accept");
    let accept = missionweaveprotocol::json::canonical_bytes(&frames_out[0]).unwrap();
    client.on_text(&accept, NOW).unwrap();
    let events: Vec<_> = std::iter::from_fn(|| client.poll_event()).collect();
    let [
        SessionEvent::Authenticated {
            session_epoch,
            session_token,
            ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(*session_epoch, 1);
    assert!(!format!("{session_token:?}").contains(session_token.expose()));
    assert_eq!(server.agent_id(), Some(WORKER));
    assert_eq!(server.session_epoch(), Some(1));
    assert_eq!(client.session_epoch(), Some(1));
    // The epoch is the Core's: its session_open was performed.
    assert_eq!(core_epoch(&world, WORKER), 1);
    assert_eq!(world.gateway.agents().count(WORKER), 1);
    // A second connection opens epoch 2 (fencing the first, §6.3).
    let second = world.pair(WORKER);
    assert_eq!(second.client.session_epoch(), Some(2));
    assert_eq!(core_epoch(&world, WORKER), 2);
    assert_eq!(world.gateway.agents().count(WORKER), 2);
    drop(second);
    drop(server);
    assert_eq!(world.gateway.agents().count(WORKER), 0);
}

#[test]
fn an_unknown_key_is_auth_invalid_signature_and_opens_nothing() {
    let world = World::new();
    let mut config = world.client_config(WORKER);
    config.agent_id = "urn:missionweaveprotocol:agent:ghost".into();
    let unknown = SigningKey::from_seed("urn:missionweaveprotocol:key:ghost", &[9; 32]);
    let mut client = missionweaveprotocol_gateway::client::Session::new(
        config,
        Arc::new(unknown),
        Box::new(Counter(5)),
    )
    .unwrap();
    let mut pair = Pair {
        server: world.connection(),
        client,
        now: NOW,
        server_closed: None,
    };
    pair.client.start(NOW).unwrap();
    pair.pump();
    let (code, _) = handshake_error(pair.events());
    assert_eq!(code, WireCode::AuthInvalidSignature);
    assert_eq!(pair.server_closed, None, "the connection stays open");
    // Another Agent's key is unknown for this Agent too.
    let mut config = world.client_config(WORKER);
    config.agent_id = COORDINATOR.into();
    client = missionweaveprotocol_gateway::client::Session::new(
        config,
        Arc::new(world.key(WORKER).clone()),
        Box::new(Counter(6)),
    )
    .unwrap();
    pair.client = client;
    pair.server = world.connection();
    pair.client.start(NOW).unwrap();
    pair.pump();
    assert_eq!(
        handshake_error(pair.events()).0,
        WireCode::AuthInvalidSignature
    );
    assert_eq!(core_epoch(&world, COORDINATOR), 0);
}

#[test]
fn a_wrong_signature_is_refused_before_any_epoch_is_opened() {
    let world = World::new();
    let impostor = Impostor {
        named: world.key(WORKER).clone(),
        real: world.key(OUTSIDER).clone(),
    };
    let mut pair = Pair {
        server: world.connection(),
        client: missionweaveprotocol_gateway::client::Session::new(
            world.client_config(WORKER),
            Arc::new(impostor),
            Box::new(Counter(7)),
        )
        .unwrap(),
        now: NOW,
        server_closed: None,
    };
    pair.client.start(NOW).unwrap();
    pair.pump();
    let (code, message) = handshake_error(pair.events());
    assert_eq!(code, WireCode::AuthInvalidSignature);
    assert!(message.contains("signature"), "{message}");
    // §6.3: nobody who failed the challenge can fence the Agent's sessions.
    assert_eq!(core_epoch(&world, WORKER), 0);
    assert_eq!(world.gateway.agents().count(WORKER), 0);
    assert_eq!(pair.server.agent_id(), None);
}

/// `client_init` → the server's challenge, answered by `client` (its response frame bytes).
fn answer(
    world: &World,
    server: &mut missionweaveprotocol_gateway::server::Connection,
    now: UnixMillis,
) -> Vec<u8> {
    let mut client = world.client(WORKER);
    client.start(now).unwrap();
    server.on_text(&client.poll_output().unwrap(), now);
    for bytes in drain_bytes(server, now) {
        client.on_text(&bytes, now).unwrap();
    }
    client.poll_output().unwrap()
}

#[test]
fn a_replayed_response_never_opens_a_second_session() {
    let world = World::new();
    let mut first = world.connection();
    let response = answer(&world, &mut first, NOW);
    first.on_text(&response, NOW);
    let (frames_out, _) = drain(&mut first, NOW);
    assert_eq!(text(&frames_out[0], "/phase"), "server_accept");
    // The same response again on the authenticated connection: out of order.
    first.on_text(&response, NOW);
    let (frames_out, close) = drain(&mut first, NOW);
    assert_eq!(code(&frames_out[0]), "PROTOCOL_VIOLATION");
    assert_eq!(close, None);
    // On another connection, after its own challenge: it answers another challenge.
    let mut second = world.connection();
    let _ = answer(&world, &mut second, NOW);
    second.on_text(&response, NOW);
    let (frames_out, _) = drain(&mut second, NOW);
    assert_eq!(code(&frames_out[0]), "AUTH_INVALID_SIGNATURE");
    // A connection that never asked for a challenge.
    let mut third = world.connection();
    third.on_text(&response, NOW);
    let (frames_out, _) = drain(&mut third, NOW);
    assert_eq!(code(&frames_out[0]), "PROTOCOL_VIOLATION");
    assert_eq!(core_epoch(&world, WORKER), 1, "one session only");
}

#[test]
fn an_expired_challenge_is_refused() {
    let limits = Limits {
        handshake_timeout_ms: 120_000,
        ..Limits::default()
    };
    let world = World::with_limits(limits);
    let mut server = world.connection();
    let response = answer(&world, &mut server, NOW);
    // The challenge lives 30 s (`SessionConfig::default`).
    let late = UnixMillis(NOW.0 + 30_000);
    server.on_text(&response, late);
    let (frames_out, close) = drain(&mut server, late);
    assert_eq!(code(&frames_out[0]), "AUTH_INVALID_SIGNATURE");
    assert!(text(&frames_out[0], "/error/message").contains("expired"));
    assert_eq!(
        frames_out[0].pointer("/error/retryable"),
        Some(&Value::Bool(false))
    );
    assert_eq!(close, None);
    assert_eq!(core_epoch(&world, WORKER), 0);
    // The connection may start again and succeed.
    let response = answer(&world, &mut server, late);
    server.on_text(&response, late);
    let (frames_out, _) = drain(&mut server, late);
    assert_eq!(text(&frames_out[0], "/phase"), "server_accept");
}

#[test]
fn a_command_at_a_fenced_epoch_is_auth_stale_session() {
    let world = World::new();
    world.missions();
    let mut old = world.pair(COORDINATOR);
    let new = world.pair(COORDINATOR);
    assert_eq!(new.client.session_epoch(), Some(2));
    // The old connection is still open, its session fenced (§4 invariant 4, digest §2.10).
    let (bytes, action) = world.command_in(
        GROUP,
        "message.post",
        COORDINATOR,
        1,
        &World::post_payload("stale", MAIN, &[]),
    );
    let ticket = old.client.send_command(&bytes, NOW).unwrap();
    old.pump();
    let events = old.events();
    let [SessionEvent::CommandRefused { ticket: t, error }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(t, &ticket);
    assert_eq!(error.code, WireCode::AuthStaleSession);
    assert_eq!(error.related_action_id.as_deref(), Some(action.as_str()));
    assert_eq!(
        error.related_frame_id.as_deref(),
        Some(ticket.frame_id.as_str())
    );
    assert_eq!(error.group_id.as_deref(), Some(GROUP));
    assert!(!error.retryable);
    // A Command carrying another epoch than the session's is refused by the gateway itself.
    let (bytes, _) = world.command_in(
        GROUP,
        "message.post",
        COORDINATOR,
        2,
        &World::post_payload("other-epoch", MAIN, &[]),
    );
    old.client.send_command(&bytes, NOW).unwrap();
    old.pump();
    let events = old.events();
    assert!(matches!(
        events.as_slice(),
        [SessionEvent::CommandRefused { error, .. }] if error.code == WireCode::AuthStaleSession
    ));
}

#[test]
fn every_frame_before_authentication_is_auth_required_and_the_socket_stays_open() {
    let world = World::new();
    let mut server = world.connection();
    let ping = frames::ping("urn:x:1", "bm9uY2U", None, NOW_TEXT, None).unwrap();
    let subscribe = frames::subscribe(
        "urn:x:2",
        "urn:x:s",
        &[frames::SubscribeGroup {
            group_id: GROUP.into(),
            after_sequence: 0,
            attention: None,
        }],
    )
    .unwrap();
    let ack = frames::ack(
        "urn:x:3",
        &[frames::Acknowledgement {
            group_id: GROUP,
            sequence: 1,
        }],
        NOW_TEXT,
    )
    .unwrap();
    let (command, action) = world.command_in(
        GROUP,
        "message.post",
        WORKER,
        1,
        &World::post_payload("a", MAIN, &[]),
    );
    let command = frames::command("urn:x:4", &command).unwrap();
    for frame in [&ping, &subscribe, &ack, &command] {
        server.on_text(frame, NOW);
    }
    let (frames_out, close) = drain(&mut server, NOW);
    assert_eq!(close, None);
    assert_eq!(frames_out.len(), 4);
    for (i, frame) in frames_out.iter().enumerate() {
        assert_eq!(code(frame), "AUTH_REQUIRED");
        assert_eq!(
            text(frame, "/error/relatedFrameId"),
            format!("urn:x:{}", i + 1)
        );
        assert_eq!(frame.pointer("/error/retryable"), Some(&Value::Bool(false)));
    }
    assert_eq!(text(&frames_out[3], "/error/relatedActionId"), action);
    // The handshake still works afterwards.
    let response = answer(&world, &mut server, NOW);
    server.on_text(&response, NOW);
    let (frames_out, _) = drain(&mut server, NOW);
    assert_eq!(text(&frames_out[0], "/phase"), "server_accept");
}

#[test]
fn a_version_we_do_not_speak_is_unsupported_version() {
    let world = World::new();
    let mut server = world.connection();
    // The schema admits only "0.1" in `supportedVersions`: such a frame is built by hand.
    let init = format!(
        r#"{{"protocolVersion":"0.1","frameId":"urn:x:1","frameType":"HELLO","phase":"client_init",
        "agentId":"{WORKER}","keyId":"{}","clientNonce":"bm9uY2U","supportedVersions":["0.2","1.0"]}}"#,
        world.key(WORKER).key_id()
    )
    .into_bytes();
    server.on_text(&init, NOW);
    let (frames_out, close) = drain(&mut server, NOW);
    assert_eq!(code(&frames_out[0]), "UNSUPPORTED_VERSION");
    assert_eq!(text(&frames_out[0], "/error/relatedFrameId"), "urn:x:1");
    assert_eq!(close, None);
    // A frame whose envelope names another protocol version: closed.
    let other = br#"{"protocolVersion":"0.2","frameId":"urn:x:2","frameType":"PING","nonce":"bm9uY2U","sentAt":"2026-07-15T09:30:00Z"}"#;
    server.on_text(other, NOW);
    let (frames_out, close) = drain(&mut server, NOW);
    assert_eq!(code(&frames_out[0]), "UNSUPPORTED_VERSION");
    assert_eq!(
        frames_out[0].pointer("/error/fatal"),
        Some(&Value::Bool(true))
    );
    assert_eq!(close.map(|c| c.0), Some(CLOSE_POLICY));
}

#[test]
fn the_handshake_timeout_closes_with_auth_required() {
    let world = World::new();
    let mut server = world.connection();
    server.on_tick(UnixMillis(NOW.0 + 9_999));
    assert_eq!(drain(&mut server, NOW).0.len(), 0);
    let late = UnixMillis(NOW.0 + 10_000);
    server.on_tick(late);
    let (frames_out, close) = drain(&mut server, late);
    assert_eq!(code(&frames_out[0]), "AUTH_REQUIRED");
    assert_eq!(
        frames_out[0].pointer("/error/fatal"),
        Some(&Value::Bool(true))
    );
    assert_eq!(close, Some((CLOSE_POLICY, "handshake timeout")));
    assert!(server.is_closed());
    // An authenticated connection has no such timeout.
    let mut pair = world.pair(WORKER);
    pair.server.on_tick(UnixMillis(NOW.0 + 3_600_000));
    assert!(drain(&mut pair.server, NOW).1.is_none());
}

#[test]
fn hello_attempts_and_connections_per_agent_are_limited() {
    let limits = Limits {
        max_hello_attempts: 2,
        max_connections_per_agent: 1,
        ..Limits::default()
    };
    let world = World::with_limits(limits);
    let mut server = world.connection();
    let bad = |n: &str| {
        frames::hello_client_init(
            n,
            WORKER,
            "urn:missionweaveprotocol:key:none",
            "bm9uY2U",
            &["0.1"],
        )
        .unwrap()
    };
    server.on_text(&bad("urn:x:1"), NOW);
    server.on_text(&bad("urn:x:2"), NOW);
    server.on_text(&bad("urn:x:3"), NOW);
    let (frames_out, close) = drain(&mut server, NOW);
    let codes: Vec<&str> = frames_out.iter().map(code).collect();
    assert_eq!(
        codes,
        [
            "AUTH_INVALID_SIGNATURE",
            "AUTH_INVALID_SIGNATURE",
            "RATE_LIMITED"
        ]
    );
    assert_eq!(
        text(&frames_out[2], "/error/details/limit"),
        "max_hello_attempts"
    );
    assert_eq!(
        frames_out[2].pointer("/error/retryable"),
        Some(&Value::Bool(true))
    );
    assert_eq!(close, None);
    // One connection per Agent: the second is refused before its epoch is opened.
    let first = world.pair(WORKER);
    assert_eq!(core_epoch(&world, WORKER), 1);
    let mut second = world.connection();
    let response = answer(&world, &mut second, NOW);
    second.on_text(&response, NOW);
    let (frames_out, _) = drain(&mut second, NOW);
    assert_eq!(code(&frames_out[0]), "RATE_LIMITED");
    assert_eq!(
        text(&frames_out[0], "/error/details/limit"),
        "max_connections_per_agent"
    );
    assert_eq!(
        core_epoch(&world, WORKER),
        1,
        "no epoch for a refused connection"
    );
    drop(first);
    let again = world.pair(WORKER);
    assert_eq!(again.client.session_epoch(), Some(2));
}

#[test]
fn a_client_without_randomness_refuses_to_start() {
    let world = World::new();
    let error = missionweaveprotocol_gateway::client::Session::new(
        world.client_config(WORKER),
        Arc::new(world.key(WORKER).clone()),
        Box::new(NoRandom),
    )
    .unwrap_err();
    assert_eq!(error, ClientError::RandomUnavailable);
    assert!(world.gateway.connect(NOW, Box::new(NoRandom)).is_err());
}
