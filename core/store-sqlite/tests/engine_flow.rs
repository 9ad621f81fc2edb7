//! The authoritative engine over SQLite: a Mission created through `Engine::perform`, its
//! duplicate answered from the stored receipt, and everything replayed from the file after
//! the store was closed and reopened (§15.1, §15.2, §16).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_engine::store::suite::engine::{
    AUTHORITY, GROUP, Keys, MISSION, NOW, create, create_in, keys,
};
use missionweaveprotocol_store_sqlite::SqliteStore;

fn engine(keys: &Keys, path: &Path) -> Engine<SqliteStore, SigningKey, SequentialEventIds> {
    Engine::new(
        SqliteStore::open(path).unwrap(),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            keys.authority.clone(),
        ),
        SequentialEventIds::new("urn:missionweaveprotocol:event:sqlite-"),
    )
}

#[test]
fn a_mission_created_over_sqlite_survives_a_reopen_and_replays() {
    let keys = keys();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authority.sqlite");
    let command = create(&keys);

    let first = {
        let engine = engine(&keys, &path);
        let performed = engine.perform(&command, NOW).unwrap();
        assert!(!performed.duplicate);
        assert_eq!(performed.group_id, GROUP);
        assert_eq!(performed.events[0].sequence, 1);
        assert_eq!(
            engine.mission(MISSION).unwrap().unwrap().state().as_str(),
            "active"
        );
        performed.events
    };

    // A new engine over the reopened file: the log, the receipt and the Mission are all there.
    let engine = engine(&keys, &path);
    let page = engine.replay(GROUP, 0, 100).unwrap();
    assert_eq!(page.events, first);
    assert_eq!(page.last_sequence, first.len() as u64);
    for event in &page.events {
        // Each stored Event is still a valid signed document (§4.6): bytes kept exactly.
        SignedDocumentCodec::new()
            .verify(SignedDocumentKind::Event, &event.body, &keys.registry)
            .unwrap();
    }
    assert_eq!(
        engine.mission(MISSION).unwrap().unwrap().state().as_str(),
        "active"
    );

    // The same signed Command after the reopen: the original first Event, nothing appended
    // (§15.1).
    let again = engine.perform(&command, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events[0], first[0]);
    assert_eq!(
        engine.store().head(GROUP).unwrap().next_sequence,
        first.len() as u64 + 1
    );
}

#[test]
fn an_in_memory_sqlite_engine_pages_its_replay_and_refuses_a_limit_of_zero() {
    let keys = keys();
    let engine = Engine::new(
        SqliteStore::in_memory().unwrap(),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            keys.authority.clone(),
        ),
        SequentialEventIds::new("urn:missionweaveprotocol:event:mem-"),
    );
    engine.perform(&create(&keys), NOW).unwrap();
    // Pages of one Event: a continuation while more follow (§16).
    let page = engine.replay(GROUP, 0, 1).unwrap();
    assert_eq!(page.events.len(), 1);
    assert_eq!(
        page.continuation,
        (page.last_sequence > 1).then_some(1),
        "{page:?}"
    );
    assert!(engine.replay(GROUP, 0, 0).is_err());
}

/// One engine over one file store shared by threads, each creating Missions in its own Group:
/// every Command is applied once, every Group log starts at 1, and all of it is on disk.
#[test]
fn threads_sharing_an_engine_over_sqlite_each_get_their_missions() {
    let keys = keys();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authority.sqlite");
    let commands: Vec<Vec<VerifiedCommand>> = (0..4)
        .map(|t| {
            (0..3)
                .map(|i| {
                    create_in(
                        &keys,
                        &format!("urn:missionweaveprotocol:group:t{t}-{i}"),
                        &format!("urn:missionweaveprotocol:mission:t{t}-{i}"),
                        &format!("00000000-0000-4000-8000-0000000{t}000{i}"),
                    )
                })
                .collect()
        })
        .collect();
    {
        let engine = engine(&keys, &path);
        std::thread::scope(|scope| {
            for batch in &commands {
                let engine = &engine;
                scope.spawn(move || {
                    for command in batch {
                        let performed = engine.perform(command, NOW).unwrap();
                        assert!(!performed.duplicate);
                        assert_eq!(performed.events[0].sequence, 1);
                    }
                });
            }
        });
    }
    let engine = engine(&keys, &path);
    for t in 0..4 {
        for i in 0..3 {
            let mission = format!("urn:missionweaveprotocol:mission:t{t}-{i}");
            assert!(engine.mission(&mission).unwrap().is_some(), "{mission}");
            let group = format!("urn:missionweaveprotocol:group:t{t}-{i}");
            assert!(!engine.replay(&group, 0, 100).unwrap().events.is_empty());
        }
    }
}
