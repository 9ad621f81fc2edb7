//! The control-plane relay of human Commands (`server::relay_human_command`, §15: a control
//! plane relays a human's signed Command; the actor stays the human): a human Command is
//! verified and performed and its head moves reported; a duplicate answers with the original
//! Event and moves nothing; an Agent's Command, a Command signed with another key and an
//! oversized body are refused with their wire codes and nothing is applied; an Organization
//! service's Command (§15.2) is relayed to the Core, which performs it for a configured policy
//! service and refuses it otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::json;
use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind, WireCode};
use missionweaveprotocol_gateway::server::{GroupMoved, MAX_CONTROL_BYTES, relay_human_command};

#[test]
fn a_human_command_is_performed_and_its_head_move_reported() {
    let world = World::new();
    world.missions();
    let head = world.core.replay(GROUP, 0, 1000).unwrap().events.len() as u64;
    let (bytes, _) = world.command_in(
        GROUP,
        "message.post",
        OWNER,
        0,
        &World::post_payload("relayed", MAIN, &[]),
    );
    let relayed = relay_human_command(world.gateway.core().as_ref(), &bytes, NOW).unwrap();
    assert!(!relayed.performed.duplicate);
    assert_eq!(relayed.performed.events.len(), 1);
    assert_eq!(
        relayed.moved,
        vec![GroupMoved {
            group_id: GROUP.to_owned(),
            sequence: head + 1
        }]
    );
    // The same bytes again: the original Event (§15.1), nothing moved.
    let again = relay_human_command(world.gateway.core().as_ref(), &bytes, NOW).unwrap();
    assert!(again.performed.duplicate);
    assert_eq!(
        again.performed.events[0].body,
        relayed.performed.events[0].body
    );
    assert!(again.moved.is_empty());
}

#[test]
fn an_agent_command_is_forbidden_and_nothing_is_applied() {
    let world = World::new();
    world.missions();
    let before = world.core.replay(GROUP, 0, 1000).unwrap().events.len();
    let (bytes, action) = world.command_in(
        GROUP,
        "message.post",
        COORDINATOR,
        1,
        &World::post_payload("by-agent", MAIN, &[]),
    );
    let refusal = relay_human_command(world.gateway.core().as_ref(), &bytes, NOW).unwrap_err();
    assert_eq!(refusal.code, WireCode::AuthForbidden);
    assert_eq!(refusal.related_action_id.as_deref(), Some(action.as_str()));
    assert_eq!(refusal.group_id.as_deref(), Some(GROUP));
    assert_eq!(
        world.core.replay(GROUP, 0, 1000).unwrap().events.len(),
        before
    );
}

#[test]
fn another_key_or_an_oversized_body_is_refused() {
    let world = World::new();
    world.missions();
    let (forged, action) = world.command_signed_by(
        GROUP,
        "message.post",
        OWNER,
        WORKER,
        0,
        &World::post_payload("forged", MAIN, &[]),
    );
    let refusal = relay_human_command(world.gateway.core().as_ref(), &forged, NOW).unwrap_err();
    assert_eq!(refusal.code, WireCode::AuthInvalidSignature);
    assert_eq!(refusal.related_action_id.as_deref(), Some(action.as_str()));
    let big = vec![b' '; MAX_CONTROL_BYTES + 1];
    let refusal = relay_human_command(world.gateway.core().as_ref(), &big, NOW).unwrap_err();
    assert_eq!(refusal.code, WireCode::ProtocolViolation);
}

/// `mission.cancel` of `GROUP`'s Mission signed by the Group Authority, a `service` (§15.2:
/// Organization policy may cancel; a service carries no Session or Membership Epoch).
fn service_cancel(world: &World) -> (Vec<u8>, String) {
    let action = world.action();
    let unsigned = json::parse(
        format!(
            r#"{{"protocolVersion": "0.1", "actionId": "{action}",
            "actor": {{"type": "service", "id": "{AUTHORITY}"}}, "groupId": "{GROUP}",
            "kind": "mission.cancel", "correlationId": "urn:missionweaveprotocol:correlation:1",
            "issuedAt": "{NOW_TEXT}", "payload": {{"reason": "the Organization stopped it"}}}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let bytes = SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &unsigned, &key_of(30))
        .unwrap()
        .bytes;
    (bytes, action)
}

#[test]
fn a_policy_service_command_is_relayed_and_performed() {
    let world = World::with_policy_services(&[AUTHORITY]);
    world.missions();
    let (bytes, _) = service_cancel(&world);
    let relayed = relay_human_command(world.gateway.core().as_ref(), &bytes, NOW).unwrap();
    assert!(!relayed.performed.duplicate);
    let first = json::parse(&relayed.performed.events[0].body).unwrap();
    assert_eq!(text(&first, "/kind"), "mission.cancelled");
    assert_eq!(text(&first, "/actor/id"), AUTHORITY);
}

#[test]
fn a_service_that_is_not_a_policy_service_is_refused_by_the_core_and_nothing_is_applied() {
    // The relay lets a service's Command through to the Core; the Core's authorizer refuses a
    // service it was not configured with (ingress `unknown_service`).
    let world = World::new();
    world.missions();
    let before = world.core.replay(GROUP, 0, 1000).unwrap().events.len();
    let (bytes, action) = service_cancel(&world);
    let refusal = relay_human_command(world.gateway.core().as_ref(), &bytes, NOW).unwrap_err();
    assert_eq!(refusal.code, WireCode::AuthForbidden);
    assert_eq!(refusal.related_action_id.as_deref(), Some(action.as_str()));
    assert!(
        !refusal.message.contains("control plane"),
        "{}",
        refusal.message
    );
    assert_eq!(
        world.core.replay(GROUP, 0, 1000).unwrap().events.len(),
        before
    );
}
