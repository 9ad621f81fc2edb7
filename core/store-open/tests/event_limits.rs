//! Every Event the authority appends verifies under the limits every verifier uses (§6.4 stage
//! 1, `DOCUMENT`): a Command whose Event would pass them is refused before anything is appended
//! (`PROTOCOL_VIOLATION`, `limit-exceeded`, naming the limit), and replay never refuses an Event
//! the engine wrote. Checked at the exact boundary — an Event of limit − 1, limit and limit + 1
//! bytes — on the in-memory store, a SQLite file and a PostgreSQL database.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../engine/tests/engine_fixture.rs"]
mod fixture;
mod pg;

use std::sync::Arc;

use fixture::*;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Limit, ParseLimits};
use missionweaveprotocol::{
    DescribeError, FieldValue, SignedDocumentCodec, SignedDocumentKind, WireCode,
};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{InMemoryStore, Store};
use missionweaveprotocol_store_open::{SharedStore, StoreUrl, open};

type SharedEngine = Engine<SharedStore, SigningKey, SequentialEventIds>;

const LIMIT: usize = ParseLimits::DOCUMENT.max_document_bytes;
/// Characters of one text part (`message.schema.json` `maxLength`).
const PART: usize = 100_000;
/// Full parts before the last, variable one: enough to bring the Event near the limit.
const FULL_PARTS: usize = 41;

/// An engine over `store` where the Mission exists and both Agents opened their sessions.
fn ready(f: &Fixture, store: SharedStore) -> SharedEngine {
    let engine = Engine::new(
        store,
        EventIssuer::new(authority(), f.authority_key.clone()),
        SequentialEventIds::new("urn:missionweaveprotocol:event:limits-"),
    );
    f.open_sessions(&engine);
    engine.perform(&f.create(), NOW).unwrap();
    engine
}

/// A `message.post` by the MissionOwner whose content is `FULL_PARTS` parts of `PART`
/// characters and one of `last`.
fn post(f: &Fixture, last: usize) -> VerifiedCommand {
    let part = |n: usize| format!(r#"{{"type": "text", "text": "{}"}}"#, "a".repeat(n));
    let mut parts: Vec<String> = (0..FULL_PARTS).map(|_| part(PART)).collect();
    parts.push(part(last));
    f.command(
        "message.post",
        OWNER,
        "",
        &format!(
            r#"{{"messageId": "urn:missionweaveprotocol:message:big", "conversationId": "urn:missionweaveprotocol:conversation:finance-main", "content": [{}]}}"#,
            parts.join(",")
        ),
    )
}

/// The length of the last part that makes the Event exactly `target` bytes: the Event grows by
/// one byte per character, so one probe on a scratch engine (same history, same Event IDs)
/// fixes the offset.
fn last_part_for(f: &Fixture, target: usize) -> usize {
    const PROBE: usize = 1_000;
    let scratch = ready(f, Arc::new(InMemoryStore::new()));
    let size = scratch.perform(&post(f, PROBE), NOW).unwrap().events[0]
        .body
        .len();
    PROBE + target - size
}

fn group_log(engine: &SharedEngine) -> u64 {
    engine.store().head(GROUP).unwrap().last_sequence()
}

/// limit − 1 and limit are appended and replay serves them verified; limit + 1 is refused with
/// the verifier's verdict and nothing is appended.
fn boundary(make: &dyn Fn() -> SharedStore) {
    let f = fixture();
    for (target, accepted) in [(LIMIT - 1, true), (LIMIT, true), (LIMIT + 1, false)] {
        let last = last_part_for(&f, target);
        let engine = ready(&f, make());
        let before = group_log(&engine);
        let command = post(&f, last);
        match engine.perform(&command, NOW) {
            Ok(performed) => {
                assert!(accepted, "an Event of {target} bytes was appended");
                assert_eq!(performed.events[0].body.len(), target);
            }
            Err(e) => {
                assert!(!accepted, "an Event of {target} bytes was refused: {e}");
                assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
                assert_eq!(e.reason(), "limit-exceeded");
                let fields = e.fields();
                assert!(
                    matches!(fields.get("limit"), Some(FieldValue::Text(t)) if t == Limit::DocumentBytes.as_str()),
                    "the refusal names the limit: {fields:?}"
                );
                assert!(
                    matches!(fields.get("maximum"), Some(FieldValue::Integer(n)) if *n == LIMIT as i64)
                );
                assert_eq!(group_log(&engine), before, "nothing appended");
                // The same Command again: still refused, still nothing (no receipt was kept).
                assert!(engine.perform(&command, NOW).is_err());
                assert_eq!(group_log(&engine), before);
            }
        }
        // Replay serves every Event, each verifying under the receivers' limits.
        let page = engine.replay(GROUP, 0, 100).unwrap();
        assert_eq!(page.events.len() as u64, group_log(&engine));
        for event in &page.events {
            SignedDocumentCodec::new()
                .verify(SignedDocumentKind::Event, &event.body, &f.registry)
                .unwrap_or_else(|e| panic!("a served Event fails verification: {e}"));
        }
    }
}

#[test]
fn the_event_limit_holds_in_memory() {
    boundary(&|| Arc::new(InMemoryStore::new()));
}

#[test]
fn the_event_limit_holds_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let counter = std::sync::atomic::AtomicU64::new(0);
    boundary(&|| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.path().join(format!("limits-{n}.sqlite"));
        open(&StoreUrl::sqlite_path(path.to_str().unwrap()).unwrap()).unwrap()
    });
}

#[test]
fn the_event_limit_holds_on_postgresql() {
    let databases = std::sync::Mutex::new(Vec::new());
    boundary(&|| {
        let database = pg::FreshDatabase::new();
        let store = database.open();
        databases.lock().unwrap().push(database);
        store
    });
}
