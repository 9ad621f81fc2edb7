//! Group commit over the SQLite file store: the store suite unchanged through
//! `GroupCommit<SqliteStore>`, and one engine shared by many threads whose Commands share
//! durable transactions, every Mission on disk after a reopen (issue 11, "Group commit";
//! §15.1, §15.2).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::TempFileStore;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::GroupCommit;
use missionweaveprotocol_engine::store::suite::engine::{AUTHORITY, Keys, NOW, create_in, keys};
use missionweaveprotocol_store_sqlite::SqliteStore;

mod suite_over_a_file {
    use super::{GroupCommit, TempFileStore};

    missionweaveprotocol_engine::store_test_suite!(|| GroupCommit::new(TempFileStore::new()));
}

type GroupEngine = Engine<GroupCommit<SqliteStore>, SigningKey, SequentialEventIds>;

fn engine(keys: &Keys, path: &Path) -> GroupEngine {
    Engine::new(
        GroupCommit::new(SqliteStore::open(path).unwrap()),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            keys.authority.clone(),
        ),
        SequentialEventIds::new("urn:missionweaveprotocol:event:group-"),
    )
}

fn create(keys: &Keys, t: u64, i: u64) -> VerifiedCommand {
    create_in(
        keys,
        &format!("urn:missionweaveprotocol:group:t{t}-{i}"),
        &format!("urn:missionweaveprotocol:mission:t{t}-{i}"),
        &format!("00000000-0000-4000-8000-{t:06}{i:06}"),
    )
}

/// 16 threads × 4 Missions through one engine over `GroupCommit<SqliteStore>`: every Command
/// applied once (its duplicate answered from the receipt), every Group log contiguous from 1,
/// all of it on disk after a reopen, and the batches account for every commit.
#[test]
fn many_submitters_share_durable_transactions() {
    const THREADS: u64 = 16;
    const EACH: u64 = 4;
    let keys = keys();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authority.sqlite");
    let commands: Vec<Vec<VerifiedCommand>> = (0..THREADS)
        .map(|t| (0..EACH).map(|i| create(&keys, t, i)).collect())
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
        let stats = engine.store().stats();
        assert_eq!(stats.transactions, THREADS * EACH, "{stats:?}");
        assert!(stats.batches >= 1 && stats.batches <= THREADS * EACH);
    }
    let engine = engine(&keys, &path);
    for t in 0..THREADS {
        for i in 0..EACH {
            let mission = format!("urn:missionweaveprotocol:mission:t{t}-{i}");
            assert!(engine.mission(&mission).unwrap().is_some(), "{mission}");
            let group = format!("urn:missionweaveprotocol:group:t{t}-{i}");
            let page = engine.replay(&group, 0, 100).unwrap();
            let sequences: Vec<u64> = page.events.iter().map(|e| e.sequence).collect();
            assert_eq!(sequences, (1..=page.last_sequence).collect::<Vec<_>>());
            for event in &page.events {
                SignedDocumentCodec::new()
                    .verify(SignedDocumentKind::Event, &event.body, &keys.registry)
                    .unwrap();
            }
        }
    }
    // The same signed Command again: the original Event, nothing appended (§15.1).
    let again = engine.perform(&commands[3][2], NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events[0].sequence, 1);
}
