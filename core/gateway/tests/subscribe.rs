//! SUBSCRIBE and ACK (§8, §16, §17.2) over a real Core: Membership enforced per Group with
//! non-disclosure (a hidden Group's ERROR is byte-identical to an absent one's), late-member
//! visibility, `CURSOR_TOO_OLD` after archival, attention filters (live only, replay
//! unaffected), a Membership that ends, durable ACK Cursors, and the subscription limits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_engine::store::{SnapshotPointer, Store};
use missionweaveprotocol_gateway::client::{ClientError, SessionEvent};
use missionweaveprotocol_gateway::frames::{self, Attention, SubscribeGroup};
use missionweaveprotocol_gateway::server::{GROUP_NOT_FOUND_MESSAGE, Limits};

fn subscribe_frame(frame_id: &str, group: &str, after: u64) -> Vec<u8> {
    frames::subscribe(
        frame_id,
        "urn:x:subscription",
        &[SubscribeGroup {
            group_id: group.into(),
            after_sequence: after,
            attention: None,
        }],
    )
    .unwrap()
}

/// The server's answer to `frame` from an authenticated `agent` in a world prepared by `setup`.
fn answer_in(
    setup: impl Fn(&World),
    agent: &str,
    frame: impl Fn(&World, &Pair) -> Vec<u8>,
) -> Vec<Vec<u8>> {
    let world = World::new();
    setup(&world);
    let mut pair = world.pair(agent);
    let bytes = frame(&world, &pair);
    pair.server.on_text(&bytes, NOW);
    drain_bytes(&mut pair.server, NOW)
}

#[test]
fn a_hidden_group_is_byte_identical_to_an_absent_one() {
    // The same Agent, the same frames: in one world the Group exists and it is no member, in
    // the other the Group does not exist. Both worlds draw the same frame IDs, so even those
    // agree; the comparison would hold with them blanked anyway.
    let hidden = |w: &World| w.missions();
    // The same Action IDs are drawn in both worlds (`missions` draws two).
    let absent = |w: &World| {
        w.action();
        w.action();
    };
    let subscribe = |_: &World, _: &Pair| subscribe_frame("urn:x:sub", GROUP, 0);
    let a = answer_in(hidden, OUTSIDER, subscribe);
    let b = answer_in(absent, OUTSIDER, subscribe);
    assert_eq!(a.len(), 1);
    assert_eq!(a, b, "SUBSCRIBE: hidden and absent differ");
    let error = missionweaveprotocol::wire::parse_frame(&a[0])
        .unwrap()
        .value;
    assert_eq!(code(&error), "GROUP_NOT_FOUND");
    assert_eq!(text(&error, "/error/message"), GROUP_NOT_FOUND_MESSAGE);
    assert_eq!(text(&error, "/error/groupId"), GROUP);
    assert_eq!(text(&error, "/error/relatedFrameId"), "urn:x:sub");
    // A Command into the Group: the engine's own refusal is never reached.
    let command = |w: &World, p: &Pair| {
        let (bytes, _) = p.command(
            w,
            GROUP,
            "message.post",
            &World::post_payload("x", MAIN, &[]),
        );
        frames::command("urn:x:cmd", &bytes).unwrap()
    };
    let a = answer_in(hidden, OUTSIDER, command);
    let b = answer_in(absent, OUTSIDER, command);
    assert_eq!(a, b, "COMMAND: hidden and absent differ");
    let error = missionweaveprotocol::wire::parse_frame(&a[0])
        .unwrap()
        .value;
    assert_eq!(code(&error), "GROUP_NOT_FOUND");
    assert!(error.pointer("/error/relatedActionId").is_some());
    // An ACK for the Group.
    let ack = |_: &World, _: &Pair| {
        frames::ack(
            "urn:x:ack",
            &[frames::Acknowledgement {
                group_id: GROUP,
                sequence: 1,
            }],
            NOW_TEXT,
        )
        .unwrap()
    };
    let a = answer_in(hidden, OUTSIDER, ack);
    let b = answer_in(absent, OUTSIDER, ack);
    assert_eq!(a, b, "ACK: hidden and absent differ");
    // A Membership that ended is hidden too.
    let ended = |w: &World| {
        w.missions();
        w.add_worker(GROUP, OUTSIDER, 0);
        w.end_membership(GROUP, OUTSIDER);
    };
    assert_eq!(
        answer_in(ended, OUTSIDER, subscribe),
        answer_in(absent, OUTSIDER, subscribe)
    );
    // A member is answered with Events instead.
    let member = answer_in(hidden, COORDINATOR, subscribe);
    let first = missionweaveprotocol::wire::parse_frame(&member[0]).unwrap();
    assert_eq!(first.frame_type.as_str(), "EVENT");
}

#[test]
fn a_late_member_gets_no_history_before_its_visibility() {
    let world = World::new();
    world.missions();
    for id in ["a", "b", "c"] {
        world.owner_posts(GROUP, id, &[]);
    }
    let start = world.head(GROUP) + 1;
    world.add_worker(GROUP, WORKER, start);
    assert_eq!(
        world.head(GROUP),
        start,
        "the membership.changed Event is the first visible"
    );
    let mut pair = world.pair(WORKER);
    pair.subscribe(&[(GROUP, 0)]);
    // The server replays after max(0, start − 1): only the Membership Event.
    assert_eq!(pair.client.buffered(GROUP), 1);
    assert!(
        pair.delivered().is_empty(),
        "not contiguous for a client that starts at 0"
    );
    // The host learns its visibility start (its Membership): the Event becomes contiguous.
    pair.client.set_visibility_start(GROUP, start).unwrap();
    let delivered = pair.delivered();
    assert_eq!(
        delivered,
        [(
            GROUP.to_owned(),
            start,
            true,
            "membership.changed".to_owned()
        )]
    );
    // A cursor inside the invisible range starts at the visibility too.
    let mut other = world.pair(WORKER);
    other.client.set_visibility_start(GROUP, 0).unwrap_err();
    other.subscribe(&[(GROUP, 2)]);
    other.client.set_visibility_start(GROUP, start).unwrap();
    assert_eq!(other.delivered().len(), 1);
    // Live Events follow in order.
    world.owner_posts(GROUP, "d", &[]);
    pair.wake(&world, GROUP);
    let delivered = pair.delivered();
    assert_eq!(
        delivered,
        [(
            GROUP.to_owned(),
            start + 1,
            true,
            "message.posted".to_owned()
        )]
    );
}

#[test]
fn cursor_too_old_after_archival_names_the_snapshot() {
    let world = World::new();
    world.missions();
    for id in ["a", "b", "c", "d"] {
        world.owner_posts(GROUP, id, &[]);
    }
    let hash = format!("sha256:{}", "ab".repeat(32));
    world
        .store
        .archive_before(
            GROUP,
            4,
            SnapshotPointer {
                artifact_hash: hash.clone(),
            },
        )
        .unwrap();
    let mut pair = world.pair(COORDINATOR);
    let frame_id = pair.subscribe(&[(GROUP, 0)]);
    let events = pair.events();
    let [
        SessionEvent::CursorTooOld {
            group_id,
            snapshot_artifact_hash,
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(group_id, GROUP);
    assert_eq!(snapshot_artifact_hash.as_deref(), Some(hash.as_str()));
    assert!(pair.server.subscribed_groups().next().is_none());
    // The raw frame relates to the SUBSCRIBE and carries the Group.
    pair.server
        .on_text(&subscribe_frame("urn:x:again", GROUP, 2), NOW);
    let (frames_out, close) = drain(&mut pair.server, NOW);
    assert_eq!(close, None);
    assert_eq!(code(&frames_out[0]), "CURSOR_TOO_OLD");
    assert_eq!(text(&frames_out[0], "/error/snapshotArtifactHash"), hash);
    assert_eq!(text(&frames_out[0], "/error/groupId"), GROUP);
    assert_eq!(text(&frames_out[0], "/error/relatedFrameId"), "urn:x:again");
    assert_eq!(
        frames_out[0].pointer("/error/retryable"),
        Some(&Value::Bool(false))
    );
    assert_ne!(frame_id, "urn:x:again");
    // After restoring the snapshot (through 3), the replay resumes at 4.
    pair.subscribe(&[(GROUP, 3)]);
    let sequences: Vec<u64> = pair.delivered().iter().map(|d| d.1).collect();
    assert_eq!(sequences, (4..=world.head(GROUP)).collect::<Vec<_>>());
}

#[test]
fn attention_filters_change_live_delivery_only() {
    let world = World::new();
    world.missions();
    world.owner_posts(GROUP, "before-1", &[]);
    world.owner_posts(GROUP, "before-2", &[]);
    let head = world.head(GROUP);
    let mut pair = world.pair(COORDINATOR);
    pair.subscribe_with(vec![SubscribeGroup {
        group_id: GROUP.into(),
        after_sequence: 0,
        attention: Some(Attention {
            event_kinds: Some(vec!["membership.changed".into()]),
            mentions_only: Some(true),
            ..Attention::default()
        }),
    }]);
    // Replay is unaffected: every Event up to the head, in order.
    let replay = pair.delivered();
    assert_eq!(replay.len() as u64, head);
    assert!(replay.iter().all(|d| d.2));
    // Live: a Message without a mention is filtered, one mentioning us passes, a
    // membership.changed passes by kind.
    world.owner_posts(GROUP, "plain", &[]);
    world.owner_posts(GROUP, "mention", &[COORDINATOR]);
    world.add_worker(GROUP, WORKER, 0);
    world.owner_posts(GROUP, "plain-2", &[]);
    pair.wake(&world, GROUP);
    let live = pair.delivered();
    assert_eq!(
        live,
        [
            (
                GROUP.to_owned(),
                head + 2,
                false,
                "message.posted".to_owned()
            ),
            (
                GROUP.to_owned(),
                head + 3,
                false,
                "membership.changed".to_owned()
            ),
        ]
    );
    // The durable Cursor never passed the filtered gap (§16).
    assert_eq!(pair.client.cursor(GROUP), Some(head));
    // A catch-up without the filter replays everything after the Cursor, in order: the
    // Events first seen as attention now come in order (the host processes them durably).
    pair.subscribe(&[(GROUP, head)]);
    let caught_up: Vec<(u64, bool)> = pair.delivered().iter().map(|d| (d.1, d.2)).collect();
    assert_eq!(
        caught_up,
        [
            (head + 1, true),
            (head + 2, true),
            (head + 3, true),
            (head + 4, true)
        ]
    );
    assert_eq!(pair.client.cursor(GROUP), Some(head + 4));
}

#[test]
fn announcements_conversations_and_own_actions_select() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    pair.subscribe_with(vec![SubscribeGroup {
        group_id: GROUP.into(),
        after_sequence: world.head(GROUP),
        attention: Some(Attention {
            conversation_ids: Some(vec![
                "urn:missionweaveprotocol:conversation:elsewhere".into(),
            ]),
            announcements: Some(true),
            ..Attention::default()
        }),
    }]);
    assert!(pair.delivered().is_empty());
    world.owner_posts(GROUP, "noise", &[]);
    // Our own Message passes whatever the filter (it answers our Command).
    let (bytes, _) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("own", MAIN, &[]),
    );
    pair.client.send_command(&bytes, NOW).unwrap();
    pair.pump();
    let (cancel, _) = world.command_in(GROUP, "mission.cancel", OWNER, 0, r#"{"reason": "done"}"#);
    world.perform(&cancel);
    pair.wake(&world, GROUP);
    let kinds: Vec<String> = pair.delivered().into_iter().map(|d| d.3).collect();
    assert_eq!(kinds, ["message.posted", "mission.cancelled"]);
}

/// The Missions, `WORKER` a member of `GROUP` from its start, subscribed and caught up.
fn worker_caught_up(world: &World) -> Pair {
    world.missions();
    world.add_worker(GROUP, WORKER, 0);
    let mut pair = world.pair(WORKER);
    pair.subscribe(&[(GROUP, 0)]);
    assert!(!pair.delivered().is_empty());
    pair
}

#[test]
fn a_membership_that_ends_stops_delivery_with_group_not_found() {
    let world = World::new();
    let mut pair = worker_caught_up(&world);
    world.end_membership(GROUP, WORKER);
    pair.wake(&world, GROUP);
    let events = pair.events();
    assert!(
        matches!(events.as_slice(), [SessionEvent::Error(e)] if e.code == WireCode::GroupNotFound && e.group_id.as_deref() == Some(GROUP)),
        "{events:?}"
    );
    assert!(pair.server.subscribed_groups().next().is_none());
    assert_eq!(pair.client.cursor(GROUP), None);
}

#[test]
fn acknowledgements_advance_the_durable_cursor_and_never_pass_the_head() {
    use missionweaveprotocol_gateway::server::GatewayCore;
    let world = World::new();
    world.missions();
    world.owner_posts(GROUP, "a", &[]);
    let mut pair = world.pair(COORDINATOR);
    pair.subscribe(&[(GROUP, 0)]);
    let head = world.head(GROUP);
    assert_eq!(pair.delivered().len() as u64, head);
    pair.client.acknowledge(&[(GROUP, head)], NOW).unwrap();
    pair.pump();
    assert!(pair.events().is_empty());
    let seam = missionweaveprotocol_gateway::server::CoreGateway::new(world.core.clone());
    assert_eq!(seam.acknowledged(COORDINATOR, GROUP).unwrap(), head);
    // Never backwards.
    pair.client.acknowledge(&[(GROUP, 1)], NOW).unwrap();
    pair.pump();
    assert_eq!(seam.acknowledged(COORDINATOR, GROUP).unwrap(), head);
    // Never over a gap on the client, never past the head on the server.
    assert_eq!(
        pair.client
            .acknowledge(&[(GROUP, head + 1)], NOW)
            .unwrap_err(),
        ClientError::AckBeyondCursor {
            group_id: GROUP.into(),
            cursor: head
        }
    );
    let ack = frames::ack(
        "urn:x:ack",
        &[
            frames::Acknowledgement {
                group_id: GROUP,
                sequence: head + 5,
            },
            frames::Acknowledgement {
                group_id: ABSENT_GROUP,
                sequence: 1,
            },
        ],
        NOW_TEXT,
    )
    .unwrap();
    pair.server.on_text(&ack, NOW);
    let (frames_out, close) = drain(&mut pair.server, NOW);
    assert_eq!(close, None);
    assert_eq!(code(&frames_out[0]), "PROTOCOL_VIOLATION");
    assert_eq!(text(&frames_out[0], "/error/groupId"), GROUP);
    assert_eq!(code(&frames_out[1]), "GROUP_NOT_FOUND");
    assert_eq!(text(&frames_out[1], "/error/relatedFrameId"), "urn:x:ack");
    assert_eq!(seam.acknowledged(COORDINATOR, GROUP).unwrap(), head);
    // History is never deleted by an ACK (§16).
    assert_eq!(
        world.store.replay(GROUP, 0, 100).unwrap().events.len() as u64,
        head
    );
}

#[test]
fn after_sequence_past_the_head_and_repeated_groups_are_violations() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    let head = world.head(GROUP);
    pair.server
        .on_text(&subscribe_frame("urn:x:1", GROUP, head + 1), NOW);
    let two = frames::subscribe(
        "urn:x:2",
        "urn:x:s",
        &[
            SubscribeGroup {
                group_id: GROUP.into(),
                after_sequence: 0,
                attention: None,
            },
            SubscribeGroup {
                group_id: GROUP.into(),
                after_sequence: 1,
                attention: None,
            },
        ],
    )
    .unwrap();
    pair.server.on_text(&two, NOW);
    let (frames_out, close) = drain(&mut pair.server, NOW);
    assert_eq!(close, None);
    let codes: Vec<&str> = frames_out.iter().map(code).collect();
    assert_eq!(codes, ["PROTOCOL_VIOLATION", "PROTOCOL_VIOLATION"]);
    assert!(pair.server.subscribed_groups().next().is_none());
}

#[test]
fn subscription_limits_refuse_the_whole_frame() {
    let limits = Limits {
        max_groups_per_subscribe: 2,
        max_subscriptions: 2,
        max_attention_entries: 1,
        max_acknowledgements: 1,
        ..Limits::default()
    };
    let world = World::with_limits(limits);
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    let group = |g: &str| SubscribeGroup {
        group_id: g.into(),
        after_sequence: 0,
        attention: None,
    };
    let three = frames::subscribe(
        "urn:x:1",
        "urn:x:s",
        &[group(GROUP), group(OTHER_GROUP), group(ABSENT_GROUP)],
    )
    .unwrap();
    pair.server.on_text(&three, NOW);
    let mut wide = group(GROUP);
    wide.attention = Some(Attention {
        event_kinds: Some(vec!["message.posted".into(), "mission.created".into()]),
        ..Attention::default()
    });
    pair.server.on_text(
        &frames::subscribe("urn:x:2", "urn:x:s", &[wide]).unwrap(),
        NOW,
    );
    let (frames_out, _) = drain(&mut pair.server, NOW);
    let limits: Vec<&str> = frames_out
        .iter()
        .map(|f| text(f, "/error/details/limit"))
        .collect();
    assert_eq!(
        limits,
        ["max_groups_per_subscribe", "max_attention_entries"]
    );
    // The connection's attention budget counts every subscription's filter together.
    let world_small = World::with_limits(Limits {
        max_attention_bytes: 100,
        ..Limits::default()
    });
    world_small.missions();
    let mut small = world_small.pair(COORDINATOR);
    let filtered = |g: &str| SubscribeGroup {
        group_id: g.into(),
        after_sequence: 0,
        attention: Some(Attention {
            conversation_ids: Some(vec![MAIN.into()]),
            ..Attention::default()
        }),
    };
    small.server.on_text(
        &frames::subscribe("urn:x:a", "urn:x:s", &[filtered(GROUP)]).unwrap(),
        NOW,
    );
    drain(&mut small.server, NOW);
    // Replacing the same filter fits; a second one does not.
    small.server.on_text(
        &frames::subscribe("urn:x:b", "urn:x:s", &[filtered(GROUP)]).unwrap(),
        NOW,
    );
    small.server.on_text(
        &frames::subscribe("urn:x:c", "urn:x:s", &[filtered(OTHER_GROUP)]).unwrap(),
        NOW,
    );
    let (small_out, _) = drain(&mut small.server, NOW);
    let refused: Vec<&str> = small_out
        .iter()
        .filter(|f| text(f, "/frameType") == "ERROR")
        .map(|f| text(f, "/error/details/limit"))
        .collect();
    assert_eq!(refused, ["max_attention_bytes"]);
    assert_eq!(small.server.subscribed_groups().count(), 1);
    assert!(frames_out.iter().all(|f| code(f) == "RATE_LIMITED"));
    assert!(pair.server.subscribed_groups().next().is_none());
    // Two subscriptions fit; a third Group does not (re-subscribing one does).
    pair.server.on_text(
        &frames::subscribe("urn:x:3", "urn:x:s", &[group(GROUP), group(OTHER_GROUP)]).unwrap(),
        NOW,
    );
    drain(&mut pair.server, NOW);
    assert_eq!(pair.server.subscribed_groups().count(), 2);
    pair.server.on_text(
        &frames::subscribe("urn:x:4", "urn:x:s", &[group(ABSENT_GROUP)]).unwrap(),
        NOW,
    );
    pair.server.on_text(
        &frames::subscribe("urn:x:5", "urn:x:s", &[group(GROUP)]).unwrap(),
        NOW,
    );
    let (frames_out, _) = drain(&mut pair.server, NOW);
    assert_eq!(
        text(&frames_out[0], "/error/details/limit"),
        "max_subscriptions"
    );
    assert!(
        frames_out[1..]
            .iter()
            .all(|f| text(f, "/frameType") == "EVENT")
    );
    // Cursors per ACK.
    let ack = frames::ack(
        "urn:x:6",
        &[
            frames::Acknowledgement {
                group_id: GROUP,
                sequence: 1,
            },
            frames::Acknowledgement {
                group_id: OTHER_GROUP,
                sequence: 1,
            },
        ],
        NOW_TEXT,
    )
    .unwrap();
    pair.server.on_text(&ack, NOW);
    let (frames_out, _) = drain(&mut pair.server, NOW);
    assert_eq!(
        text(&frames_out[0], "/error/details/limit"),
        "max_acknowledgements"
    );
}

#[test]
fn another_members_membership_change_is_delivered_and_delivery_goes_on() {
    let world = World::new();
    let mut pair = worker_caught_up(&world);
    // One page: a post, another Agent's Membership, a post. Delivery asks the Core about
    // the Membership Event (the Agent still sees the Group) and goes on in the same wake-up.
    world.owner_posts(GROUP, "a", &[]);
    world.add_worker(GROUP, OUTSIDER, 0);
    world.owner_posts(GROUP, "b", &[]);
    pair.wake(&world, GROUP);
    let kinds: Vec<String> = pair.delivered().into_iter().map(|d| d.3).collect();
    assert_eq!(
        kinds,
        ["message.posted", "membership.changed", "message.posted"]
    );
    assert!(pair.server.subscribed_groups().next().is_some());
}

#[test]
fn nothing_after_a_membership_end_in_the_same_page_is_delivered() {
    let world = World::new();
    let mut pair = worker_caught_up(&world);
    let before_end = world.head(GROUP) + 1;
    world.owner_posts(GROUP, "a", &[]);
    world.end_membership(GROUP, WORKER);
    world.owner_posts(GROUP, "b", &[]);
    pair.wake(&world, GROUP);
    let events = pair.events();
    let [SessionEvent::Event(first), SessionEvent::Error(error)] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(first.sequence, before_end, "the post before the end only");
    assert_eq!(error.code, WireCode::GroupNotFound);
    assert!(pair.server.subscribed_groups().next().is_none());
}
