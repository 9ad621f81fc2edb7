//! Framing (§17.1, §17.4, §19): violations are one fatal ERROR then the right WebSocket close
//! code (binary 1003, not UTF-8 or not JSON 1007, not a frame 1008, oversized 1009); a frame
//! that is recognizably ours but fails its schema is an ERROR answering it and the socket stays
//! open; the peer's EVENT and ERROR frames; input fed past the outbound bound; PING, its reply
//! and the ephemeral Presence Record (§17.3, §6.2).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_gateway::client::SessionEvent;
use missionweaveprotocol_gateway::frames;
use missionweaveprotocol_gateway::server::{
    CLOSE_INVALID_PAYLOAD, CLOSE_POLICY, CLOSE_TOO_BIG, CLOSE_UNSUPPORTED_DATA, Limits, Output,
};

fn fatal(frames_out: &[Value], expected_code: &str) {
    assert_eq!(frames_out.len(), 1, "one ERROR, nothing else");
    assert_eq!(code(&frames_out[0]), expected_code);
    assert_eq!(
        frames_out[0].pointer("/error/fatal"),
        Some(&Value::Bool(true))
    );
}

#[test]
fn framing_violations_close_with_their_codes() {
    let world = World::new();
    let cases: Vec<(Vec<u8>, &str, u16)> = vec![
        (b"{".to_vec(), "PROTOCOL_VIOLATION", CLOSE_INVALID_PAYLOAD),
        (b"not json at all".to_vec(), "PROTOCOL_VIOLATION", CLOSE_INVALID_PAYLOAD),
        (vec![b'"', 0xff, b'"'], "PROTOCOL_VIOLATION", CLOSE_INVALID_PAYLOAD),
        (b"[1,2]".to_vec(), "PROTOCOL_VIOLATION", CLOSE_POLICY),
        (br#"{"frameType":"PING"}"#.to_vec(), "SCHEMA_VALIDATION_FAILED", CLOSE_POLICY),
        (
            br#"{"protocolVersion":"0.1","frameId":"urn:x:1","frameType":"GOSSIP"}"#.to_vec(),
            "SCHEMA_VALIDATION_FAILED",
            CLOSE_POLICY,
        ),
        (
            br#"{"protocolVersion":"0.1","frameId":"not an id","frameType":"PING","nonce":"bm9uY2U","sentAt":"2026-07-15T09:30:00Z"}"#.to_vec(),
            "SCHEMA_VALIDATION_FAILED",
            CLOSE_POLICY,
        ),
        (
            br#"{"protocolVersion":"0.1","protocolVersion":"0.1","frameId":"urn:x:1","frameType":"PING","nonce":"bm9uY2U","sentAt":"2026-07-15T09:30:00Z"}"#.to_vec(),
            "PROTOCOL_VIOLATION",
            CLOSE_INVALID_PAYLOAD,
        ),
    ];
    for (bytes, expected, close_code) in cases {
        let mut server = world.connection();
        server.on_text(&bytes, NOW);
        let (frames_out, close) = drain(&mut server, NOW);
        fatal(&frames_out, expected);
        assert_eq!(
            close.map(|c| c.0),
            Some(close_code),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
        assert!(server.is_closed());
        // Nothing more after the close.
        server.on_text(b"{}", NOW);
        assert!(server.poll_output(NOW).is_none());
    }
    // Binary.
    let mut pair = world.pair(WORKER);
    pair.server.on_binary(NOW);
    let (frames_out, close) = drain(&mut pair.server, NOW);
    fatal(&frames_out, "PROTOCOL_VIOLATION");
    assert_eq!(close, Some((CLOSE_UNSUPPORTED_DATA, "binary message")));
    // The Agent's slot is given back at the close.
    assert_eq!(world.gateway.agents().count(WORKER), 0);
}

#[test]
fn an_oversized_frame_closes_with_1009() {
    let world = World::with_limits(Limits {
        max_frame_bytes: 64,
        ..Limits::default()
    });
    let mut server = world.connection();
    let ping = frames::ping("urn:x:1", "bm9uY2U", None, NOW_TEXT, None).unwrap();
    assert!(ping.len() > 64);
    server.on_text(&ping, NOW);
    let (frames_out, close) = drain(&mut server, NOW);
    fatal(&frames_out, "PROTOCOL_VIOLATION");
    assert_eq!(close, Some((CLOSE_TOO_BIG, "frame too large")));
}

#[test]
fn a_frame_of_ours_failing_its_schema_is_answered_and_the_socket_stays_open() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    let bad_subscribe = br#"{"protocolVersion":"0.1","frameId":"urn:x:1","frameType":"SUBSCRIBE","subscriptionId":"urn:x:s","groups":[]}"#;
    pair.server.on_text(bad_subscribe, NOW);
    let (bytes, action) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("a", MAIN, &[]),
    );
    let command = String::from_utf8(frames::command("urn:x:2", &bytes).unwrap()).unwrap();
    let extra = command.replacen('{', r#"{"extra":1,"#, 1);
    pair.server.on_text(extra.as_bytes(), NOW);
    let negative = br#"{"protocolVersion":"0.1","frameId":"urn:x:3","frameType":"ACK","acknowledgements":[{"groupId":"urn:x:g","sequence":-1}],"sentAt":"2026-07-15T09:30:00Z"}"#;
    pair.server.on_text(negative, NOW);
    let (frames_out, close) = drain(&mut pair.server, NOW);
    assert_eq!(close, None);
    let codes: Vec<&str> = frames_out.iter().map(code).collect();
    assert_eq!(codes, ["SCHEMA_VALIDATION_FAILED"; 3]);
    let related: Vec<&str> = frames_out
        .iter()
        .map(|f| text(f, "/error/relatedFrameId"))
        .collect();
    assert_eq!(related, ["urn:x:1", "urn:x:2", "urn:x:3"]);
    assert_eq!(text(&frames_out[1], "/error/relatedActionId"), action);
    assert!(
        frames_out
            .iter()
            .all(|f| f.pointer("/error/fatal").is_none())
    );
    // Still working.
    pair.subscribe(&[(GROUP, 0)]);
    assert!(!pair.delivered().is_empty());
}

#[test]
fn the_peers_event_and_error_frames() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    pair.subscribe(&[(GROUP, 0)]);
    let event = pair.events().into_iter().find_map(|e| match e {
        SessionEvent::Event(event) => Some(event),
        _ => None,
    });
    let event_frame = frames::event("urn:x:1", &event.unwrap().bytes).unwrap();
    pair.server.on_text(&event_frame, NOW);
    let error = frames::error(
        "urn:x:2",
        &frames::ErrorBody::new(missionweaveprotocol::WireCode::Backpressure, "slow down"),
        NOW_TEXT,
    )
    .unwrap();
    pair.server.on_text(&error, NOW);
    let (frames_out, close) = drain(&mut pair.server, NOW);
    assert_eq!(close, None);
    assert_eq!(frames_out.len(), 1, "a peer's ERROR is never answered");
    assert_eq!(code(&frames_out[0]), "PROTOCOL_VIOLATION");
    assert_eq!(text(&frames_out[0], "/error/relatedFrameId"), "urn:x:1");
}

#[test]
fn input_fed_past_the_reply_bound_closes_instead_of_growing() {
    let world = World::with_limits(Limits {
        max_reply_frames: 4,
        ..Limits::default()
    });
    let mut pair = world.pair(WORKER);
    let ping = frames::ping("urn:x:p", "bm9uY2U", None, NOW_TEXT, None).unwrap();
    for _ in 0..4 {
        assert!(pair.server.wants_input());
        pair.server.on_text(&ping, NOW);
    }
    assert!(
        !pair.server.wants_input(),
        "four replies wait: stop reading"
    );
    assert_eq!(pair.server.queued_frames(), 4);
    // Drained, it wants input again.
    assert!(matches!(
        pair.server.poll_output(NOW),
        Some(Output::Frame(_))
    ));
    assert!(pair.server.wants_input());
    pair.server.on_text(&ping, NOW);
    // A host that ignores `wants_input`.
    pair.server.on_text(&ping, NOW);
    let (frames_out, close) = drain(&mut pair.server, NOW);
    fatal(&frames_out, "BACKPRESSURE");
    assert_eq!(close, Some((CLOSE_POLICY, "outbound queue overflow")));
}

#[test]
fn pings_are_answered_once_and_presence_is_kept_apart_from_the_log() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(WORKER);
    let head = world.head(GROUP);
    // Client → server → Pong.
    let presence = json::parse(
        format!(
            r#"{{"agentId": "{WORKER}", "sessionEpoch": 1, "status": "online",
            "capacity": {{"maxSlots": 2, "activeSlots": 0, "availableSlots": 2, "queuedItems": 0}},
            "capabilityAvailability": [], "lastHeartbeat": "{NOW_TEXT}",
            "expiresAt": "2026-07-15T09:31:00Z"}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let nonce = pair.client.ping(Some(&presence), NOW).unwrap();
    pair.pump();
    assert_eq!(pair.events(), [SessionEvent::Pong { nonce }]);
    assert!(pair.server.presence().unwrap().json_eq(&presence));
    assert_eq!(
        world.head(GROUP),
        head,
        "presence is never in the log (§6.2)"
    );
    // Server → client: the client answers with replyToNonce; the server does not answer that.
    pair.server.ping(NOW);
    pair.pump();
    assert!(pair.events().is_empty());
    assert_eq!(pair.server.queued_frames(), 0);
    // A Presence Record of another Agent or another epoch is refused and not kept.
    let other = json::parse(
        String::from_utf8(json::canonical_bytes(&presence).unwrap())
            .unwrap()
            .replace(WORKER, COORDINATOR)
            .as_bytes(),
    )
    .unwrap();
    let stale = json::parse(
        String::from_utf8(json::canonical_bytes(&presence).unwrap())
            .unwrap()
            .replace(r#""sessionEpoch":1"#, r#""sessionEpoch":2"#)
            .as_bytes(),
    )
    .unwrap();
    for (record, expected) in [(&other, "AUTH_FORBIDDEN"), (&stale, "AUTH_STALE_SESSION")] {
        let ping = frames::ping("urn:x:p", "bm9uY2U", None, NOW_TEXT, Some(record)).unwrap();
        pair.server.on_text(&ping, NOW);
        let (frames_out, close) = drain(&mut pair.server, NOW);
        assert_eq!(close, None);
        assert_eq!(frames_out.len(), 1, "refused, not answered");
        assert_eq!(code(&frames_out[0]), expected);
        assert!(pair.server.presence().unwrap().json_eq(&presence));
    }
    // The Presence Record bound.
    let world = World::with_limits(Limits {
        max_presence_bytes: 64,
        ..Limits::default()
    });
    let mut pair = world.pair(WORKER);
    let ping = frames::ping("urn:x:p", "bm9uY2U", None, NOW_TEXT, Some(&presence)).unwrap();
    pair.server.on_text(&ping, NOW);
    let (frames_out, _) = drain(&mut pair.server, NOW);
    assert_eq!(
        text(&frames_out[0], "/error/details/limit"),
        "max_presence_bytes"
    );
    assert_eq!(pair.server.presence(), None);
}
