//! The memory bound of one connection (`Limits::connection_memory_bound`, `docs/network.md`
//! "Bounds"), measured with the counting allocator (`mwp-alloc-count`, as
//! `core/protocol/tests/json_memory.rs`): the heap a connection holds is what dropping it gives
//! back. Measured at its fullest — every subscription with a maximal attention filter, the
//! subscription queue full, the reply queue at its bound, a Presence Record kept — it stays
//! within the per-part accounting of the bound and the bound itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_gateway::frames::{self, Attention, SubscribeGroup};
use missionweaveprotocol_gateway::server::{
    CONNECTION_BASE_BYTES, Connection, Limits, QUEUED_FRAME_OVERHEAD_BYTES,
    SUBSCRIPTION_OVERHEAD_BYTES, attention_cost,
};
use mwp_alloc_count::{Counting, live_bytes};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What dropping `connection` gives back.
fn retained(connection: Connection) -> usize {
    let before = live_bytes();
    drop(connection);
    before.saturating_sub(live_bytes())
}

fn group(i: usize) -> String {
    format!("urn:missionweaveprotocol:group:g{i}")
}

fn long_id(i: usize, j: usize) -> String {
    let head = format!("urn:missionweaveprotocol:conversation:{i}-{j}-");
    format!("{head}{}", "x".repeat(512 - head.len()))
}

#[test]
fn a_full_connection_stays_within_its_bound() {
    const GROUPS: usize = 24;
    let limits = Limits {
        max_subscriptions: GROUPS,
        max_groups_per_subscribe: GROUPS,
        max_attention_entries: 8,
        group_share_frames: 4,
        max_queue_frames: 64,
        max_queue_bytes: 1 << 20,
        group_share_bytes: 256 << 10,
        max_reply_frames: 32,
        max_reply_bytes: 1 << 20,
        max_presence_bytes: 4 << 10,
        ..Limits::default()
    };
    let world = World::with_limits(limits);
    for i in 0..GROUPS {
        let mission = format!("urn:missionweaveprotocol:mission:m{i}");
        let main = format!("urn:missionweaveprotocol:conversation:main{i}");
        let (bytes, _) = world.command_in(
            &group(i),
            "mission.create",
            OWNER,
            0,
            &World::create_payload(&mission, &main),
        );
        world.perform(&bytes);
        for k in 0..6 {
            let (bytes, _) = world.command_in(
                &group(i),
                "message.post",
                OWNER,
                0,
                &World::post_payload(&format!("{i}-{k}"), &main, &[]),
            );
            world.perform(&bytes);
        }
    }

    // An authenticated connection with nothing else: the base.
    let pair = world.pair(COORDINATOR);
    let Pair { server, .. } = pair;
    let base = retained(server);
    assert!(
        base <= CONNECTION_BASE_BYTES,
        "base {base} > {CONNECTION_BASE_BYTES}"
    );

    // At its fullest. The host never drains.
    let mut pair = world.pair(COORDINATOR);
    let groups: Vec<SubscribeGroup> = (0..GROUPS)
        .map(|i| SubscribeGroup {
            group_id: group(i),
            after_sequence: 0,
            attention: Some(Attention {
                conversation_ids: Some((0..8).map(|j| long_id(i, j)).collect()),
                ..Attention::default()
            }),
        })
        .collect();
    let filter_bytes: usize = groups
        .iter()
        .map(|g| attention_cost(g.attention.as_ref().unwrap()))
        .sum();
    let id_bytes: usize = groups.iter().map(|g| g.group_id.len()).sum();
    pair.client.subscribe(&groups, NOW).unwrap();
    let subscribe = pair.client.poll_output().unwrap();
    pair.server.on_text(&subscribe, NOW);
    assert_eq!(pair.server.subscribed_groups().count(), GROUPS);
    assert_eq!(
        pair.server.queued_frames(),
        64,
        "the subscription queue is full"
    );
    // Replies up to their bound, and a Presence Record.
    let presence = missionweaveprotocol::json::parse(
        format!(
            r#"{{"agentId": "{COORDINATOR}", "sessionEpoch": 2, "status": "online",
            "capacity": {{"maxSlots": 2, "activeSlots": 0, "availableSlots": 2, "queuedItems": 0}},
            "capabilityAvailability": [], "lastHeartbeat": "{NOW_TEXT}",
            "expiresAt": "2026-07-15T09:31:00Z"}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let ping = frames::ping("urn:x:p", "bm9uY2U", None, NOW_TEXT, Some(&presence)).unwrap();
    while pair.server.wants_input() {
        pair.server.on_text(&ping, NOW);
    }
    assert!(pair.server.presence().is_some());
    let frames_queued = pair.server.queued_frames();
    let bytes_queued = pair.server.queued_bytes();
    let presence_bytes = missionweaveprotocol::json::canonical_bytes(&presence)
        .unwrap()
        .len();
    let Pair { server, .. } = pair;
    let held = retained(server);

    // The per-part accounting the bound is made of.
    let accounted = CONNECTION_BASE_BYTES
        + presence_bytes
        + GROUPS * SUBSCRIPTION_OVERHEAD_BYTES
        + id_bytes
        + filter_bytes
        + bytes_queued
        + frames_queued * QUEUED_FRAME_OVERHEAD_BYTES;
    let bound = limits.connection_memory_bound();
    println!(
        "connection memory: base {base} B; full {held} B (accounted {accounted} B, bound {bound} B); \
         {GROUPS} subscriptions, {frames_queued} frames / {bytes_queued} B queued"
    );
    assert!(held <= accounted, "held {held} > accounted {accounted}");
    assert!(accounted <= bound, "accounted {accounted} > bound {bound}");
    // The measurement is not trivially small: the queue and the filters are really held.
    assert!(held >= bytes_queued + id_bytes, "held {held}");
    let _ = Value::Null;
}

#[test]
fn the_default_bound() {
    // What `docs/network.md` states for the default limits.
    let bound = Limits::default().connection_memory_bound();
    println!("default connection memory bound: {bound} B");
    assert!(bound < 16 << 20, "{bound}");
}
