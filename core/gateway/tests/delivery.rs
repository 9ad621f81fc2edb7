//! Pull-based delivery and per-Group backpressure (§16, §17.3, §8): a subscriber that stops
//! draining gets its busy Group paused with exactly one BACKPRESSURE (`groupId`,
//! `retryAfterMs`), its other Groups still delivered, the queue bounded, no close, and the
//! Group resumes from its cursor once drained; a catch-up that fills its share is not
//! backpressure; byte shares; a missed wake-up is caught up by the periodic head poll.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_gateway::client::SessionEvent;
use missionweaveprotocol_gateway::server::{Limits, Output};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn small() -> Limits {
    Limits {
        group_share_frames: 8,
        max_queue_frames: 32,
        page_size: 4,
        backpressure_retry_after_ms: 250,
        ..Limits::default()
    }
}

/// Everything queued, each frame parsed and also handed to the client (in order).
fn take_all(pair: &mut Pair) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(output) = pair.server.poll_output(pair.now) {
        let Output::Frame(bytes) = output else {
            panic!("closed")
        };
        out.push(
            missionweaveprotocol::wire::parse_frame(&bytes)
                .unwrap()
                .value,
        );
        pair.client.on_text(&bytes, pair.now).unwrap();
    }
    out
}

fn event_groups(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .filter(|f| text(f, "/frameType") == "EVENT")
        .map(|f| text(f, "/event/groupId").to_owned())
        .collect()
}

#[test]
fn a_subscriber_that_stops_draining_gets_one_backpressure_per_pause() {
    let world = World::with_limits(small());
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    let start_group = world.head(GROUP);
    let start_other = world.head(OTHER_GROUP);
    pair.subscribe(&[(GROUP, start_group), (OTHER_GROUP, start_other)]);
    pair.events();
    assert_eq!(pair.server.subscription_count(), 2);
    assert_eq!(pair.server.paused_groups(), 0);
    // The host stops taking frames; the busy Group keeps committing and waking it.
    for i in 0..20 {
        world.owner_posts(GROUP, &format!("busy-{i}"), &[]);
        pair.server
            .on_group_moved(GROUP, Some(world.head(GROUP)), NOW);
        assert!(
            pair.server.queued_frames() <= 8 + 1,
            "bounded: the share plus one notice"
        );
    }
    assert!(pair.server.is_paused(GROUP));
    assert!(!pair.server.is_paused(OTHER_GROUP));
    assert_eq!(pair.server.paused_groups(), 1, "the busy Group only");
    // The quiet Group still flows into the queue.
    world.owner_posts(OTHER_GROUP, "quiet", &[]);
    pair.server
        .on_group_moved(OTHER_GROUP, Some(world.head(OTHER_GROUP)), NOW);
    assert_eq!(pair.server.queued_frames(), 8 + 1 + 1);
    assert!(pair.server_closed.is_none());
    // Drain: 8 busy Events, one BACKPRESSURE, the quiet Event; then the busy Group resumes
    // (below its low-water mark) and the rest follows in order.
    let frames = take_all(&mut pair);
    let errors: Vec<&Value> = frames
        .iter()
        .filter(|f| text(f, "/frameType") == "ERROR")
        .collect();
    assert_eq!(errors.len(), 1, "exactly one BACKPRESSURE for the pause");
    assert_eq!(code(errors[0]), "BACKPRESSURE");
    assert_eq!(text(errors[0], "/error/groupId"), GROUP);
    assert_eq!(
        errors[0]
            .pointer("/error/retryAfterMs")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64()),
        Some(250)
    );
    assert_eq!(
        errors[0].pointer("/error/retryable"),
        Some(&Value::Bool(true))
    );
    let groups = event_groups(&frames);
    assert_eq!(groups.iter().filter(|g| *g == GROUP).count(), 20);
    assert_eq!(groups.iter().filter(|g| *g == OTHER_GROUP).count(), 1);
    assert!(
        groups[..9].contains(&OTHER_GROUP.to_owned()),
        "the quiet Group's Event did not wait behind the busy Group's backlog"
    );
    assert!(!pair.server.is_paused(GROUP));
    assert_eq!(pair.server.paused_groups(), 0);
    // The client got every Event of both Groups in order.
    assert_eq!(pair.client.cursor(GROUP), Some(world.head(GROUP)));
    assert_eq!(
        pair.client.cursor(OTHER_GROUP),
        Some(world.head(OTHER_GROUP))
    );
    let backpressure = pair
        .events()
        .into_iter()
        .filter(|e| matches!(e, SessionEvent::Error(error) if error.code == missionweaveprotocol::WireCode::Backpressure))
        .count();
    assert_eq!(backpressure, 1);
    // A second pause is a second BACKPRESSURE.
    for i in 0..12 {
        world.owner_posts(GROUP, &format!("again-{i}"), &[]);
        pair.server
            .on_group_moved(GROUP, Some(world.head(GROUP)), NOW);
    }
    let frames = take_all(&mut pair);
    assert_eq!(
        frames
            .iter()
            .filter(|f| text(f, "/frameType") == "ERROR")
            .count(),
        1
    );
    assert_eq!(pair.client.cursor(GROUP), Some(world.head(GROUP)));
}

#[test]
fn a_catch_up_that_fills_its_share_is_not_backpressure() {
    let world = World::with_limits(small());
    world.missions();
    for i in 0..30 {
        world.owner_posts(GROUP, &format!("old-{i}"), &[]);
    }
    let mut pair = world.pair(COORDINATOR);
    pair.client
        .subscribe(
            &[missionweaveprotocol_gateway::frames::SubscribeGroup {
                group_id: GROUP.into(),
                after_sequence: 0,
                attention: None,
            }],
            NOW,
        )
        .unwrap();
    let subscribe = pair.client.poll_output().unwrap();
    pair.server.on_text(&subscribe, NOW);
    assert_eq!(
        pair.server.queued_frames(),
        8,
        "the share, read in pages of 4"
    );
    assert!(!pair.server.is_paused(GROUP));
    let frames = take_all(&mut pair);
    assert!(frames.iter().all(|f| text(f, "/frameType") == "EVENT"));
    assert_eq!(frames.len() as u64, world.head(GROUP));
    assert_eq!(pair.client.cursor(GROUP), Some(world.head(GROUP)));
}

#[test]
fn byte_shares_bound_the_queue_but_one_large_event_still_passes() {
    let world = World::with_limits(Limits {
        group_share_bytes: 1,
        max_queue_bytes: 1,
        ..small()
    });
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    let head = world.head(GROUP);
    pair.subscribe(&[(GROUP, head)]);
    for i in 0..3 {
        world.owner_posts(GROUP, &format!("m{i}"), &[]);
    }
    pair.server
        .on_group_moved(GROUP, Some(world.head(GROUP)), NOW);
    assert_eq!(
        pair.server.queued_frames(),
        1,
        "one frame beyond the byte bound, no more"
    );
    let frames = take_all(&mut pair);
    assert_eq!(event_groups(&frames).len(), 3);
    assert_eq!(pair.client.cursor(GROUP), Some(world.head(GROUP)));
}

#[test]
fn a_missed_wake_up_is_caught_up_by_the_head_poll() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    pair.subscribe(&[(GROUP, world.head(GROUP))]);
    pair.events();
    world.owner_posts(GROUP, "unannounced", &[]);
    pair.server.on_tick(UnixMillis(NOW.0 + 4_999));
    assert_eq!(pair.server.queued_frames(), 0);
    pair.server.on_tick(UnixMillis(NOW.0 + 5_000));
    assert_eq!(pair.server.queued_frames(), 1);
    // A wake-up without a sequence asks the Core for the head.
    world.owner_posts(GROUP, "unnumbered", &[]);
    pair.server.on_group_moved(GROUP, None, NOW);
    pair.pump();
    assert_eq!(pair.client.cursor(GROUP), Some(world.head(GROUP)));
    // Wake-ups for Groups not subscribed change nothing.
    pair.server.on_group_moved(OTHER_GROUP, Some(99), NOW);
    assert_eq!(pair.server.queued_frames(), 0);
}

#[test]
fn every_subscriber_is_delivered_each_in_its_own_order() {
    let world = World::new();
    world.missions();
    world.add_worker(GROUP, WORKER, 0);
    let mut coordinator = world.pair(COORDINATOR);
    let mut worker = world.pair(WORKER);
    coordinator.subscribe(&[(GROUP, 0)]);
    worker.subscribe(&[(GROUP, 0)]);
    coordinator.events();
    worker.events();
    // The worker posts; the host wakes the other subscribers from the notification.
    let (bytes, _) = worker.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("w", MAIN, &[]),
    );
    worker.client.send_command(&bytes, NOW).unwrap();
    worker.pump();
    let moved = worker.server.poll_notification().unwrap();
    for id in world
        .gateway
        .hub()
        .wake_list(&moved.group_id, worker.server.id())
    {
        assert_eq!(id, coordinator.server.id());
        coordinator
            .server
            .on_group_moved(&moved.group_id, Some(moved.sequence), NOW);
    }
    coordinator.pump();
    let seen = coordinator.delivered();
    assert_eq!(
        seen,
        [(
            GROUP.to_owned(),
            moved.sequence,
            true,
            "message.posted".to_owned()
        )]
    );
    assert_eq!(world.gateway.hub().group_count(), 1);
    drop(worker);
    drop(coordinator);
    assert_eq!(world.gateway.hub().group_count(), 0);
    assert_eq!(world.gateway.hub().connection_count(), 0);
}

/// `Connection::in_memory` (the server's event-loop path): live Events the gateway's Event tail
/// holds are delivered without the store; a Group whose next Event is not held, or whose
/// Agent view must be asked again, waits for `finish_io` — and nothing is lost or reordered.
#[test]
fn in_memory_delivery_serves_the_tail_and_leaves_store_reads_to_finish_io() {
    let world = World::new();
    world.missions();
    world.add_worker(GROUP, WORKER, 0);
    let mut first = world.pair(COORDINATOR);
    first.subscribe(&[(GROUP, 0)]);
    let mut second = world.pair(WORKER);
    second.subscribe(&[(GROUP, 0)]);
    let head = world.head(GROUP);
    assert_eq!(first.delivered().len() as u64, head);
    assert_eq!(second.delivered().len() as u64, head);

    // Committed through the Core directly: the tail has not seen it yet.
    world.owner_posts(GROUP, "a", &[]);
    let now = first.now;
    let ((), served) = first
        .server
        .in_memory(|c| c.on_group_moved(GROUP, Some(head + 1), now));
    assert!(!served && first.server.needs_io());
    first.pump();
    assert!(first.delivered().is_empty(), "nothing skipped ahead");
    first.server.finish_io(now);
    assert!(!first.server.needs_io());
    first.pump();
    let got: Vec<u64> = first.delivered().iter().map(|d| d.1).collect();
    assert_eq!(got, [head + 1]);

    // The first reader's store read filled the tail: the second is served from memory.
    let ((), served) = second
        .server
        .in_memory(|c| c.on_group_moved(GROUP, Some(head + 1), now));
    assert!(served && !second.server.needs_io());
    second.pump();
    let got: Vec<u64> = second.delivered().iter().map(|d| d.1).collect();
    assert_eq!(got, [head + 1]);

    // A Membership Event: the view is asked again, which needs the store.
    world.end_membership(GROUP, WORKER);
    world.owner_posts(GROUP, "b", &[]);
    first.wake(&world, GROUP); // fills the tail with both
    assert_eq!(first.delivered().len(), 2);
    let head = world.head(GROUP);
    let ((), served) = second
        .server
        .in_memory(|c| c.on_group_moved(GROUP, Some(head), now));
    assert!(
        !served,
        "the Membership Event needs the Core's answer first"
    );
    second.pump();
    assert!(
        second.events().is_empty(),
        "neither Event before the answer"
    );
    second.server.finish_io(now);
    second.pump();
    let events = second.events();
    assert!(
        matches!(events.as_slice(), [SessionEvent::Error(e)] if e.code == missionweaveprotocol::WireCode::GroupNotFound),
        "{events:?}"
    );
}

/// The periodic head poll in memory (the server's ticks run on the event loop): the first
/// connection whose poll is due reads the head from the store (`finish_io`) and records it; a
/// second connection polling within half an interval is answered by that read without the
/// store; once the read is older than that, a poll goes to the store again.
#[test]
fn one_head_poll_answers_every_connection_for_half_an_interval() {
    let world = World::new();
    world.missions();
    world.add_worker(GROUP, WORKER, 0);
    let mut first = world.pair(COORDINATOR);
    let mut second = world.pair(WORKER);
    let head = world.head(GROUP);
    first.subscribe(&[(GROUP, head)]);
    second.subscribe(&[(GROUP, head)]);
    first.events();
    second.events();
    world.owner_posts(GROUP, "unannounced", &[]);
    let due = UnixMillis(NOW.0 + 5_000);

    let ((), served) = first.server.in_memory(|c| c.on_tick(due));
    assert!(!served, "nobody read the head yet: the store is needed");
    first.server.finish_io(due);
    first.pump();
    let got: Vec<u64> = first.delivered().iter().map(|d| d.1).collect();
    assert_eq!(got, [head + 1]);

    let ((), served) = second
        .server
        .in_memory(|c| c.on_tick(UnixMillis(due.0 + 2_000)));
    assert!(
        served && !second.server.needs_io(),
        "the first read answers"
    );
    second.pump();
    let got: Vec<u64> = second.delivered().iter().map(|d| d.1).collect();
    assert_eq!(got, [head + 1]);

    // Half an interval later the recorded read is too old: the next due poll reads again.
    world.owner_posts(GROUP, "unannounced-again", &[]);
    let ((), served) = second
        .server
        .in_memory(|c| c.on_tick(UnixMillis(due.0 + 7_000)));
    assert!(!served && second.server.needs_io());
    second.server.finish_io(UnixMillis(due.0 + 7_000));
    second.pump();
    let got: Vec<u64> = second.delivered().iter().map(|d| d.1).collect();
    assert_eq!(got, [head + 2]);
}
