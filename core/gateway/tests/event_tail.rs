//! The gateway's Event tail (`server::EventTail`, `docs/network.md` "Delivery from the Event
//! tail"): pages from memory only when the tail holds every Event after the cursor, gaps and
//! archivals send readers back to the store, and the memory held stays within the stated bound
//! (bodies ≤ `max_bytes`, measured with the counting allocator).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_engine::store::EventRecord;
use missionweaveprotocol_gateway::server::{EventTail, TAIL_EVENTS_PER_GROUP};
use mwp_alloc_count::{Counting, live_bytes};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const G: &str = "urn:missionweaveprotocol:group:g";

fn record(sequence: u64, size: usize) -> EventRecord {
    let body = format!(
        "{{\"kind\":\"x\",\"sequence\":{sequence},\"pad\":\"{}\"}}",
        "p".repeat(size)
    );
    EventRecord::new(
        sequence,
        &format!("urn:missionweaveprotocol:event:e{sequence}"),
        body.into_bytes(),
    )
}

fn run(from: u64, to: u64) -> Vec<EventRecord> {
    (from..=to).map(|s| record(s, 10)).collect()
}

fn sequences(tail: &EventTail, after: u64, limit: usize) -> Option<Vec<u64>> {
    tail.page(G, after, limit)
        .map(|p| p.events.iter().map(|r| r.sequence).collect())
}

#[test]
fn a_cursor_inside_the_tail_reads_every_following_event_in_order() {
    let tail = EventTail::default();
    tail.extend(G, &run(5, 9));
    assert_eq!(sequences(&tail, 4, 100), Some(vec![5, 6, 7, 8, 9]));
    assert_eq!(sequences(&tail, 6, 100), Some(vec![7, 8, 9]));
    let page = tail.page(G, 5, 2).unwrap();
    assert_eq!(page.events.len(), 2);
    assert_eq!(page.continuation, Some(7));
    assert_eq!(page.last_sequence, 9);
    assert_eq!(tail.page(G, 6, 100).unwrap().continuation, None);
}

#[test]
fn a_cursor_outside_the_tail_goes_to_the_store() {
    let tail = EventTail::default();
    assert_eq!(sequences(&tail, 0, 10), None, "nothing held");
    tail.extend(G, &run(5, 9));
    assert_eq!(
        sequences(&tail, 3, 10),
        None,
        "Event 4 is not held: it may exist"
    );
    assert_eq!(
        sequences(&tail, 9, 10),
        None,
        "at the tail's end: the store may be further"
    );
    assert_eq!(sequences(&tail, 20, 10), None);
    assert_eq!(sequences(&tail, 4, 0), None);
    assert_eq!(sequences(&tail, u64::MAX, 1), None);
    assert_eq!(
        tail.page("urn:missionweaveprotocol:group:other", 4, 10)
            .map(|p| p.events.len()),
        None
    );
}

#[test]
fn the_tail_stays_one_contiguous_run() {
    let tail = EventTail::default();
    tail.extend(G, &run(1, 3));
    // Overlap: only the new Events are added.
    tail.extend(G, &run(2, 5));
    assert_eq!(sequences(&tail, 0, 100), Some(vec![1, 2, 3, 4, 5]));
    // Older Events than the tail's end are already held or too old: nothing changes.
    tail.extend(G, &run(1, 2));
    assert_eq!(sequences(&tail, 0, 100), Some(vec![1, 2, 3, 4, 5]));
    // A gap (6 missing): the run starts again at 7, so no page skips Event 6.
    tail.extend(G, &run(7, 8));
    assert_eq!(sequences(&tail, 0, 100), None);
    assert_eq!(sequences(&tail, 5, 100), None);
    assert_eq!(sequences(&tail, 6, 100), Some(vec![7, 8]));
    // A run with a hole inside is kept up to the hole.
    tail.extend(G, &[record(9, 10), record(11, 10)]);
    assert_eq!(sequences(&tail, 6, 100), Some(vec![7, 8, 9]));
}

#[test]
fn a_group_archival_sends_every_reader_back_to_the_store() {
    let tail = EventTail::default();
    tail.extend(G, &run(1, 4));
    let archived = EventRecord::new(
        5,
        "urn:missionweaveprotocol:event:archived",
        br#"{"groupId":"urn:missionweaveprotocol:group:g","kind":"group.archived","sequence":5}"#
            .to_vec(),
    );
    tail.extend(G, &[archived]);
    // A cursor before the online log must reach the Core (§16 CURSOR_TOO_OLD).
    assert_eq!(sequences(&tail, 0, 100), None);
    assert_eq!(tail.len(), 0);
    assert_eq!(tail.bytes(), 0);
}

#[test]
fn each_group_keeps_its_last_events_only() {
    let tail = EventTail::default();
    let last = TAIL_EVENTS_PER_GROUP as u64 * 3;
    for s in 1..=last {
        tail.extend(G, &[record(s, 10)]);
    }
    assert_eq!(tail.len(), TAIL_EVENTS_PER_GROUP);
    let first_held = last - TAIL_EVENTS_PER_GROUP as u64 + 1;
    assert_eq!(sequences(&tail, first_held - 2, 1), None);
    assert_eq!(sequences(&tail, first_held - 1, 1), Some(vec![first_held]));
}

#[test]
fn the_bodies_held_stay_within_the_byte_bound_and_the_heap_with_them() {
    const MAX: usize = 256 * 1024;
    const SIZE: usize = 1_000;
    let tail = EventTail::new(MAX);
    let before = live_bytes();
    for g in 0..400u64 {
        let group = format!("urn:missionweaveprotocol:group:g{g}");
        let records: Vec<EventRecord> = (1..=20).map(|s| record(s, SIZE)).collect();
        tail.extend(&group, &records);
        assert!(tail.bytes() <= MAX, "{} > {MAX}", tail.bytes());
        drop(records);
    }
    let held = live_bytes().saturating_sub(before);
    let events = tail.len();
    assert!(events > 0);
    // Bodies ≤ MAX; per Event the record (sequence, ID) and its share of the maps; per Group
    // its key and tail (at most MAX / SIZE Events means at most that many Groups).
    let bound = MAX + events * 160 + (MAX / SIZE) * 256 + 64 * 1024;
    assert!(
        held <= bound,
        "held {held} > bound {bound} ({events} Events)"
    );
    // The most recently extended Groups survive: the last one reads from memory.
    assert!(
        tail.page("urn:missionweaveprotocol:group:g399", 0, 100)
            .is_some()
    );
    assert!(
        tail.page("urn:missionweaveprotocol:group:g0", 0, 100)
            .is_none()
    );
    // A bound of 0 holds nothing.
    let none = EventTail::new(0);
    none.extend(G, &run(1, 3));
    assert!(none.is_empty());
    assert_eq!(sequences(&none, 0, 10), None);
}
