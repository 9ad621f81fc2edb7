//! Human sessions (docs/network.md "Human sessions"): the MissionOwner's page signs the HELLO
//! challenge with the human's registered key, subscribes to the Groups the human is a member
//! of, and sends the human's own Commands (no Session Epoch, §6.3, §15.1). Negatives: a
//! service key cannot open a session, a human key cannot claim another ID, a human session
//! carries no other principal's Command, and a Group the human is not a member of is
//! `GROUP_NOT_FOUND`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol_gateway::client::{Session, SessionEvent};

/// A client of `id` signing with `key`, not yet started, against a fresh connection.
fn pair_with(world: &World, id: &str, key: SigningKey) -> Pair {
    let mut config = world.client_config(id);
    config.agent_id = id.into();
    let client = Session::new(config, Arc::new(key), Box::new(Counter(11))).unwrap();
    Pair {
        server: world.connection(),
        client,
        now: NOW,
        server_closed: None,
    }
}

fn handshake_code(pair: &mut Pair) -> WireCode {
    pair.client.start(NOW).unwrap();
    pair.pump();
    match pair.events().as_slice() {
        [SessionEvent::HandshakeFailed(error)] => error.code,
        other => panic!("expected a failed handshake, got {other:?}"),
    }
}

#[test]
fn the_mission_owner_signs_in_watches_the_group_and_sends_its_own_commands() {
    let world = World::new();
    world.missions();
    let mut owner = world.pair(OWNER);
    assert_eq!(owner.server.agent_id(), Some(OWNER));
    assert_eq!(owner.client.session_epoch(), Some(1));
    // The owner's Membership makes the Group visible: its log is replayed.
    owner.subscribe(&[(GROUP, 0)]);
    let replayed = owner.delivered();
    assert!(!replayed.is_empty());
    assert_eq!(replayed[0].3, "mission.created");
    let head = world.head(GROUP);
    // A human Command carries the Membership Epoch and no Session Epoch (§15.1).
    let (bytes, action) = world.command_in(
        GROUP,
        "message.post",
        OWNER,
        0,
        &World::post_payload("urn:missionweaveprotocol:message:owner-1", MAIN, &[]),
    );
    assert!(!String::from_utf8_lossy(&bytes).contains("sessionEpoch"));
    owner.client.send_command(&bytes, NOW).unwrap();
    owner.pump();
    let events = owner.events();
    assert!(
        events.iter().any(|e| matches!(e,
            SessionEvent::CommandAccepted { sequence, .. } if *sequence == head + 1)),
        "{:?}",
        events
            .iter()
            .map(|e| match e {
                SessionEvent::Event(d) => format!("Event {}", d.sequence),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
    );
    assert_eq!(world.head(GROUP), head + 1, "{action} applied once");
    // Another participant sees the human's Event live.
    let mut coordinator = world.pair(COORDINATOR);
    coordinator.subscribe(&[(GROUP, head)]);
    assert_eq!(
        coordinator.delivered(),
        vec![(
            GROUP.to_owned(),
            head + 1,
            true,
            "message.posted".to_owned()
        )]
    );
}

#[test]
fn a_human_session_carries_only_the_humans_commands() {
    let world = World::new();
    world.missions();
    let mut owner = world.pair(OWNER);
    // An Agent's Command on the human's connection: AUTH_FORBIDDEN, nothing applied.
    let head = world.head(GROUP);
    let (bytes, _) = world.command_in(
        GROUP,
        "message.post",
        COORDINATOR,
        1,
        &World::post_payload("urn:missionweaveprotocol:message:not-mine", MAIN, &[]),
    );
    owner.client.send_command(&bytes, NOW).unwrap();
    owner.pump();
    let events = owner.events();
    assert!(
        matches!(events.as_slice(),
            [SessionEvent::CommandRefused { error, .. }] if error.code == WireCode::AuthForbidden),
        "{events:?}"
    );
    // And the human's Command on an Agent's connection is refused the same way.
    let mut coordinator = world.pair(COORDINATOR);
    let (bytes, _) = world.command_in(
        GROUP,
        "message.post",
        OWNER,
        0,
        &World::post_payload("urn:missionweaveprotocol:message:relayed", MAIN, &[]),
    );
    coordinator.client.send_command(&bytes, NOW).unwrap();
    coordinator.pump();
    let events = coordinator.events();
    assert!(
        matches!(events.as_slice(),
            [SessionEvent::CommandRefused { error, .. }] if error.code == WireCode::AuthForbidden),
        "{events:?}"
    );
    assert_eq!(world.head(GROUP), head);
    // A Group the human is not a member of is answered as an absent one (§17.2).
    owner.subscribe(&[(ABSENT_GROUP, 0)]);
    let events = owner.events();
    assert!(
        events.iter().any(|e| matches!(e,
            SessionEvent::Error(error) if error.code == WireCode::GroupNotFound)),
        "{events:?}"
    );
}

#[test]
fn only_agent_and_human_keys_open_sessions_and_only_for_their_own_id() {
    let world = World::new();
    world.missions();
    // The Group Authority's service key is registered but opens no session.
    let authority_key = key_of(30);
    let mut pair = pair_with(&world, &authority().id, authority_key);
    assert_eq!(handshake_code(&mut pair), WireCode::AuthInvalidSignature);
    // The human's key claimed for an Agent ID, and an Agent's key claimed for the human.
    let mut pair = pair_with(&world, COORDINATOR, world.key(OWNER).clone());
    assert_eq!(handshake_code(&mut pair), WireCode::AuthInvalidSignature);
    let mut pair = pair_with(&world, OWNER, world.key(COORDINATOR).clone());
    assert_eq!(handshake_code(&mut pair), WireCode::AuthInvalidSignature);
    assert_eq!(world.gateway.agents().count(OWNER), 0);
}
