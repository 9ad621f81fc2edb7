//! Backpressure over a real socket: a subscriber that stops reading. The server keeps its
//! memory bounded (the machine's queue never passes its bound), pauses only that Group of that
//! connection (one `BACKPRESSURE`), keeps the subscriber's other Group and every other
//! connection flowing, and never disconnects it: once it reads again it gets every Event, in
//! order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol_gateway::client::SessionEvent;
use missionweaveprotocol_gateway::server::Limits;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_stops_reading_is_paused_not_dropped() {
    // The server's liveness PINGs (every 20 s) keep every read alive: a delivery that never
    // comes would hang the test instead of failing it.
    tokio::time::timeout(std::time::Duration::from_secs(240), scenario())
        .await
        .expect("the backpressure scenario did not finish in 240 s");
}

async fn scenario() {
    let org = Org::new();
    let server = org.dev_server();
    let cert = org.path("dev-cert.pem");
    let url = server.url.clone();
    let bound = Limits::default().connection_memory_bound() as f64;

    // The slow subscriber: both Groups, then it stops reading.
    let mut slow = Agent::connect_slow(&url, Some(&cert), &org, WORKER).await;
    slow.subscribe(&[(GROUP, 0), (OTHER_GROUP, 0)]).await;
    slow.wait_event(GROUP, 1).await;
    // A second connection that keeps reading.
    let mut reader = Agent::connect(&url, Some(&cert), &org, WORKER).await;
    reader.subscribe(&[(GROUP, 0), (OTHER_GROUP, 0)]).await;
    let mut planner = Agent::connect(&url, Some(&cert), &org, COORDINATOR).await;

    let text = "x".repeat(30_000);
    let mut paused = false;
    let mut last = 0;
    let mut max_queued = 0.0f64;
    let rss_before = rss_kib(server.pid());
    for i in 0..600 {
        let (sequence, _) = planner
            .post_accepted(&org, GROUP, &format!("bp-{i}"), &text)
            .await;
        last = sequence;
        // The reading connection keeps up.
        reader.wait_event(GROUP, sequence).await;
        if i % 10 == 9 {
            let (_, body) = http_get(&url, Some(&cert), "/metrics").await;
            max_queued = max_queued.max(metric(&body, "mwp_max_connection_queued_bytes").unwrap());
            if metric(&body, "mwp_paused_groups").unwrap() >= 1.0 {
                paused = true;
                // The other Group of the slow subscriber is not paused by this one.
                assert_eq!(metric(&body, "mwp_paused_groups"), Some(1.0), "{body}");
                break;
            }
        }
    }
    assert!(paused, "the Group was never paused");
    // More Events while paused, in both Groups: the server holds no more for the slow one.
    for i in 0..20 {
        let (sequence, _) = planner
            .post_accepted(&org, GROUP, &format!("bp-more-{i}"), &text)
            .await;
        last = sequence;
    }
    let (other, _) = planner
        .post_accepted(&org, OTHER_GROUP, "bp-other", "the other Group")
        .await;
    // Both Groups' last Events, in whichever order they come (waiting for one Group, then
    // the other, would miss an Event of the second consumed by the first wait).
    reader
        .wait_events(&[(OTHER_GROUP, other), (GROUP, last)])
        .await;
    let (_, body) = http_get(&url, Some(&cert), "/metrics").await;
    max_queued = max_queued.max(metric(&body, "mwp_max_connection_queued_bytes").unwrap());
    assert!(max_queued <= bound, "{max_queued} > {bound}");
    let rss_after = rss_kib(server.pid());
    assert!(
        rss_after < rss_before + 256 * 1024,
        "the server grew from {rss_before} KiB to {rss_after} KiB"
    );
    assert_eq!(metric(&body, "mwp_connections_open"), Some(3.0), "{body}");

    // The slow subscriber reads again: one BACKPRESSURE for GROUP, then everything in order.
    let mut sequences = Vec::new();
    let mut backpressure = 0;
    let mut other_seen = false;
    loop {
        match slow.next_event().await {
            SessionEvent::Event(event) if event.in_order => {
                if event.group_id.as_deref() == Some(GROUP) {
                    sequences.push(event.sequence);
                    if event.sequence >= last && other_seen {
                        break;
                    }
                } else if event.sequence >= other {
                    other_seen = true;
                    if sequences.last().copied().unwrap_or(0) >= last {
                        break;
                    }
                }
            }
            SessionEvent::Error(error) => {
                assert_eq!(error.code, WireCode::Backpressure, "{error:?}");
                assert_eq!(error.group_id.as_deref(), Some(GROUP));
                backpressure += 1;
            }
            _ => {}
        }
    }
    assert!(backpressure >= 1);
    let expected: Vec<u64> = (2..=last).collect();
    assert_eq!(sequences, expected, "every Event once, in order");
    assert!(slow.closed.is_none(), "never disconnected");
}
