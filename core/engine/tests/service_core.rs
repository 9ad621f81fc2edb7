//! `service::Core`, the facade the bindings serve: wire bytes → verified → performed,
//! queries, replay bounds, the error families, random Event IDs. Every Event is verified with
//! the six-stage verifier and `event.schema.json` (`Fixture::checked`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use std::sync::Arc;

use fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{DescribeError, SignedDocumentCodec, SignedDocumentKind, WireCode};
use missionweaveprotocol_engine::engine::QueryKind;
use missionweaveprotocol_engine::events::{EventIssuer, RandomEventIds, SequentialEventIds};
use missionweaveprotocol_engine::ingress::FreshnessWindow;
use missionweaveprotocol_engine::service::{
    Core, CoreError, ErrorFamily, default_authorizer, wire_code_families,
};
use missionweaveprotocol_engine::store::{InMemoryStore, Store};
use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// A core in which both Agents opened Session Epoch 1 (§6.3), through the facade itself.
fn core(f: &Fixture) -> Core {
    let core = Core::new(
        Arc::new(InMemoryStore::new()),
        Arc::clone(&f.registry),
        EventIssuer::new(authority(), f.authority_key.clone()),
        default_authorizer(vec![SERVICE.to_owned()], Vec::new()),
        Box::new(SequentialEventIds::new(
            "urn:missionweaveprotocol:event:svc-",
        )),
    );
    for agent in [COORDINATOR, OTHER_AGENT] {
        let open = f.unsigned_service(
            "ext.missionweaveprotocol.identity.session_open",
            &f.action(),
            &format!(r#"{{"agentId": "{agent}"}}"#),
        );
        core.perform_bytes(&sign_as(f, SERVICE, &open), NOW)
            .unwrap_or_else(|e| panic!("session_open refused: {e}"));
    }
    core
}

/// The wire bytes of Command `kind` by `actor`, signed with the actor's key.
fn signed(f: &Fixture, kind: &str, actor: &str, extra: &str, payload: &str) -> Vec<u8> {
    let unsigned = f.unsigned(kind, actor, &f.action(), extra, payload);
    sign_as(f, actor, &unsigned)
}

fn sign_as(f: &Fixture, actor: &str, unsigned: &Value) -> Vec<u8> {
    let (_, key) = f.keys.iter().find(|(p, _)| p.id == actor).unwrap();
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, unsigned, key)
        .unwrap()
        .bytes
}

fn ok(f: &Fixture, core: &Core, bytes: &[u8]) -> Vec<Value> {
    let performed = core
        .perform_bytes(bytes, NOW)
        .unwrap_or_else(|e| panic!("refused: {e} ({}, {})", e.wire_code, e.reason));
    assert!(!performed.duplicate);
    f.checked(&performed)
}

fn refused(core: &Core, bytes: &[u8], code: WireCode, family: ErrorFamily) -> CoreError {
    let before = core.store().head(GROUP).unwrap().last_sequence();
    let error = core.perform_bytes(bytes, NOW).unwrap_err();
    assert_eq!((error.wire_code, error.family), (code, family), "{error}");
    assert_eq!(
        core.store().head(GROUP).unwrap().last_sequence(),
        before,
        "a refusal appends nothing"
    );
    error
}

fn create(f: &Fixture) -> Vec<u8> {
    signed(
        f,
        "mission.create",
        OWNER,
        "",
        &f.create_payload(MISSION, ""),
    )
}

fn coordinator(f: &Fixture, kind: &str, payload: &str) -> Vec<u8> {
    signed(f, kind, COORDINATOR, r#""coordinatorEpoch": 1"#, payload)
}

#[test]
fn perform_bytes_verifies_and_applies_then_answers_duplicates() {
    let f = fixture();
    let core = core(&f);
    let bytes = create(&f);
    let events = ok(&f, &core, &bytes);
    assert_eq!(text(&events[0], "/kind"), "mission.created");
    let again = core.perform_bytes(&bytes, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(
        again.events[0].body,
        core.replay(GROUP, 0, 1).unwrap().events[0].body
    );
}

#[test]
fn forged_and_unsigned_commands_are_refused_with_nothing_applied() {
    let f = fixture();
    let core = core(&f);
    ok(&f, &core, &create(&f));
    // A Coordinator Command whose bytes were altered after signing.
    let bytes = coordinator(&f, "mission.renew_coordinator", r#"{"leaseSeconds": 300}"#);
    let forged = String::from_utf8(bytes)
        .unwrap()
        .replace("\"leaseSeconds\":300", "\"leaseSeconds\":900")
        .into_bytes();
    let e = refused(
        &core,
        &forged,
        WireCode::AuthInvalidSignature,
        ErrorFamily::AuthorizationDenied,
    );
    // §6.4: the wire message does not say which check failed.
    assert_eq!(
        e.message,
        "AUTH_INVALID_SIGNATURE: signed document rejected"
    );
    // The same Command signed by another registered principal's key.
    let unsigned = f.unsigned(
        "mission.renew_coordinator",
        COORDINATOR,
        &f.action(),
        r#""coordinatorEpoch": 1"#,
        r#"{"leaseSeconds": 300}"#,
    );
    let wrong_key = sign_as(&f, OTHER_AGENT, &unsigned);
    refused(
        &core,
        &wrong_key,
        WireCode::AuthInvalidSignature,
        ErrorFamily::AuthorizationDenied,
    );
    // No signature at all: the Command schema requires one (stage `schema`, §6.4).
    let bare = missionweaveprotocol::json::canonical_bytes(&unsigned).unwrap();
    refused(
        &core,
        &bare,
        WireCode::SchemaValidationFailed,
        ErrorFamily::InvalidCommand,
    );
    // Not JSON.
    let e = core.perform_bytes(b"{not json", NOW).unwrap_err();
    assert_eq!(e.family, ErrorFamily::InvalidCommand, "{e} {}", e.wire_code);
}

#[test]
fn the_freshness_window_is_configurable() {
    let f = fixture();
    let bytes = create(&f);
    let later = UnixMillis(NOW.0 + 60_000);
    // Default window (5 minutes): fresh one minute later.
    assert!(core(&f).perform_bytes(&bytes, later).is_ok());
    // A 30-second window: stale, refused like a bad signature.
    let strict = core(&f).with_freshness(FreshnessWindow::new(1_000, 30_000));
    let e = strict.perform_bytes(&bytes, later).unwrap_err();
    assert_eq!(e.wire_code, WireCode::AuthInvalidSignature);
    assert_eq!(e.reason, "command-stale");
    assert_eq!(strict.freshness().max_age_ms, 30_000);
}

#[test]
fn refusals_carry_their_wire_code_and_family() {
    let f = fixture();
    let core = core(&f);
    ok(&f, &core, &create(&f));
    // Stale Coordinator Epoch.
    let stale = signed(
        &f,
        "mission.renew_coordinator",
        COORDINATOR,
        r#""coordinatorEpoch": 7"#,
        r#"{"leaseSeconds": 300}"#,
    );
    refused(
        &core,
        &stale,
        WireCode::AuthStaleCoordinator,
        ErrorFamily::StaleCoordinatorEpoch,
    );
    // Wrong expectedRevision.
    let conflict = signed(
        &f,
        "mission.cancel",
        OWNER,
        r#""expectedRevision": 9"#,
        r#"{"reason": "x"}"#,
    );
    let e = refused(
        &core,
        &conflict,
        WireCode::RevisionConflict,
        ErrorFamily::RevisionConflict,
    );
    assert_eq!(
        e.fields.get("current_revision"),
        Some(&missionweaveprotocol::FieldValue::Integer(1))
    );
    // Unknown Group.
    let mut unsigned = f.unsigned(
        "mission.cancel",
        OWNER,
        &f.action(),
        "",
        r#"{"reason": "x"}"#,
    );
    if let Value::Object(members) = &mut unsigned {
        members.insert(
            "groupId",
            Value::string("urn:missionweaveprotocol:group:none"),
        );
    }
    let e = core
        .perform_bytes(&sign_as(&f, OWNER, &unsigned), NOW)
        .unwrap_err();
    assert_eq!(
        (e.wire_code, e.family),
        (WireCode::GroupNotFound, ErrorFamily::NotFound)
    );
    // Same Action ID, other content: collision.
    let action = f.action();
    let first = f.unsigned(
        "mission.renew_coordinator",
        COORDINATOR,
        &action,
        r#""coordinatorEpoch": 1"#,
        r#"{"leaseSeconds": 300}"#,
    );
    ok(&f, &core, &sign_as(&f, COORDINATOR, &first));
    let second = f.unsigned(
        "mission.renew_coordinator",
        COORDINATOR,
        &action,
        r#""coordinatorEpoch": 1"#,
        r#"{"leaseSeconds": 400}"#,
    );
    refused(
        &core,
        &sign_as(&f, COORDINATOR, &second),
        WireCode::ActionIdCollision,
        ErrorFamily::ActionIdCollision,
    );
    // A dependency cycle / unknown dependency is a dependency error.
    let unknown_dep = coordinator(
        &f,
        "work.authorize",
        &format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
            contract(&["urn:missionweaveprotocol:work:missing"])
        ),
    );
    let e = core.perform_bytes(&unknown_dep, NOW).unwrap_err();
    assert_eq!(e.family, ErrorFamily::DependencyError, "{e} {}", e.reason);
}

#[test]
fn work_flow_and_queries_through_the_facade() {
    let f = fixture();
    let core = core(&f);
    ok(&f, &core, &create(&f));
    ok(
        &f,
        &core,
        &coordinator(
            &f,
            "work.authorize",
            &format!(
                r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                contract(&[])
            ),
        ),
    );
    // A second authorize of the same WorkItem ID: already_exists.
    let again = coordinator(
        &f,
        "work.authorize",
        &format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
            contract(&[])
        ),
    );
    let e = core.perform_bytes(&again, NOW).unwrap_err();
    assert_eq!(e.wire_code, WireCode::InvalidStateTransition);
    let offer = format!(
        r#"{{"workItemId":"{W1}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:1","agentId":"{WORKER}","agentCardVersion":1}}],"selectionBasis":{}}}"#,
        selection_basis()
    );
    ok(&f, &core, &coordinator(&f, "work.offer", &offer));
    let accept = format!(
        r#"{{"workItemId":"{W1}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}]}}"#
    );
    ok(
        &f,
        &core,
        &signed(&f, "work.accept_offer", WORKER, "", &accept),
    );

    let item = core
        .query(QueryKind::WorkItem, W1, None, None, NOW)
        .unwrap();
    assert_eq!(text(&item, "/state"), "queued");
    let epoch = item
        .pointer("/owner/ownershipEpoch")
        .unwrap()
        .as_number()
        .unwrap()
        .as_u64()
        .unwrap();
    let lease = text(&item, "/owner/ownershipLeaseId").to_owned();
    // No Execution Lease before start.
    let e = core
        .query(QueryKind::ExecutionLease, W1, None, None, NOW)
        .unwrap_err();
    assert_eq!(e.family, ErrorFamily::NotFound);
    ok(
        &f,
        &core,
        &signed(
            &f,
            "work.start",
            WORKER,
            "",
            &format!(r#"{{"workItemId":"{W1}","ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
        ),
    );
    let exec = core
        .query(QueryKind::ExecutionLease, W1, None, None, NOW)
        .unwrap();
    assert_eq!(text(&exec, "/state"), "active");
    // Projected at a later `now`: expired (the reference's EXECUTION_LEASE projection).
    let later = core
        .query(
            QueryKind::ExecutionLease,
            W1,
            None,
            None,
            UnixMillis(NOW.0 + 3_600_000),
        )
        .unwrap();
    assert_eq!(text(&later, "/state"), "expired");

    let items = core
        .query(QueryKind::MissionWorkItems, MISSION, None, None, NOW)
        .unwrap();
    assert_eq!(items.as_array().unwrap().len(), 1);
    let mission = core
        .query(QueryKind::Mission, MISSION, None, None, NOW)
        .unwrap();
    assert_eq!(text(&mission, "/state"), "active");
    let group = core.query_named("group", GROUP, None, None, NOW).unwrap();
    assert_eq!(text(&group, "/missionId"), MISSION);
    let membership = core
        .query(
            QueryKind::Membership,
            OWNER,
            Some(GROUP),
            Some("human"),
            NOW,
        )
        .unwrap();
    assert_eq!(text(&membership, "/role"), "mission_owner");
}

#[test]
fn query_refusals_are_typed() {
    let f = fixture();
    let core = core(&f);
    ok(&f, &core, &create(&f));
    let e = core
        .query(
            QueryKind::Mission,
            "urn:missionweaveprotocol:mission:none",
            None,
            None,
            NOW,
        )
        .unwrap_err();
    assert_eq!(
        (e.wire_code, e.family, e.reason.as_str()),
        (WireCode::GroupNotFound, ErrorFamily::NotFound, "not_found")
    );
    let e = core
        .query_named("nope", MISSION, None, None, NOW)
        .unwrap_err();
    assert_eq!(
        (e.family, e.reason.as_str()),
        (ErrorFamily::InvalidCommand, "unknown_query_kind")
    );
    // Membership needs group_id and actor_type.
    let e = core
        .query(QueryKind::Membership, OWNER, None, Some("human"), NOW)
        .unwrap_err();
    assert_eq!(e.reason, "membership_query_incomplete");
    let e = core
        .query(
            QueryKind::Membership,
            OWNER,
            Some(GROUP),
            Some("robot"),
            NOW,
        )
        .unwrap_err();
    assert_eq!(e.reason, "unknown_actor_type");
    // Every kind is either served or refused with its reason: never a panic.
    for kind in QueryKind::ALL {
        match core.query(kind, MISSION, Some(GROUP), Some("human"), NOW) {
            Ok(_) => assert!(kind.not_served().is_none()),
            Err(e) if kind.not_served().is_some() => {
                assert_eq!(e.wire_code, WireCode::InvalidCommand);
                assert_eq!(e.reason, "query_kind_not_served");
                assert!(e.message.contains(kind.as_str()));
            }
            Err(e) => assert_eq!(e.family, ErrorFamily::NotFound, "{kind:?}: {e}"),
        }
    }
    assert_eq!(QueryKind::ALL.len(), 21);
}

#[test]
fn replay_bounds_and_continuation() {
    let f = fixture();
    let core = core(&f);
    ok(&f, &core, &create(&f));
    for _ in 0..4 {
        ok(
            &f,
            &core,
            &coordinator(&f, "mission.renew_coordinator", r#"{"leaseSeconds": 300}"#),
        );
    }
    for (after, limit, reason) in [
        (-1, 10, "replay_after_negative"),
        (0, 0, "replay_limit_out_of_range"),
        (0, 10_001, "replay_limit_out_of_range"),
        (0, -5, "replay_limit_out_of_range"),
    ] {
        let e = core.replay(GROUP, after, limit).unwrap_err();
        assert_eq!(
            (e.wire_code, e.family, e.reason.as_str()),
            (
                WireCode::InvalidCommand,
                ErrorFamily::InvalidCommand,
                reason
            )
        );
    }
    assert_eq!(core.replay(GROUP, 0, 10_000).unwrap().events.len(), 5);
    let page = core.replay(GROUP, 0, 2).unwrap();
    assert_eq!(page.continuation, Some(2));
    let page = core.replay(GROUP, 2, 2).unwrap();
    assert_eq!(page.events[0].sequence, 3);
    assert_eq!(page.continuation, Some(4));
    let page = core.replay(GROUP, 4, 2).unwrap();
    assert_eq!((page.events.len(), page.continuation), (1, None));
    let e = core
        .replay("urn:missionweaveprotocol:group:none", 0, 10)
        .unwrap_err();
    assert_eq!(e.family, ErrorFamily::NotFound);
}

/// A deterministic stand-in for the host's randomness (tests only).
#[derive(Debug)]
struct Counter(u8);

impl RandomSource for Counter {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
        for byte in out {
            self.0 = self.0.wrapping_add(7);
            *byte = self.0;
        }
        Ok(())
    }
}

#[test]
fn random_event_ids_are_uuid_urns_and_verify() {
    let f = fixture();
    let core = Core::new(
        Arc::new(InMemoryStore::new()),
        Arc::clone(&f.registry),
        EventIssuer::new(authority(), f.authority_key.clone()),
        default_authorizer(vec![SERVICE.to_owned()], Vec::new()),
        Box::new(RandomEventIds::new(Counter(0))),
    );
    let events = ok(&f, &core, &create(&f));
    let id = text(&events[0], "/eventId");
    assert!(id.starts_with("urn:uuid:") && id.len() == 45, "{id}");
}

#[test]
fn the_family_table_covers_every_wire_code() {
    let table = wire_code_families();
    assert_eq!(table.len(), WireCode::ALL.len());
    assert!(table.contains(&("MEMBERSHIP_STALE", "stale_membership_epoch")));
    assert!(table.contains(&("WORK_STALE_OWNERSHIP", "stale_ownership_epoch")));
    assert!(table.contains(&("WORK_OFFER_EXPIRED", "lease_expired")));
    assert!(table.contains(&("WORK_ALREADY_OWNED", "invalid_transition")));
    assert!(table.contains(&("RATE_LIMITED", "policy_violation")));
    assert!(table.contains(&("BUDGET_EXCEEDED", "budget_exceeded")));
    // The CoreError of a store error keeps its own description.
    let e = CoreError::not_found("mission", "m");
    assert_eq!(e.wire_code(), WireCode::GroupNotFound);
}

#[test]
fn concurrent_accepts_through_the_facade_have_one_winner() {
    let f = fixture();
    let core = core(&f);
    ok(&f, &core, &create(&f));
    ok(
        &f,
        &core,
        &coordinator(
            &f,
            "work.authorize",
            &format!(
                r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                contract(&[])
            ),
        ),
    );
    let offer = format!(
        r#"{{"workItemId":"{W1}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:1","agentId":"{WORKER}","agentCardVersion":1}}],"selectionBasis":{}}}"#,
        selection_basis()
    );
    ok(&f, &core, &coordinator(&f, "work.offer", &offer));
    let accept = format!(
        r#"{{"workItemId":"{W1}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}]}}"#
    );
    // Eight distinct signed accepts (distinct Action IDs) of the one offer.
    let commands: Vec<Vec<u8>> = (0..8)
        .map(|_| signed(&f, "work.accept_offer", WORKER, "", &accept))
        .collect();
    let before = core.store().head(GROUP).unwrap().last_sequence();
    let results: Vec<Result<_, CoreError>> = std::thread::scope(|s| {
        let handles: Vec<_> = commands
            .iter()
            .map(|bytes| s.spawn(|| core.perform_bytes(bytes, NOW)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(winners, 1);
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(
            e.family,
            ErrorFamily::InvalidTransition,
            "{e} {}",
            e.wire_code
        );
    }
    assert_eq!(
        core.store().head(GROUP).unwrap().last_sequence(),
        before + 1
    );
}

#[test]
fn session_epoch_agent_card_and_budget_queries() {
    let f = fixture();
    let core = core(&f);
    ok(&f, &core, &create(&f));
    // The session the facade opened for the Coordinator (§6.3).
    let session = core
        .query(QueryKind::SessionEpoch, COORDINATOR, None, None, NOW)
        .unwrap();
    assert_eq!(text(&session, "/agentId"), COORDINATOR);
    assert_eq!(
        session
            .pointer("/sessionEpoch")
            .and_then(|v| v.as_number())
            .and_then(|n| n.as_u64()),
        Some(1)
    );
    // An Agent that never opened one, and an Agent without a registered card: not found.
    for kind in [QueryKind::SessionEpoch, QueryKind::AgentCard] {
        let e = core
            .query(
                kind,
                "urn:missionweaveprotocol:agent:nobody",
                None,
                None,
                NOW,
            )
            .unwrap_err();
        assert_eq!(e.family, ErrorFamily::NotFound, "{kind:?}");
    }
    // The Mission's budget account (§12): nothing used or reserved yet.
    let budget = core
        .query(QueryKind::BudgetRemaining, MISSION, None, None, NOW)
        .unwrap();
    assert_eq!(text(&budget, "/account"), "mission");
    let tokens = |path: &str| {
        budget
            .pointer(path)
            .and_then(|v| v.as_number())
            .and_then(|n| n.as_u64())
    };
    assert_eq!(tokens("/limit/modelTokens"), Some(100_000));
    assert_eq!(tokens("/remaining/modelTokens"), Some(100_000));
    assert_eq!(tokens("/usage/modelTokens"), Some(0));
}
