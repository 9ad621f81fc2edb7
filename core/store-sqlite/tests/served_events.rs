//! Which served Events the Core re-verifies on a SQLite file (issue 27 item 3,
//! `service/served_events.rs` "When the store's key is enough"): none on a store keyed since
//! it was created — its HMAC chain, checked on every read, is what refuses a tampered row —
//! and every one (once per Core) on an unkeyed store or on one whose key was adopted over
//! stored Events, where a tamperer could have recomputed the unkeyed chain.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::service::CoreError;
use missionweaveprotocol_engine::store::integrity::GENESIS;
use missionweaveprotocol_engine::store::suite::engine::{GROUP, NOW, create, keys};
use missionweaveprotocol_engine::store::suite::tampering::authority_core;
use missionweaveprotocol_engine::store::{Integrity, IntegrityKey, Store, StoreOptions};
use missionweaveprotocol_store_sqlite::{SqliteOptions, SqliteStore};
use rusqlite::{Connection, OptionalExtension, params};

fn key() -> IntegrityKey {
    IntegrityKey::new(*b"an integrity key of 32 bytes....").unwrap()
}

fn open(path: &Path, store: StoreOptions) -> SqliteStore {
    SqliteStore::open_with(
        path,
        &SqliteOptions {
            store,
            ..SqliteOptions::default()
        },
    )
    .unwrap()
}

/// A store at `path` holding the Events of one `mission.create`; answers how many.
fn written(path: &Path, options: StoreOptions) -> usize {
    let core = authority_core(open(path, options));
    core.perform_verified(&create(&keys()), NOW).unwrap();
    core.engine().replay(GROUP, 0, 100).unwrap().events.len()
}

fn raw(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    conn
}

fn last_sequence(conn: &Connection) -> i64 {
    conn.query_row(
        "SELECT max(sequence) FROM events WHERE group_id = ?1",
        [GROUP],
        |row| row.get(0),
    )
    .unwrap()
}

/// The last Event's signature value changed by one character (still strict JSON), and its
/// chain hash recomputed under the unkeyed scheme, as anyone with write access can.
fn forge_last_event(conn: &Connection) -> i64 {
    let sequence = last_sequence(conn);
    let (event_id, mut body, action): (String, Vec<u8>, Option<Vec<u8>>) = conn
        .query_row(
            "SELECT event_id, body, action_key FROM events WHERE group_id = ?1 AND sequence = ?2",
            params![GROUP, sequence],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    let marker = b"\"value\":\"";
    let at = body
        .windows(marker.len())
        .rposition(|w| w == marker)
        .unwrap()
        + marker.len();
    body[at] = if body[at] == b'A' { b'B' } else { b'A' };
    let previous: [u8; 32] = conn
        .query_row(
            "SELECT chain_hash FROM events WHERE group_id = ?1 AND sequence = ?2",
            params![GROUP, sequence - 1],
            |row| row.get::<_, Vec<u8>>(0),
        )
        .optional()
        .unwrap()
        .map_or(GENESIS, |h| h.try_into().unwrap());
    let action: Option<[u8; 32]> = action.map(|a| a.try_into().unwrap());
    let chain = Integrity::unkeyed().event_chain(
        &previous,
        GROUP,
        sequence as u64,
        &event_id,
        &body,
        action.as_ref(),
    );
    let changed = conn
        .execute(
            "UPDATE events SET body = ?3, chain_hash = ?4 WHERE group_id = ?1 AND sequence = ?2",
            params![GROUP, sequence, body, &chain[..]],
        )
        .unwrap();
    assert_eq!(changed, 1);
    sequence
}

fn assert_refused_at(e: &CoreError, sequence: i64) {
    assert_eq!(e.wire_code(), WireCode::InternalError, "{e}");
    assert_eq!(DescribeError::reason(e), "store_corrupt", "{e}");
    assert_eq!(
        e.fields().get("locator").cloned(),
        Some(FieldValue::Text(format!("{GROUP} #{sequence}"))),
        "{e}"
    );
}

#[test]
fn a_store_keyed_since_creation_is_served_without_signature_checks_and_refuses_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keyed.sqlite");
    let events = written(&path, StoreOptions::keyed(key()));
    assert!(events > 0);
    // Reopened with its key (a new process): a fresh Core serves every page as read.
    let store = open(&path, StoreOptions::keyed(key()));
    assert!(store.authenticates_events());
    let core = authority_core(store);
    let whole = core.replay(GROUP, 0, 100).unwrap().events;
    assert_eq!(whole.len(), events);
    for after in 0..events {
        let page = core.replay(GROUP, after as i64, 1).unwrap().events;
        assert_eq!(page[..], whole[after..=after]);
    }
    assert_eq!(
        core.served_events_checked(),
        0,
        "no Ed25519 on a keyed store"
    );

    // One byte of the last Event's body changed in the file: the store's keyed chain refuses
    // the row, still without a signature check; the Events before it still serve.
    let conn = raw(&path);
    let sequence = last_sequence(&conn);
    let mut body: Vec<u8> = conn
        .query_row(
            "SELECT body FROM events WHERE group_id = ?1 AND sequence = ?2",
            params![GROUP, sequence],
            |row| row.get(0),
        )
        .unwrap();
    let at = body.len() / 2;
    body[at] ^= 0x01;
    conn.execute(
        "UPDATE events SET body = ?3 WHERE group_id = ?1 AND sequence = ?2",
        params![GROUP, sequence, body],
    )
    .unwrap();
    let e = core.replay(GROUP, 0, 100).unwrap_err();
    assert_refused_at(&e, sequence);
    assert!(e.to_string().contains("hash chain"), "{e}");
    assert_eq!(core.served_events_checked(), 0);
    if sequence > 1 {
        let before = core.replay(GROUP, 0, sequence - 1).unwrap().events;
        assert_eq!(before[..], whole[..before.len()]);
    }
}

#[test]
fn a_keyed_chain_refuses_a_forgery_whose_unkeyed_chain_was_recomputed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keyed.sqlite");
    written(&path, StoreOptions::keyed(key()));
    let core = authority_core(open(&path, StoreOptions::keyed(key())));
    let sequence = forge_last_event(&raw(&path));
    let e = core.replay(GROUP, 0, 100).unwrap_err();
    assert_refused_at(&e, sequence);
    assert!(e.to_string().contains("hash chain"), "{e}");
    assert_eq!(core.served_events_checked(), 0);
}

#[test]
fn an_unkeyed_store_is_checked_by_signature_which_refuses_a_recomputed_forgery() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unkeyed.sqlite");
    let events = written(&path, StoreOptions::default());
    let sequence = forge_last_event(&raw(&path));
    let store = open(&path, StoreOptions::default());
    assert!(!store.authenticates_events());
    refused_by_signature(store, sequence, events);
}

#[test]
fn a_key_adopted_over_stored_events_keeps_the_signature_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("adopted.sqlite");
    let events = written(&path, StoreOptions::default());
    // Forged while unkeyed, then sealed: the row now carries a valid MAC.
    let sequence = forge_last_event(&raw(&path));
    let adopting = StoreOptions::keyed(key()).adopting_key();
    for options in [adopting, StoreOptions::keyed(key())] {
        let store = open(&path, options);
        assert!(store.is_keyed());
        assert!(
            !store.authenticates_events(),
            "the key vouches for older rows"
        );
        refused_by_signature(store, sequence, events);
    }
}

#[test]
fn a_key_adopted_before_any_event_counts_as_keyed_since_creation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.sqlite");
    drop(open(&path, StoreOptions::default()));
    let store = open(&path, StoreOptions::keyed(key()).adopting_key());
    assert!(store.authenticates_events());
    drop(store);
    written(&path, StoreOptions::keyed(key()));
    let core = authority_core(open(&path, StoreOptions::keyed(key())));
    core.replay(GROUP, 0, 100).unwrap();
    assert_eq!(core.served_events_checked(), 0);
}

/// A replay of `store` refused at `sequence` by the signature check, every one of its `events`
/// checked in full.
fn refused_by_signature(store: SqliteStore, sequence: i64, events: usize) {
    let core = authority_core(store);
    let e = core.replay(GROUP, 0, 100).unwrap_err();
    assert_refused_at(&e, sequence);
    assert!(e.to_string().contains("signature"), "{e}");
    assert_eq!(core.served_events_checked(), events as u64);
}
