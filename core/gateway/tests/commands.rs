//! COMMAND (§15.1, §6.3, §19) through the two machines over a real Core: a Command resolves to
//! its Event (through the subscription when the Group is subscribed, directly otherwise), the
//! moved head is reported to the host, duplicates return the original Event, and every refusal
//! is one ERROR with `relatedFrameId` and `relatedActionId` (ingress, session checks, the
//! Core's own codes with their fields).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_gateway::client::SessionEvent;
use missionweaveprotocol_gateway::frames::ErrorBody;
use missionweaveprotocol_gateway::server::GroupMoved;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Sends `bytes` and returns the single refusal.
fn refused(pair: &mut Pair, bytes: &[u8]) -> ErrorBody {
    let ticket = pair.client.send_command(bytes, pair.now).unwrap();
    pair.pump();
    let events = pair.events();
    match events.as_slice() {
        [SessionEvent::CommandRefused { ticket: t, error }] => {
            assert_eq!(t, &ticket);
            assert_eq!(
                error.related_frame_id.as_deref(),
                Some(ticket.frame_id.as_str())
            );
            assert_eq!(
                error.related_action_id.as_deref(),
                Some(ticket.action_id.as_str())
            );
            assert_eq!(
                pair.server_closed, None,
                "a refusal keeps the connection open"
            );
            error.clone()
        }
        other => panic!("expected one refusal, got {other:?}"),
    }
}

#[test]
fn a_command_resolves_to_its_event_through_the_subscription() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    pair.subscribe(&[(GROUP, 0)]);
    let before = pair.delivered().len() as u64;
    let (bytes, action) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("m1", MAIN, &[]),
    );
    let ticket = pair.client.send_command(&bytes, NOW).unwrap();
    assert_eq!(ticket.action_id, action);
    assert_eq!(pair.client.pending_commands(), 1);
    pair.pump();
    let events = pair.events();
    let [
        SessionEvent::CommandAccepted {
            ticket: t,
            group_id,
            sequence,
            ..
        },
        SessionEvent::Event(event),
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(t, &ticket);
    assert_eq!(group_id.as_deref(), Some(GROUP));
    assert_eq!(*sequence, before + 1);
    assert!(
        event.in_order,
        "delivered by the subscription, in Group order"
    );
    assert_eq!(event.sequence, before + 1);
    assert_eq!(pair.client.pending_commands(), 0);
    // The host learns the head moved (to wake others, NOTIFY other processes).
    assert_eq!(
        pair.server.poll_notification(),
        Some(GroupMoved {
            group_id: GROUP.into(),
            sequence: before + 1
        })
    );
    assert_eq!(pair.server.poll_notification(), None);
    // Other local subscribers are found in the hub.
    let mut other = world.pair(COORDINATOR);
    other.subscribe(&[(GROUP, 0)]);
    let wake = world.gateway.hub().wake_list(GROUP, pair.server.id());
    assert_eq!(wake, [other.server.id()]);
}

#[test]
fn a_command_outside_the_subscriptions_is_answered_directly_and_duplicates_return_the_original() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    let (bytes, _) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("m1", MAIN, &[]),
    );
    pair.client.send_command(&bytes, NOW).unwrap();
    pair.pump();
    let events = pair.events();
    let [
        SessionEvent::CommandAccepted { event_id, .. },
        SessionEvent::Event(event),
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(&event.event_id, event_id);
    assert!(!event.in_order, "not a subscribed Group: outside any order");
    let head = world.head(GROUP);
    // The same bytes again: §15.1, the original Event, nothing appended, no head moved.
    pair.server.poll_notification();
    pair.client.send_command(&bytes, NOW).unwrap();
    pair.pump();
    let events = pair.events();
    assert!(
        matches!(events.as_slice(), [SessionEvent::CommandAccepted { event_id: again, .. }] if again == event_id),
        "the duplicate resolves to the original Event (delivered once): {events:?}"
    );
    assert_eq!(world.head(GROUP), head);
    assert_eq!(pair.server.poll_notification(), None);
    // Subscribed afterwards: the duplicate is answered directly, the client drops the Event
    // as already seen but still resolves the Command.
    pair.subscribe(&[(GROUP, 0)]);
    pair.events();
    pair.client.send_command(&bytes, NOW).unwrap();
    pair.pump();
    let events = pair.events();
    assert!(
        matches!(events.as_slice(), [SessionEvent::CommandAccepted { .. }]),
        "{events:?}"
    );
}

#[test]
fn ingress_refusals_name_the_frame_and_the_action() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    let post = |id: &str| World::post_payload(id, MAIN, &[]);
    // A forged signature (content changed after signing): stage 6.
    let (bytes, _) = pair.command(&world, GROUP, "message.post", &post("forged"));
    let forged = String::from_utf8(bytes)
        .unwrap()
        .replace("note forged", "note FORGED")
        .into_bytes();
    let error = refused(&mut pair, &forged);
    assert_eq!(error.code, WireCode::AuthInvalidSignature);
    assert!(!error.retryable);
    // Schema: a Command without a payload (unsigned, so stage 2 refuses it first).
    let action = world.action();
    let no_payload = format!(
        r#"{{"protocolVersion":"0.1","actionId":"{action}","actor":{{"type":"agent","id":"{COORDINATOR}"}},
        "kind":"message.post","correlationId":"urn:x:c","issuedAt":"{NOW_TEXT}"}}"#
    );
    let error = refused(&mut pair, no_payload.as_bytes());
    assert_eq!(error.code, WireCode::SchemaValidationFailed);
    // Freshness: the same valid Command ten minutes later (§6.4).
    let (bytes, _) = pair.command(&world, GROUP, "message.post", &post("stale"));
    pair.now = UnixMillis(NOW.0 + 600_000);
    let error = refused(&mut pair, &bytes);
    assert_eq!(error.code, WireCode::AuthInvalidSignature);
    pair.now = NOW;
    // Another Action with the same ID and other content (§15.1).
    let (first, action) = pair.command(&world, GROUP, "message.post", &post("first"));
    pair.client.send_command(&first, NOW).unwrap();
    pair.pump();
    pair.events();
    let second = String::from_utf8(
        world
            .command_in(GROUP, "message.post", COORDINATOR, 1, &post("second"))
            .0,
    )
    .unwrap();
    let collided = {
        // Re-sign with the first Command's Action ID.
        let unsigned = missionweaveprotocol::json::parse(second.as_bytes()).unwrap();
        let Value::Object(mut object) = unsigned else {
            unreachable!()
        };
        object.remove("signature");
        object.insert("actionId", Value::string(action.as_str()));
        missionweaveprotocol::SignedDocumentCodec::new()
            .sign(
                missionweaveprotocol::SignedDocumentKind::Command,
                &Value::Object(object),
                world.key(COORDINATOR),
            )
            .unwrap()
            .bytes
    };
    let error = refused(&mut pair, &collided);
    assert_eq!(error.code, WireCode::ActionIdCollision);
    assert_eq!(error.group_id.as_deref(), Some(GROUP));
}

#[test]
fn session_checks_refuse_other_actors_keys_and_epochs() {
    let world = World::new();
    world.missions();
    world.add_worker(GROUP, WORKER, 0);
    let mut pair = world.pair(WORKER);
    // Another Agent's Command over this session.
    let (other, _) = world.command_in(
        GROUP,
        "message.post",
        COORDINATOR,
        1,
        &World::post_payload("not-mine", MAIN, &[]),
    );
    let error = refused(&mut pair, &other);
    assert_eq!(error.code, WireCode::AuthForbidden);
    // A human's.
    let (human, _) = world.command_in(
        GROUP,
        "message.post",
        OWNER,
        0,
        &World::post_payload("human", MAIN, &[]),
    );
    assert_eq!(refused(&mut pair, &human).code, WireCode::AuthForbidden);
    // The Agent's own Command signed with its other registered key (not the session's).
    let (spare, _) = world.command_signed_by(
        GROUP,
        "message.post",
        WORKER,
        "urn:missionweaveprotocol:agent:reviewer#spare",
        1,
        &World::post_payload("spare", MAIN, &[]),
    );
    let error = refused(&mut pair, &spare);
    assert_eq!(error.code, WireCode::AuthInvalidSignature);
    // Its own key: applied.
    let (own, _) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("own", MAIN, &[]),
    );
    pair.client.send_command(&own, NOW).unwrap();
    pair.pump();
    assert!(matches!(
        pair.events().first(),
        Some(SessionEvent::CommandAccepted { .. })
    ));
}

#[test]
fn core_refusals_keep_their_code_and_safe_fields() {
    let world = World::new();
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    // `expectedRevision` of a new Message must be 0 (§15.3).
    let action = world.action();
    let unsigned = missionweaveprotocol::json::parse(
        format!(
            r#"{{"protocolVersion": "0.1", "actionId": "{action}",
            "actor": {{"type": "agent", "id": "{COORDINATOR}"}}, "sessionEpoch": 1, "membershipEpoch": 1,
            "groupId": "{GROUP}", "kind": "message.post", "expectedRevision": 5,
            "correlationId": "urn:missionweaveprotocol:correlation:1",
            "issuedAt": "{NOW_TEXT}", "payload": {}}}"#,
            World::post_payload("rev", MAIN, &[])
        )
        .as_bytes(),
    )
    .unwrap();
    let bytes = missionweaveprotocol::SignedDocumentCodec::new()
        .sign(
            missionweaveprotocol::SignedDocumentKind::Command,
            &unsigned,
            world.key(COORDINATOR),
        )
        .unwrap()
        .bytes;
    let error = refused(&mut pair, &bytes);
    assert_eq!(error.code, WireCode::RevisionConflict);
    assert_eq!(error.expected_revision, Some(5));
    assert_eq!(error.current_revision, Some(0));
    assert!(!error.retryable);
    // A Membership Epoch that is not the current one.
    let stale = String::from_utf8(
        world
            .command_in(
                GROUP,
                "message.post",
                COORDINATOR,
                1,
                &World::post_payload("me", MAIN, &[]),
            )
            .0,
    )
    .unwrap();
    let unsigned = {
        let Value::Object(mut object) =
            missionweaveprotocol::json::parse(stale.as_bytes()).unwrap()
        else {
            unreachable!()
        };
        object.remove("signature");
        object.insert(
            "membershipEpoch",
            Value::Number(missionweaveprotocol::json::Number::from_u64(7)),
        );
        Value::Object(object)
    };
    let bytes = missionweaveprotocol::SignedDocumentCodec::new()
        .sign(
            missionweaveprotocol::SignedDocumentKind::Command,
            &unsigned,
            world.key(COORDINATOR),
        )
        .unwrap()
        .bytes;
    assert_eq!(refused(&mut pair, &bytes).code, WireCode::MembershipStale);
    // An unknown Conversation: INVALID_COMMAND from the engine.
    let (bytes, _) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("x", "urn:missionweaveprotocol:conversation:nope", &[]),
    );
    assert_eq!(refused(&mut pair, &bytes).code, WireCode::InvalidCommand);
}

#[test]
fn pending_commands_time_out_and_are_bounded() {
    let world = World::new();
    world.missions();
    let mut config = world.client_config(COORDINATOR);
    config.max_pending_commands = 1;
    config.command_timeout_ms = 1_000;
    let mut pair = Pair {
        server: world.connection(),
        client: world.client_with(config),
        now: NOW,
        server_closed: None,
    };
    pair.client.start(NOW).unwrap();
    pair.pump();
    pair.events();
    let (a, _) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("a", MAIN, &[]),
    );
    let (b, _) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("b", MAIN, &[]),
    );
    // Not pumped: the first awaits its outcome.
    let ticket = pair.client.send_command(&a, NOW).unwrap();
    assert_eq!(
        pair.client.send_command(&b, NOW).unwrap_err(),
        missionweaveprotocol_gateway::client::ClientError::TooManyPendingCommands
    );
    pair.client.on_tick(UnixMillis(NOW.0 + 999));
    assert!(pair.events().is_empty());
    pair.client.on_tick(UnixMillis(NOW.0 + 1_000));
    assert_eq!(pair.events(), [SessionEvent::CommandTimedOut(ticket)]);
    assert_eq!(pair.client.pending_commands(), 0);
    assert_eq!(
        pair.client.send_command(b"{}", NOW).unwrap_err(),
        missionweaveprotocol_gateway::client::ClientError::NotACommand
    );
}
