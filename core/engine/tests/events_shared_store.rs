//! Several engines share one store through the blanket `Store` impls for `&T` and `Arc<T>`:
//! their Events land in one Group log with contiguous sequences (§15.2), and every Event passes
//! the six-stage verifier.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use std::sync::Arc;

use fixture::*;
use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::store::{EventRecord, InMemoryStore, Store};

fn engine_over<S: Store>(
    f: &Fixture,
    store: S,
    prefix: &str,
) -> Engine<S, impl Signer, SequentialEventIds> {
    Engine::new(
        store,
        EventIssuer::new(authority(), f.authority_key.clone()),
        SequentialEventIds::new(format!("urn:missionweaveprotocol:event:{prefix}-")),
    )
}

fn all_events<S: Store>(store: &S) -> Vec<EventRecord> {
    store.replay(GROUP, 0, 100).unwrap().events
}

#[test]
fn engines_over_references_share_one_log() {
    let f = fixture();
    let store = InMemoryStore::new();
    let a = engine_over(&f, &store, "a");
    let b = engine_over(&f, &store, "b");
    f.open_sessions(&a);
    let created = a.perform(&f.create(), NOW).unwrap();
    f.checked(&created);
    // The second engine sees the Mission the first created and appends after it.
    assert_eq!(b.mission(MISSION).unwrap().unwrap().revision(), 1);
    let submitted = b.perform(&f.submit(1), NOW).unwrap();
    f.checked(&submitted);
    let log = all_events(&store);
    assert_eq!(
        log.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert!(log[0].event_id.contains(":a-"));
    assert!(log[1].event_id.contains(":b-"));
    for record in &log {
        f.check_event(record);
    }
    // A state the first engine read before is stale for both: the Mission is awaiting approval.
    let again = a.perform(&f.submit(1), NOW).unwrap_err();
    assert_eq!(again.wire_code(), WireCode::InvalidStateTransition);
}

#[test]
fn engines_over_arcs_share_one_log_and_dedup() {
    let f = fixture();
    let store = Arc::new(InMemoryStore::new());
    let a = engine_over(&f, Arc::clone(&store), "a");
    let b = engine_over(&f, Arc::clone(&store), "b");
    f.open_sessions(&a);
    let create = f.create();
    f.checked(&a.perform(&create, NOW).unwrap());
    // The same signed Command through the other engine is a duplicate: the original Event.
    let again = b.perform(&create, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events.len(), 1);
    assert!(again.events[0].event_id.contains(":a-"));
    assert_eq!(store.head(GROUP).unwrap().last_sequence(), 1);
    // A shared `dyn Store` works as well.
    let dynamic: Arc<dyn Store + Send + Sync> = store;
    let c = engine_over(&f, dynamic, "c");
    f.checked(&c.perform(&f.submit(1), NOW).unwrap());
    assert_eq!(c.store().head(GROUP).unwrap().last_sequence(), 2);
}
