//! The frame builders (one place for both sides): every frame type and HELLO phase builds a
//! schema-valid frame in RFC 8785 form; `COMMAND` and `EVENT` keep their document's bytes; the
//! HELLO challenge round-trips so both sides sign the same transcript; an ERROR body is always
//! schema-valid (long messages cut, invalid identifiers left out).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::wire::{self, FrameType, ReceivedFrame};
use missionweaveprotocol_agent::auth::Challenge;
use missionweaveprotocol_gateway::frames::{
    self, Attention, ErrorBody, MAX_ERROR_MESSAGE_CHARS, SubscribeGroup,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn canonical(frame: &[u8]) -> bool {
    let value = json::parse(frame).unwrap();
    json::canonical_bytes(&value).unwrap() == frame
}

#[test]
fn every_frame_type_builds_schema_valid_and_canonical() {
    let world = World::new();
    world.missions();
    let (command, _) = world.command_in(
        GROUP,
        "message.post",
        WORKER,
        1,
        &World::post_payload("f", MAIN, &[]),
    );
    let event = world.store_event(GROUP, 1);
    let presence = json::parse(
        format!(
            r#"{{"agentId": "{WORKER}", "sessionEpoch": 1, "status": "busy",
            "capacity": {{"maxSlots": 1, "activeSlots": 1, "availableSlots": 0, "queuedItems": 3}},
            "capabilityAvailability": [], "lastHeartbeat": "{NOW_TEXT}",
            "expiresAt": "2026-07-15T09:31:00Z"}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let built: Vec<(FrameType, Option<&str>, Vec<u8>)> = vec![
        (
            FrameType::Hello,
            Some("client_init"),
            frames::hello_client_init(
                "urn:x:1",
                WORKER,
                "urn:missionweaveprotocol:key:24",
                "bm9uY2U",
                &["0.1"],
            )
            .unwrap(),
        ),
        (
            FrameType::Hello,
            Some("server_challenge"),
            frames::hello_server_challenge("urn:x:2", "0.1", "bm9uY2U", "c2VydmVy", "Y2hhbGxlbmdl")
                .unwrap(),
        ),
        (
            FrameType::Hello,
            Some("client_response"),
            frames::hello_client_response(
                "urn:x:3",
                WORKER,
                "urn:missionweaveprotocol:key:24",
                "bm9uY2U",
                "c2VydmVy",
                "c2lnbmF0dXJl",
            )
            .unwrap(),
        ),
        (
            FrameType::Hello,
            Some("server_accept"),
            frames::hello_server_accept(
                "urn:x:4",
                "0.1",
                "a-session-token-of-16+",
                3,
                "2026-07-15T09:45:00.000Z",
            )
            .unwrap(),
        ),
        (
            FrameType::Subscribe,
            None,
            frames::subscribe(
                "urn:x:5",
                "urn:x:s",
                &[SubscribeGroup {
                    group_id: GROUP.into(),
                    after_sequence: 7,
                    attention: Some(Attention {
                        event_kinds: Some(vec!["message.posted".into()]),
                        conversation_ids: Some(vec![MAIN.into()]),
                        work_item_ids: Some(vec!["urn:missionweaveprotocol:work:1".into()]),
                        mentions_only: Some(false),
                        announcements: Some(true),
                    }),
                }],
            )
            .unwrap(),
        ),
        (
            FrameType::Command,
            None,
            frames::command("urn:x:6", &command).unwrap(),
        ),
        (
            FrameType::Event,
            None,
            frames::event("urn:x:7", &event).unwrap(),
        ),
        (
            FrameType::Ack,
            None,
            frames::ack(
                "urn:x:8",
                &[frames::Acknowledgement {
                    group_id: GROUP,
                    sequence: 4,
                }],
                NOW_TEXT,
            )
            .unwrap(),
        ),
        (
            FrameType::Ping,
            None,
            frames::ping(
                "urn:x:9",
                "bm9uY2U",
                Some("cmVwbHk"),
                NOW_TEXT,
                Some(&presence),
            )
            .unwrap(),
        ),
        (
            FrameType::Error,
            None,
            frames::error(
                "urn:x:10",
                &ErrorBody::new(WireCode::CursorTooOld, "restore"),
                NOW_TEXT,
            )
            .unwrap(),
        ),
    ];
    for (frame_type, phase, bytes) in built {
        let parsed = wire::parse_frame(&bytes).unwrap_or_else(|e| panic!("{frame_type:?}: {e}"));
        assert_eq!(parsed.frame_type, frame_type);
        assert_eq!(parsed.phase(), phase);
        assert!(canonical(&bytes), "{frame_type:?} is RFC 8785");
    }
    // COMMAND keeps the Command's exact bytes; EVENT the stored Event's.
    let framed = frames::command("urn:x:6", &command).unwrap();
    let ReceivedFrame::Command(received) = wire::parse_received_frame(&framed).unwrap() else {
        panic!()
    };
    assert_eq!(received.command_bytes, command);
    let framed = frames::event("urn:x:7", &event).unwrap();
    let frames::ReceivedServerFrame::Event(received) = frames::parse_server_frame(&framed).unwrap()
    else {
        panic!()
    };
    assert_eq!(received.event_bytes, event);
    assert_eq!(received.frame_id, "urn:x:7");
    // Built at exactly its length: the connection's queue shrinks every frame to its length
    // (its memory bound counts lengths), which would otherwise reallocate every EVENT.
    let long_id = format!("urn:missionweaveprotocol:frame:{}:12345", "a".repeat(32));
    for framed in [framed, frames::event(&long_id, &event).unwrap()] {
        assert_eq!(framed.capacity(), framed.len());
    }
    // A COMMAND around something that is not one JSON object is refused.
    assert!(frames::command("urn:x:6", b"[1]").is_err());
    assert!(frames::command("urn:x:6", b"{").is_err());
    assert!(frames::command("not an id", &command).is_err());
}

#[test]
fn the_challenge_round_trips_into_the_same_transcript() {
    let server_side = Challenge {
        protocol_version: "0.1".into(),
        challenge_id: missionweaveprotocol::schema_formats::encode_base64url(&[7u8; 32]),
        agent_id: WORKER.into(),
        key_id: "urn:missionweaveprotocol:key:24".into(),
        client_nonce: "bm9uY2U".into(),
        server_nonce: "c2VydmVy".into(),
        expires_at: UnixMillis(NOW.0 + 30_000),
    };
    let wire = frames::wire_challenge(&server_side).unwrap();
    let client_side = frames::challenge_from_wire(
        WORKER,
        "urn:missionweaveprotocol:key:24",
        "bm9uY2U",
        "c2VydmVy",
        "0.1",
        &wire,
    )
    .unwrap();
    assert_eq!(client_side, server_side);
    assert_eq!(
        client_side.signing_bytes().unwrap(),
        server_side.signing_bytes().unwrap()
    );
    // Not of the form: too short, not canonical, not base64url.
    for bad in ["AAAA", "AAAAAAAAAAAAB", "not base64!", ""] {
        assert!(
            frames::challenge_from_wire(WORKER, "k", "n", "s", "0.1", bad).is_none(),
            "{bad}"
        );
    }
}

#[test]
fn an_error_body_is_always_schema_valid() {
    let mut body = ErrorBody::new(WireCode::RevisionConflict, "x".repeat(5000));
    body.related_frame_id = Some("not an id".into());
    body.group_id = Some(GROUP.into());
    body.snapshot_artifact_hash = Some("sha256:short".into());
    body.expected_revision = Some(u64::MAX);
    body.current_revision = Some(3);
    let frame = frames::error("urn:x:e", &body, NOW_TEXT).unwrap();
    let value = wire::parse_frame(&frame).unwrap().value;
    assert_eq!(
        text(&value, "/error/message").chars().count(),
        MAX_ERROR_MESSAGE_CHARS
    );
    assert!(value.pointer("/error/relatedFrameId").is_none());
    assert!(value.pointer("/error/snapshotArtifactHash").is_none());
    assert!(value.pointer("/error/expectedRevision").is_none());
    assert_eq!(text(&value, "/error/groupId"), GROUP);
    // An empty message is the code.
    let frame = frames::error(
        "urn:x:e",
        &ErrorBody::new(WireCode::InternalError, ""),
        NOW_TEXT,
    )
    .unwrap();
    let value = wire::parse_frame(&frame).unwrap().value;
    assert_eq!(text(&value, "/error/message"), "INTERNAL_ERROR");
    assert_eq!(value.pointer("/error/retryable"), Some(&Value::Bool(true)));
    // And it reads back.
    let read = ErrorBody::from_value(value.get("error").unwrap()).unwrap();
    assert_eq!(read.code, WireCode::InternalError);
    assert!(read.retryable);
}
