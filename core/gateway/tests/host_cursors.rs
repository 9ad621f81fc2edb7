//! The host's durable Cursor store (§16; the reference's `GroupGateway(cursors=…)`,
//! `server/host_cursors.rs`): SUBSCRIBE held until the host answers its stored Cursors and
//! resumed after the stored Cursor when the Agent names none (`afterSequence` 0), after its
//! own otherwise, a stored Cursor past the head clamped, store
//! failures refused retryably, an unanswered question settled before the next frame; ACKs
//! reported only when they move the host's Cursor forward (duplicates, older Cursors, hidden
//! Groups and Cursors past the head never reported); and none of it on a `Core` gateway.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_gateway::frames::{self, Acknowledgement, SubscribeGroup};
use missionweaveprotocol_gateway::server::{
    CursorAcknowledged, CursorsWanted, DurableCursors, Limits,
};

fn host_world() -> World {
    let world = World::with_cursors(
        Limits {
            max_connections_per_agent: 64,
            ..Limits::default()
        },
        DurableCursors::Host,
    );
    world.missions();
    for id in ["a", "b", "c", "d", "e"] {
        world.owner_posts(GROUP, id, &[]);
    }
    world
}

fn subscribe_frame(frame_id: &str, groups: &[(&str, u64)]) -> Vec<u8> {
    let groups: Vec<SubscribeGroup> = groups
        .iter()
        .map(|(g, after)| SubscribeGroup {
            group_id: (*g).to_owned(),
            after_sequence: *after,
            attention: None,
        })
        .collect();
    frames::subscribe(frame_id, "urn:x:subscription", &groups).unwrap()
}

fn ack_frame(frame_id: &str, group: &str, sequence: u64) -> Vec<u8> {
    frames::ack(
        frame_id,
        &[Acknowledgement {
            group_id: group,
            sequence,
        }],
        NOW_TEXT,
    )
    .unwrap()
}

/// The Event sequences among `frames`, in order.
fn sequences(frames: &[Value]) -> Vec<u64> {
    frames
        .iter()
        .filter(|f| f.get("frameType").and_then(Value::as_str) == Some("EVENT"))
        .map(|f| {
            f.pointer("/event/sequence")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64())
                .unwrap()
        })
        .collect()
}

fn reports(pair: &mut Pair) -> Vec<CursorAcknowledged> {
    std::iter::from_fn(|| pair.server.poll_acknowledged()).collect()
}

#[test]
fn subscribe_waits_for_the_stored_cursor_and_resumes_after_it() {
    let world = host_world();
    let head = world.head(GROUP);
    assert!(head > 5);
    let mut pair = world.pair(COORDINATOR);
    pair.server
        .on_text(&subscribe_frame("urn:x:sub", &[(GROUP, 0)]), NOW);
    // Nothing is replayed before the host answered.
    let (out, _) = drain(&mut pair.server, NOW);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(
        pair.server.cursors_wanted(),
        Some(&CursorsWanted {
            agent_id: COORDINATOR.into(),
            group_ids: vec![GROUP.into()],
            frame_id: "urn:x:sub".into(),
        })
    );
    // Handed to the host once.
    assert!(pair.server.poll_cursors_wanted().is_some());
    assert_eq!(pair.server.poll_cursors_wanted(), None);
    assert!(pair.server.cursors_wanted().is_some());
    pair.server.on_stored_cursors(Ok(&[2]), NOW);
    assert_eq!(pair.server.cursors_wanted(), None);
    let (out, _) = drain(&mut pair.server, NOW);
    assert_eq!(sequences(&out), (3..=head).collect::<Vec<_>>());
    // A Cursor the Agent names is honoured (§16), above or below the stored one.
    for (named, stored) in [(head - 1, 1), (1, head - 1)] {
        let mut pair = world.pair(COORDINATOR);
        pair.server
            .on_text(&subscribe_frame("urn:x:sub2", &[(GROUP, named)]), NOW);
        pair.server.on_stored_cursors(Ok(&[stored]), NOW);
        let (out, _) = drain(&mut pair.server, NOW);
        assert_eq!(sequences(&out), (named + 1..=head).collect::<Vec<_>>());
    }
}

#[test]
fn a_stored_cursor_past_the_head_skips_nothing_that_comes_later() {
    let world = host_world();
    let head = world.head(GROUP);
    let mut pair = world.pair(COORDINATOR);
    pair.server
        .on_text(&subscribe_frame("urn:x:sub", &[(GROUP, 0)]), NOW);
    pair.server.on_stored_cursors(Ok(&[head + 100]), NOW);
    let (out, close) = drain(&mut pair.server, NOW);
    assert!(out.is_empty() && close.is_none(), "{out:?}");
    assert_eq!(pair.server.subscribed_groups().count(), 1);
    world.owner_posts(GROUP, "f", &[]);
    pair.server
        .on_group_moved(GROUP, Some(world.head(GROUP)), NOW);
    let (out, _) = drain(&mut pair.server, NOW);
    assert_eq!(sequences(&out), vec![head + 1]);
}

#[test]
fn a_failing_store_refuses_the_subscribe_retryably_and_subscribes_nothing() {
    let world = host_world();
    let mut pair = world.pair(COORDINATOR);
    for answer in [Err(()), Ok(&[1u64, 2][..])] {
        pair.server
            .on_text(&subscribe_frame("urn:x:sub", &[(GROUP, 0)]), NOW);
        pair.server.on_stored_cursors(answer, NOW);
        let (out, close) = drain(&mut pair.server, NOW);
        assert_eq!(close, None);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(code(&out[0]), "INTERNAL_ERROR");
        assert_eq!(out[0].pointer("/error/retryable"), Some(&Value::Bool(true)));
        assert_eq!(text(&out[0], "/error/relatedFrameId"), "urn:x:sub");
        assert_eq!(pair.server.subscribed_groups().count(), 0);
    }
    // An answer without a question changes nothing.
    pair.server.on_stored_cursors(Ok(&[0]), NOW);
    assert!(drain(&mut pair.server, NOW).0.is_empty());
}

#[test]
fn an_unanswered_question_is_settled_before_the_next_frame() {
    let world = host_world();
    let head = world.head(GROUP);
    let mut pair = world.pair(COORDINATOR);
    pair.server
        .on_text(&subscribe_frame("urn:x:sub", &[(GROUP, 0)]), NOW);
    let ping = frames::ping("urn:x:ping", "bm9uY2Utbm9uY2U", None, NOW_TEXT, None).unwrap();
    pair.server.on_text(&ping, NOW);
    let (out, _) = drain(&mut pair.server, NOW);
    // The replay from 0 (no stored Cursor) comes before the PING's reply.
    assert_eq!(sequences(&out), (1..=head).collect::<Vec<_>>());
    let last = out.last().unwrap();
    assert_eq!(text(last, "/frameType"), "PING");
    assert_eq!(pair.server.cursors_wanted(), None);
}

#[test]
fn acks_are_reported_only_when_they_move_the_cursor_forward() {
    let world = host_world();
    let head = world.head(GROUP);
    let mut pair = world.pair(COORDINATOR);
    pair.server
        .on_text(&subscribe_frame("urn:x:sub", &[(GROUP, 0)]), NOW);
    pair.server.on_stored_cursors(Ok(&[1]), NOW);
    drain(&mut pair.server, NOW);
    // At or below the stored Cursor: not reported.
    pair.server.on_text(&ack_frame("urn:x:ack0", GROUP, 1), NOW);
    assert!(reports(&mut pair).is_empty());
    pair.server.on_text(&ack_frame("urn:x:ack1", GROUP, 3), NOW);
    assert_eq!(
        reports(&mut pair),
        vec![CursorAcknowledged {
            agent_id: COORDINATOR.into(),
            group_id: GROUP.into(),
            sequence: 3,
            frame_id: "urn:x:ack1".into(),
        }]
    );
    // A duplicate and an older one: never reported (the store's Cursor never moves back).
    pair.server.on_text(&ack_frame("urn:x:ack2", GROUP, 3), NOW);
    pair.server.on_text(&ack_frame("urn:x:ack3", GROUP, 2), NOW);
    assert!(reports(&mut pair).is_empty());
    // Two before the host takes them: one report, the highest.
    pair.server.on_text(&ack_frame("urn:x:ack4", GROUP, 4), NOW);
    pair.server
        .on_text(&ack_frame("urn:x:ack5", GROUP, head), NOW);
    let got = reports(&mut pair);
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].sequence, got[0].frame_id.as_str()),
        (head, "urn:x:ack5")
    );
    assert!(drain(&mut pair.server, NOW).0.is_empty());
    // Refused ACKs are never reported: past the head, a hidden Group.
    pair.server
        .on_text(&ack_frame("urn:x:ack6", GROUP, head + 1), NOW);
    pair.server
        .on_text(&ack_frame("urn:x:ack7", ABSENT_GROUP, 1), NOW);
    assert!(reports(&mut pair).is_empty());
    let (out, _) = drain(&mut pair.server, NOW);
    assert_eq!(code(&out[0]), "PROTOCOL_VIOLATION");
    assert_eq!(code(&out[1]), "GROUP_NOT_FOUND");
}

#[test]
fn a_failed_store_write_is_answered_and_the_ack_reported_again() {
    let world = host_world();
    let mut pair = world.pair(COORDINATOR);
    pair.server.on_text(&ack_frame("urn:x:ack1", GROUP, 2), NOW);
    let got = reports(&mut pair);
    assert_eq!(got.len(), 1);
    pair.server
        .on_cursor_store_failed(GROUP, &got[0].frame_id, NOW);
    let (out, close) = drain(&mut pair.server, NOW);
    assert_eq!(close, None);
    assert_eq!(code(&out[0]), "INTERNAL_ERROR");
    assert_eq!(out[0].pointer("/error/retryable"), Some(&Value::Bool(true)));
    assert_eq!(text(&out[0], "/error/groupId"), GROUP);
    assert_eq!(text(&out[0], "/error/relatedFrameId"), "urn:x:ack1");
    pair.server.on_text(&ack_frame("urn:x:ack2", GROUP, 2), NOW);
    assert_eq!(reports(&mut pair)[0].sequence, 2);
}

#[test]
fn a_core_gateway_neither_asks_nor_reports() {
    let world = World::new();
    world.missions();
    let head = world.head(GROUP);
    let mut pair = world.pair(COORDINATOR);
    pair.server
        .on_text(&subscribe_frame("urn:x:sub", &[(GROUP, 0)]), NOW);
    assert_eq!(pair.server.cursors_wanted(), None);
    let (out, _) = drain(&mut pair.server, NOW);
    assert_eq!(sequences(&out), (1..=head).collect::<Vec<_>>());
    pair.server
        .on_text(&ack_frame("urn:x:ack", GROUP, head), NOW);
    assert!(reports(&mut pair).is_empty());
}
