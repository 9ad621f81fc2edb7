//! The authoritative engine over PostgreSQL: a Mission created through `Engine::perform`, its
//! duplicate answered from the stored receipt, everything replayed through a second store (its
//! own connections, as another process) after the first was closed (§15.1, §15.2, §16); two
//! engines on one database racing the same Command apply it once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestStore;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_engine::store::suite::engine::{
    AUTHORITY, GROUP, Keys, MISSION, NOW, create, create_in, keys,
};
use missionweaveprotocol_store_postgres::{PostgresOptions, PostgresStore};

/// An engine over a new store (connections of its own) on `schema`.
fn engine(keys: &Keys, schema: &str) -> Engine<PostgresStore, SigningKey, SequentialEventIds> {
    Engine::new(
        PostgresStore::connect_with(common::url(), PostgresOptions::default().schema(schema))
            .unwrap(),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            keys.authority.clone(),
        ),
        SequentialEventIds::new("urn:missionweaveprotocol:event:pg-"),
    )
}

#[test]
fn a_mission_created_over_postgres_survives_a_reconnect_and_replays() {
    let keys = keys();
    let owner = TestStore::new();
    let schema = owner.store.schema();
    let command = create(&keys);

    let first = {
        let engine = engine(&keys, schema);
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

    // A new engine over new connections: the log, the receipt and the Mission are all there.
    let engine = engine(&keys, schema);
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

    // The same signed Command after the reconnect: the original first Event, nothing appended
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
fn a_postgres_engine_pages_its_replay_and_refuses_a_limit_of_zero() {
    let keys = keys();
    let owner = TestStore::new();
    let engine = engine(&keys, owner.store.schema());
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

/// One engine over one store shared by threads, each creating Missions in its own Group:
/// every Command is applied once, every Group log starts at 1, and all of it is committed.
#[test]
fn threads_sharing_an_engine_over_postgres_each_get_their_missions() {
    let keys = keys();
    let owner = TestStore::new();
    let schema = owner.store.schema();
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
        let engine = engine(&keys, schema);
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
    let engine = engine(&keys, schema);
    for t in 0..4 {
        for i in 0..3 {
            let mission = format!("urn:missionweaveprotocol:mission:t{t}-{i}");
            assert!(engine.mission(&mission).unwrap().is_some(), "{mission}");
            let group = format!("urn:missionweaveprotocol:group:t{t}-{i}");
            assert!(!engine.replay(&group, 0, 100).unwrap().events.is_empty());
        }
    }
}

/// Two engines with their own connections (as two processes) race two Commands (their own
/// Action IDs) creating the same Mission, many times: each time exactly one creates it, the
/// other is refused, and the Group log holds one creation.
#[test]
fn two_engines_racing_to_create_one_mission_have_exactly_one_winner() {
    let keys = keys();
    let owner = TestStore::new();
    let schema = owner.store.schema();
    let engines = [engine(&keys, schema), engine(&keys, schema)];
    for round in 0..10 {
        let group = format!("urn:missionweaveprotocol:group:race-{round}");
        let mission = format!("urn:missionweaveprotocol:mission:race-{round}");
        let commands: Vec<VerifiedCommand> = (0..2)
            .map(|e| {
                let action = format!("00000000-0000-4000-8000-00000{e}{round:05}");
                create_in(&keys, &group, &mission, &action)
            })
            .collect();
        let barrier = std::sync::Barrier::new(2);
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = engines
                .iter()
                .zip(&commands)
                .map(|(engine, command)| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        barrier.wait();
                        engine.perform(command, NOW)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "{outcomes:?}");
        assert!(!winners[0].duplicate);
        let page = engines[1].replay(&group, 0, 100).unwrap();
        assert_eq!(page.events, winners[0].events);
    }
}
