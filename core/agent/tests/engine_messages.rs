//! Conversations and Messages through the engine (§9, §9.1 last paragraph, §4 invariants 2
//! and 6, digest 2.14): `message.post`, `message.correct`, `message.retract`,
//! `message.redact`, and the rule that a Message never authorizes an action. Every rule has a
//! positive and a negative case; every refusal appends nothing and stores nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../engine/tests/engine_work_fixture.rs"]
mod engine_work_fixture;

use engine_work_fixture::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::message::{
    MessageState, StoredMessage, cited_authorities, refuse_message_authority,
};

const MAIN: &str = "urn:missionweaveprotocol:conversation:finance-main";
const M1: &str = "urn:missionweaveprotocol:message:1";
const M2: &str = "urn:missionweaveprotocol:message:2";
const M3: &str = "urn:missionweaveprotocol:message:3";

fn post_payload(id: &str, conversation: &str, extra: &str) -> String {
    format!(
        r#"{{"messageId": "{id}", "conversationId": "{conversation}",
        "content": [{{"type": "text", "text": "The ledger is off by 3 EUR."}}]{extra}}}"#
    )
}

fn amend_payload(id: &str, target: &str, extra: &str) -> String {
    format!(
        r#"{{"messageId": "{id}", "targetMessageId": "{target}", "reason": "wrong figure"{extra}}}"#
    )
}

fn correct_payload(id: &str, target: &str) -> String {
    amend_payload(
        id,
        target,
        r#", "content": [{"type": "text", "text": "The ledger is off by 5 EUR."}]"#,
    )
}

fn post(f: &Fixture, actor: &str, id: &str) -> VerifiedCommand {
    f.command("message.post", actor, "", &post_payload(id, MAIN, ""))
}

fn stored(engine: &TestEngine, id: &str) -> Option<StoredMessage> {
    engine.message(GROUP, id).unwrap()
}

/// `membership.change` by the MissionOwner: `member` (`agent`/`human`) gets `role`.
fn add_member(f: &Fixture, engine: &TestEngine, kind: &str, member: &str, extra: &str) {
    f.ok(
        engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &format!(
                r#"{{"member": {{"type": "{kind}", "id": "{member}"}}, "role": "worker", "scopes": ["work:execute"]{extra}}}"#
            ),
        ),
        NOW,
    );
}

/// The Message document of a message.* Event, checked against `message.schema.json`.
fn message_of(event: &Value) -> &Value {
    let message = payload_of(event).get("message").unwrap();
    SchemaCatalog::embedded()
        .validate("message", message)
        .unwrap_or_else(|e| panic!("the Event's Message fails message.schema.json: {e}"));
    message
}

fn int(event: &Value, pointer: &str) -> u64 {
    event
        .pointer(pointer)
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .unwrap_or_else(|| panic!("no {pointer}"))
}

fn reason(error: &missionweaveprotocol_engine::error::EngineError) -> String {
    DescribeError::reason(error).to_owned()
}

// ---- message.post -----------------------------------------------------------------------

#[test]
fn the_mission_owner_posts_in_the_planning_conversation() {
    let f = fixture();
    let engine = f.active();
    let events = f.ok(&engine, &post(&f, OWNER, M1), NOW);
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(text(event, "/kind"), "message.posted");
    assert_eq!(text(event, "/conversationId"), MAIN);
    assert_eq!(int(event, "/aggregateRevision"), 1);
    let message = message_of(event);
    assert_eq!(message.get("authority"), Some(&Value::Bool(false)));
    assert_eq!(text(message, "/kind"), "message");
    assert_eq!(text(message, "/author/id"), OWNER);
    assert_eq!(text(message, "/missionId"), MISSION);
    assert_eq!(
        text(message, "/committedAt"),
        text(event, "/occurredAt"),
        "committed when the Group Authority accepted it"
    );
    let m = stored(&engine, M1).unwrap();
    assert_eq!((m.state(), m.revision()), (MessageState::Posted, 1));
    assert!(
        engine
            .message("urn:missionweaveprotocol:group:other", M1)
            .unwrap()
            .is_none(),
        "Message IDs are scoped to their Group"
    );
}

#[test]
fn a_message_is_queried_by_id_within_its_group() {
    use missionweaveprotocol_engine::engine::{Query, QueryKind};
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let mut query = Query::new(QueryKind::Message, M1);
    query.group_id = Some(GROUP.to_owned());
    let found = engine.query(&query, NOW).unwrap().unwrap();
    assert_eq!(text(&found, "/state"), "posted");
    assert_eq!(text(&found, "/message/messageId"), M1);
    // Another Group does not see it; without a Group the query is incomplete.
    query.group_id = Some("urn:missionweaveprotocol:group:other".to_owned());
    assert!(engine.query(&query, NOW).unwrap().is_none());
    let e = engine
        .query(&Query::new(QueryKind::Message, M1), NOW)
        .unwrap_err();
    assert_eq!(reason(&e), "message_query_incomplete");
}

#[test]
fn posting_into_an_unknown_group_is_group_not_found() {
    let f = fixture();
    let engine = f.engine();
    f.refused(&engine, &post(&f, OWNER, M1), NOW, WireCode::GroupNotFound);
}

#[test]
fn the_coordinator_posts_and_a_stale_coordinator_epoch_is_fenced() {
    let f = fixture();
    let engine = f.active();
    let stale = f.command(
        "message.post",
        COORDINATOR,
        r#""coordinatorEpoch": 2"#,
        &post_payload(M1, MAIN, ""),
    );
    f.refused(&engine, &stale, NOW, WireCode::AuthStaleCoordinator);
    let current = f.command(
        "message.post",
        COORDINATOR,
        r#""coordinatorEpoch": 1"#,
        &post_payload(M1, MAIN, ""),
    );
    f.ok(&engine, &current, NOW);
}

#[test]
fn a_worker_needs_an_active_membership_to_post() {
    let f = fixture();
    let engine = f.active();
    let e = f.refused(
        &engine,
        &post(&f, WORKER, M1),
        NOW,
        WireCode::MembershipRequired,
    );
    assert_eq!(reason(&e), "membership_required");
    add_member(&f, &engine, "agent", WORKER, "");
    f.ok(&engine, &post(&f, WORKER, M1), NOW);
}

#[test]
fn a_provisional_member_may_not_post_yet() {
    let f = fixture();
    let engine = f.active();
    add_member(
        &f,
        &engine,
        "agent",
        WORKER,
        r#", "provisional": true, "contextPackageId": "urn:missionweaveprotocol:context:1",
        "provisionalExpiresAt": "2026-07-15T10:30:00Z""#,
    );
    f.refused(
        &engine,
        &post(&f, WORKER, M1),
        NOW,
        WireCode::MembershipRequired,
    );
    assert!(stored(&engine, M1).is_none());
}

#[test]
fn a_human_without_membership_is_refused_and_a_member_human_posts() {
    let f = fixture();
    let engine = f.active();
    f.refused(
        &engine,
        &post(&f, OTHER_HUMAN, M1),
        NOW,
        WireCode::MembershipRequired,
    );
    add_member(&f, &engine, "human", OTHER_HUMAN, "");
    f.ok(&engine, &post(&f, OTHER_HUMAN, M1), NOW);
}

#[test]
fn a_service_has_no_membership_to_post_with() {
    let f = fixture();
    let engine = f.active();
    let command = f.verified(
        SERVICE,
        &f.unsigned(
            "message.post",
            SERVICE,
            &f.action(),
            "",
            &post_payload(M1, MAIN, ""),
        ),
    );
    f.refused(&engine, &command, NOW, WireCode::MembershipRequired);
}

#[test]
fn an_ended_membership_is_fenced() {
    let f = fixture();
    let engine = f.active();
    add_member(&f, &engine, "agent", WORKER, "");
    f.ok(
        &engine,
        &f.command(
            "membership.end",
            OWNER,
            "",
            &format!(r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}}}"#),
        ),
        NOW,
    );
    f.refused(
        &engine,
        &post(&f, WORKER, M1),
        NOW,
        WireCode::MembershipStale,
    );
}

// ---- Conversations and threads ----------------------------------------------------------

#[test]
fn an_unknown_conversation_is_refused() {
    let f = fixture();
    let engine = f.active();
    let command = f.command(
        "message.post",
        OWNER,
        "",
        &post_payload(M1, "urn:missionweaveprotocol:conversation:side", ""),
    );
    let e = f.refused(&engine, &command, NOW, WireCode::InvalidCommand);
    assert_eq!(reason(&e), "unknown_conversation");
}

#[test]
fn a_work_item_conversation_is_addressed_through_its_work_item() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    // The WorkItem's Conversation without naming the WorkItem: not a Conversation of the Group.
    let bare = f.command(
        "message.post",
        COORDINATOR,
        "",
        &post_payload(M1, CONVERSATION, ""),
    );
    let e = f.refused(&engine, &bare, NOW, WireCode::InvalidCommand);
    assert_eq!(reason(&e), "unknown_conversation");
    // The planning Conversation named with a WorkItem: the WorkItem's Conversation differs.
    let crossed = f.command(
        "message.post",
        COORDINATOR,
        &format!(r#""workItemId": "{W1}""#),
        &post_payload(M1, MAIN, ""),
    );
    f.refused(&engine, &crossed, NOW, WireCode::InvalidCommand);
    let unknown_item = f.command(
        "message.post",
        COORDINATOR,
        &format!(r#""workItemId": "{W2}""#),
        &post_payload(M1, CONVERSATION, ""),
    );
    f.refused(&engine, &unknown_item, NOW, WireCode::InvalidCommand);
    let good = f.command(
        "message.post",
        COORDINATOR,
        &format!(r#""workItemId": "{W1}", "conversationId": "{CONVERSATION}""#),
        &format!(
            r#"{{"messageId": "{M1}", "content": [{{"type": "text", "text": "Start with the bank feed."}}]}}"#
        ),
    );
    let events = f.ok(&engine, &good, NOW);
    assert_eq!(text(&events[0], "/conversationId"), CONVERSATION);
    assert_eq!(text(&events[0], "/workItemId"), W1);
    assert_eq!(stored(&engine, M1).unwrap().work_item_id(), Some(W1));
}

#[test]
fn payload_and_envelope_conversation_must_agree() {
    let f = fixture();
    let engine = f.active();
    let command = f.command(
        "message.post",
        OWNER,
        r#""conversationId": "urn:missionweaveprotocol:conversation:other""#,
        &post_payload(M1, MAIN, ""),
    );
    let e = f.refused(&engine, &command, NOW, WireCode::InvalidCommand);
    assert_eq!(reason(&e), "conversation_mismatch");
    let agreeing = f.command(
        "message.post",
        OWNER,
        &format!(r#""conversationId": "{MAIN}""#),
        &post_payload(M1, MAIN, ""),
    );
    f.ok(&engine, &agreeing, NOW);
}

#[test]
fn a_reply_stays_in_its_conversation() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let unknown = f.command(
        "message.post",
        OWNER,
        "",
        &post_payload(
            M2,
            MAIN,
            r#", "replyTo": "urn:missionweaveprotocol:message:none""#,
        ),
    );
    let e = f.refused(&engine, &unknown, NOW, WireCode::InvalidCommand);
    assert_eq!(reason(&e), "unknown_reply_target");
    let across = f.command(
        "message.post",
        COORDINATOR,
        &format!(r#""workItemId": "{W1}""#),
        &post_payload(M2, CONVERSATION, &format!(r#", "replyTo": "{M1}""#)),
    );
    let e = f.refused(&engine, &across, NOW, WireCode::InvalidCommand);
    assert_eq!(reason(&e), "reply_across_conversations");
    let reply = f.command(
        "message.post",
        COORDINATOR,
        "",
        &post_payload(
            M2,
            MAIN,
            &format!(r#", "replyTo": "{M1}", "references": ["{M1}", "urn:missionweaveprotocol:artifact:x"]"#),
        ),
    );
    let events = f.ok(&engine, &reply, NOW);
    let references = message_of(&events[0]).get("references").unwrap();
    assert_eq!(
        json::canonical_bytes(references).unwrap(),
        format!(r#"["{M1}","urn:missionweaveprotocol:artifact:x"]"#).into_bytes(),
        "the reply target leads the references, once"
    );
}

// ---- Mentions (attention, §8) ------------------------------------------------------------

#[test]
fn only_group_members_may_be_mentioned() {
    let f = fixture();
    let engine = f.active();
    let mention = |id: &str| {
        post_payload(
            id,
            MAIN,
            &format!(r#", "mentions": [{{"type": "agent", "id": "{WORKER}"}}]"#),
        )
    };
    let e = f.refused(
        &engine,
        &f.command("message.post", OWNER, "", &mention(M1)),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(reason(&e), "mention_not_member");
    add_member(&f, &engine, "agent", WORKER, "");
    let events = f.ok(
        &engine,
        &f.command("message.post", OWNER, "", &mention(M1)),
        NOW,
    );
    assert_eq!(text(message_of(&events[0]), "/mentions/0/id"), WORKER);
    // The Coordinator is always addressable (its authority is the lease, §7.2).
    let coordinator = post_payload(
        M2,
        MAIN,
        &format!(r#", "mentions": [{{"type": "agent", "id": "{COORDINATOR}"}}]"#),
    );
    f.ok(
        &engine,
        &f.command("message.post", WORKER, "", &coordinator),
        NOW,
    );
}

// ---- A Message never authorizes (§4 invariant 2) ----------------------------------------

#[test]
fn the_conformance_vector_message_authorizes_action_never_commits() {
    let f = fixture();
    let engine = f.active();
    let vector = missionweaveprotocol::bundle::embedded_file(
        "conformance/vectors/invalid/message-authorizes-action.json",
    )
    .expect("the pinned vector is embedded");
    let vector = json::parse(vector).unwrap();
    assert!(
        SchemaCatalog::embedded()
            .validate("message", &vector)
            .is_err()
    );
    // The vector's claim, sent as a Command: `authority: true` with its content.
    let content = json::canonical_bytes(vector.get("content").unwrap()).unwrap();
    let payload = format!(
        r#"{{"messageId": "{M1}", "conversationId": "{MAIN}", "authority": true, "content": {}}}"#,
        String::from_utf8(content).unwrap()
    );
    let e = f.refused(
        &engine,
        &f.command("message.post", COORDINATOR, "", &payload),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    assert!(e.to_string().contains("authority"));
    assert!(stored(&engine, M1).is_none());
    // `authority: false` is what every Message says anyway.
    let fine = payload.replace(r#""authority": true"#, r#""authority": false"#);
    f.ok(
        &engine,
        &f.command("message.post", COORDINATOR, "", &fine),
        NOW,
    );
}

#[test]
fn a_message_payload_carries_no_authorization_under_another_name() {
    let f = fixture();
    let engine = f.active();
    let payload = post_payload(
        M1,
        MAIN,
        r#", "authorization": {"workItemId": "urn:missionweaveprotocol:work:deploy"}"#,
    );
    let e = f.refused(
        &engine,
        &f.command("message.post", OWNER, "", &payload),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    // §21: the payload is closed; the refusal names the member.
    assert_eq!(reason(&e), "unknown_payload_member");
    assert!(e.to_string().contains("/payload/authorization"), "{e}");
    assert!(stored(&engine, M1).is_none());
}

#[test]
fn a_command_citing_a_message_as_its_authority_is_forbidden() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    // "Deploy immediately." is only conversation: citing it as a Delegation Grant (§9.1) or a
    // Cooperation Override Grant (§20) authorizes nothing.
    let by_grant = f.by_coordinator(
        "work.authorize",
        1,
        &format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","delegationGrantId":"{M1}","contract":{}}}"#,
            contract(&[])
        ),
    );
    let e = f.refused(&engine, &by_grant, NOW, WireCode::AuthForbidden);
    assert_eq!(reason(&e), "message_is_not_authority");
    let by_override = f.command(
        "work.authorize",
        COORDINATOR,
        &format!(r#""coordinatorEpoch": 1, "cooperationOverrideGrantId": "{M1}""#),
        &format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
            contract(&[])
        ),
    );
    let e = f.refused(&engine, &by_override, NOW, WireCode::AuthForbidden);
    assert_eq!(reason(&e), "message_is_not_authority");
    // The guard refuses only Messages: an ID that names none passes it (the kind decides).
    let other = f.by_coordinator(
        "work.authorize",
        1,
        &format!(
            r#"{{"workItemId":"{W1}","delegationGrantId":"urn:missionweaveprotocol:grant:1","contract":{}}}"#,
            contract(&[])
        ),
    );
    assert_eq!(
        cited_authorities(&other),
        vec![(
            "delegationGrantId".to_owned(),
            "urn:missionweaveprotocol:grant:1"
        )]
    );
    refuse_message_authority(engine.store(), &other).unwrap();
    // And a Command citing nothing is not touched.
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
}

// ---- Identity of Messages ----------------------------------------------------------------

#[test]
fn a_message_id_is_used_once_per_group() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    f.refused(
        &engine,
        &post(&f, COORDINATOR, M1),
        NOW,
        WireCode::InvalidStateTransition,
    );
    let duplicate = post(&f, OWNER, M2);
    let first = f.ok(&engine, &duplicate, NOW);
    let again = engine.perform(&duplicate, NOW).unwrap();
    assert!(
        again.duplicate,
        "§15.1: the same signed Command answers its Event"
    );
    assert_eq!(f.checked(&again), first);
}

#[test]
fn expected_revision_names_the_amended_message() {
    let f = fixture();
    let engine = f.active();
    let stale_post = f.command(
        "message.post",
        OWNER,
        r#""expectedRevision": 1"#,
        &post_payload(M1, MAIN, ""),
    );
    f.refused(&engine, &stale_post, NOW, WireCode::RevisionConflict);
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let stale = f.command(
        "message.correct",
        OWNER,
        r#""expectedRevision": 2"#,
        &correct_payload(M2, M1),
    );
    f.refused(&engine, &stale, NOW, WireCode::RevisionConflict);
    let current = f.command(
        "message.correct",
        OWNER,
        r#""expectedRevision": 1"#,
        &correct_payload(M2, M1),
    );
    f.ok(&engine, &current, NOW);
}

// ---- message.correct --------------------------------------------------------------------

#[test]
fn the_author_corrects_and_the_original_stays_in_the_log() {
    let f = fixture();
    let engine = f.active();
    let posted = f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let events = f.ok(
        &engine,
        &f.command("message.correct", OWNER, "", &correct_payload(M2, M1)),
        NOW,
    );
    let event = &events[0];
    assert_eq!(text(event, "/kind"), "message.corrected");
    assert_eq!(int(event, "/aggregateRevision"), 2);
    assert_eq!(text(event, "/payload/targetState"), "corrected");
    let correction = message_of(event);
    assert_eq!(text(correction, "/kind"), "correction");
    assert_eq!(text(correction, "/targetMessageId"), M1);
    assert_eq!(text(correction, "/reason"), "wrong figure");
    assert_eq!(text(correction, "/conversationId"), MAIN);
    let original = stored(&engine, M1).unwrap();
    assert_eq!(original.state(), MessageState::Corrected);
    assert_eq!(original.last_amendment_id(), Some(M2));
    assert_eq!(
        original.document().get("content"),
        message_of(&posted[0]).get("content"),
        "a correction never rewrites the original"
    );
    // The Group log still holds the original Event byte for byte (§4 invariant 6).
    let log = whole_log(&f, &engine);
    assert!(log.contains(&posted[0]));
    // A second correction of the same original is fine.
    f.ok(
        &engine,
        &f.command("message.correct", OWNER, "", &correct_payload(M3, M1)),
        NOW,
    );
}

#[test]
fn only_the_author_corrects() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let e = f.refused(
        &engine,
        &f.command("message.correct", COORDINATOR, "", &correct_payload(M2, M1)),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "not_message_author");
    assert_eq!(stored(&engine, M1).unwrap().state(), MessageState::Posted);
    assert!(stored(&engine, M2).is_none());
}

#[test]
fn a_correction_needs_an_existing_original_message() {
    let f = fixture();
    let engine = f.active();
    let e = f.refused(
        &engine,
        &f.command("message.correct", OWNER, "", &correct_payload(M2, M1)),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(reason(&e), "unknown_message");
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    f.ok(
        &engine,
        &f.command("message.correct", OWNER, "", &correct_payload(M2, M1)),
        NOW,
    );
    // A correction is not itself corrected: the original is.
    let e = f.refused(
        &engine,
        &f.command("message.correct", OWNER, "", &correct_payload(M3, M2)),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(reason(&e), "target_is_amendment");
}

#[test]
fn a_correction_needs_content_and_a_reason() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let no_content = amend_payload(M2, M1, "");
    f.refused(
        &engine,
        &f.command("message.correct", OWNER, "", &no_content),
        NOW,
        WireCode::InvalidCommand,
    );
    let no_reason = format!(
        r#"{{"messageId": "{M2}", "targetMessageId": "{M1}", "content": [{{"type": "text", "text": "5 EUR"}}]}}"#
    );
    f.refused(
        &engine,
        &f.command("message.correct", OWNER, "", &no_reason),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(stored(&engine, M1).unwrap().state(), MessageState::Posted);
}

// ---- message.retract --------------------------------------------------------------------

#[test]
fn the_author_retracts_once_and_a_retracted_message_is_not_corrected() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let events = f.ok(
        &engine,
        &f.command("message.retract", OWNER, "", &amend_payload(M2, M1, "")),
        NOW,
    );
    assert_eq!(text(&events[0], "/kind"), "message.retracted");
    let retraction = message_of(&events[0]);
    assert_eq!(text(retraction, "/kind"), "retraction");
    assert_eq!(
        text(retraction, "/content/0/text"),
        "wrong figure",
        "without content the reason is the retraction's content"
    );
    assert_eq!(
        stored(&engine, M1).unwrap().state(),
        MessageState::Retracted
    );
    f.refused(
        &engine,
        &f.command("message.retract", OWNER, "", &amend_payload(M3, M1, "")),
        NOW,
        WireCode::InvalidStateTransition,
    );
    f.refused(
        &engine,
        &f.command("message.correct", OWNER, "", &correct_payload(M3, M1)),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

#[test]
fn only_the_author_retracts() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, COORDINATOR, M1), NOW);
    let e = f.refused(
        &engine,
        &f.command("message.retract", OWNER, "", &amend_payload(M2, M1, "")),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "not_message_author");
    f.ok(
        &engine,
        &f.command(
            "message.retract",
            COORDINATOR,
            "",
            &amend_payload(M2, M1, ""),
        ),
        NOW,
    );
}

// ---- message.redact ---------------------------------------------------------------------

#[test]
fn the_mission_owner_redacts_the_body_and_provenance_stays() {
    let f = fixture();
    let engine = f.active();
    add_member(&f, &engine, "agent", WORKER, "");
    f.ok(&engine, &post(&f, WORKER, M1), NOW);
    let redact = amend_payload(
        M2,
        M1,
        r#", "content": [{"type": "text", "text": "Removed: it quoted a credential."}]"#,
    )
    .replace(
        "wrong figure",
        "policy: credentials must not appear in Messages (§12)",
    );
    let events = f.ok(
        &engine,
        &f.command("message.redact", OWNER, "", &redact),
        NOW,
    );
    let event = &events[0];
    assert_eq!(text(event, "/kind"), "message.redacted");
    let redaction = message_of(event);
    assert_eq!(text(redaction, "/kind"), "redaction");
    assert!(text(redaction, "/reason").starts_with("policy:"));
    assert!(
        !String::from_utf8(json::canonical_bytes(event).unwrap())
            .unwrap()
            .contains("off by 3"),
        "the redaction never repeats the body"
    );
    let m = stored(&engine, M1).unwrap();
    assert_eq!(m.state(), MessageState::Redacted);
    assert!(m.document().get("content").is_none(), "the body is gone");
    assert_eq!(m.author().unwrap().id, WORKER, "provenance stays");
    assert_eq!(m.conversation_id(), MAIN);
    assert_eq!(m.message_id(), M1);
    // Redacted once: nothing amends it again.
    f.refused(
        &engine,
        &f.command("message.redact", OWNER, "", &amend_payload(M3, M1, "")),
        NOW,
        WireCode::InvalidStateTransition,
    );
    f.refused(
        &engine,
        &f.command("message.correct", WORKER, "", &correct_payload(M3, M1)),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

#[test]
fn redaction_requires_a_policy_reason() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let no_reason = format!(r#"{{"messageId": "{M2}", "targetMessageId": "{M1}"}}"#);
    f.refused(
        &engine,
        &f.command("message.redact", OWNER, "", &no_reason),
        NOW,
        WireCode::InvalidCommand,
    );
    let empty = format!(r#"{{"messageId": "{M2}", "targetMessageId": "{M1}", "reason": ""}}"#);
    f.refused(
        &engine,
        &f.command("message.redact", OWNER, "", &empty),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(stored(&engine, M1).unwrap().state(), MessageState::Posted);
}

#[test]
fn redaction_by_author_owner_or_coordinator_only() {
    let f = fixture();
    let engine = f.active();
    add_member(&f, &engine, "agent", WORKER, "");
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    // Another member is neither author, MissionOwner nor Coordinator.
    let e = f.refused(
        &engine,
        &f.command("message.redact", WORKER, "", &amend_payload(M2, M1, "")),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "not_author_owner_or_coordinator");
    // The Coordinator may (it inspects the whole audit boundary, §9).
    f.ok(
        &engine,
        &f.command(
            "message.redact",
            COORDINATOR,
            "",
            &amend_payload(M2, M1, ""),
        ),
        NOW,
    );
}

#[test]
fn retracted_messages_and_corrections_can_be_redacted_but_not_redactions() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    f.ok(
        &engine,
        &f.command("message.correct", OWNER, "", &correct_payload(M2, M1)),
        NOW,
    );
    // The correction itself may carry what must go.
    f.ok(
        &engine,
        &f.command("message.redact", OWNER, "", &amend_payload(M3, M2, "")),
        NOW,
    );
    assert_eq!(stored(&engine, M2).unwrap().state(), MessageState::Redacted);
    let e = f.refused(
        &engine,
        &f.command(
            "message.redact",
            OWNER,
            "",
            &amend_payload("urn:missionweaveprotocol:message:4", M3, ""),
        ),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(reason(&e), "target_is_amendment");
    f.ok(
        &engine,
        &f.command(
            "message.retract",
            OWNER,
            "",
            &amend_payload("urn:missionweaveprotocol:message:5", M1, ""),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.command(
            "message.redact",
            OWNER,
            "",
            &amend_payload("urn:missionweaveprotocol:message:6", M1, ""),
        ),
        NOW,
    );
    assert_eq!(stored(&engine, M1).unwrap().state(), MessageState::Redacted);
}

#[test]
fn an_amendment_stays_in_the_conversation_of_its_target() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &post(&f, OWNER, M1), NOW);
    let elsewhere = f.command(
        "message.correct",
        OWNER,
        r#""conversationId": "urn:missionweaveprotocol:conversation:other""#,
        &correct_payload(M2, M1),
    );
    let e = f.refused(&engine, &elsewhere, NOW, WireCode::InvalidCommand);
    assert_eq!(reason(&e), "conversation_mismatch");
    let same = f.command(
        "message.correct",
        OWNER,
        &format!(r#""conversationId": "{MAIN}""#),
        &correct_payload(M2, M1),
    );
    f.ok(&engine, &same, NOW);
}

// ---- Bounded offline execution (§11.5): a buffered message.post ------------------------

mod offline {
    use super::*;
    use missionweaveprotocol::crypto::SigningKey;
    use missionweaveprotocol_agent::offline::{
        InMemoryOutbox, OfflineAssignment, OfflineExecutionPolicy, RebaseInput,
        rebase_offline_command,
    };
    use missionweaveprotocol_engine::budget::account::{BudgetAccount, account_key};
    use missionweaveprotocol_engine::ingress::{AllowAllAuthorizerForTests, CommandIngress};
    use missionweaveprotocol_engine::store::Store;
    use missionweaveprotocol_kernel::budget::AccountKind;
    use missionweaveprotocol_kernel::offline::OfflineLimits;
    use missionweaveprotocol_kernel::resources::{Dimension, Resources};
    use missionweaveprotocol_kernel::unix_millis::UnixMillis;

    const RECORDED: &str = "ext.missionweaveprotocol.core.resource_usage_recorded";

    fn at(seconds: u64) -> UnixMillis {
        NOW.saturating_add_ms(seconds * 1_000)
    }

    fn key(f: &Fixture, id: &str) -> SigningKey {
        f.keys.iter().find(|(p, _)| p.id == id).unwrap().1.clone()
    }

    fn tool_calls(engine: &TestEngine, kind: AccountKind, id: &str) -> u64 {
        let stored = engine
            .store()
            .aggregate(&account_key(kind, id))
            .unwrap()
            .unwrap();
        BudgetAccount::from_stored(&stored.value)
            .unwrap()
            .usage
            .get(Dimension::ToolCalls)
    }

    /// The Worker (a member) owns an active W1; it disconnects at 10 s and buffers a Message
    /// in W1's Conversation at 20 s with `tools` offline tool calls; it reconnects at 40 s (a
    /// new Session revokes the lease), re-starts W1 and rebases the Message at 42 s.
    fn reconciled_post(tools: u64) -> (Fixture, TestEngine, VerifiedCommand) {
        let f = fixture();
        let engine = f.active();
        add_member(&f, &engine, "agent", WORKER, "");
        f.active_item(&engine, W1);
        let (_, item) = engine_work_fixture::stored(&engine, W1);
        let lease = item.execution_lease.as_ref().unwrap();
        let assignment = OfflineAssignment {
            agent_id: WORKER.to_owned(),
            group_id: GROUP.to_owned(),
            work_item_id: W1.to_owned(),
            conversation_id: Some(CONVERSATION.to_owned()),
            session_epoch: 1,
            ownership_epoch: item.owner.as_ref().unwrap().ownership_epoch,
            execution_lease_id: lease.lease_id().to_owned(),
            execution_lease_expires_at: lease.window().expires_at,
        };
        let limits = OfflineLimits {
            max_disconnect_grace_ms: 60_000,
            max_actions: 4,
            max_usage: Resources::ZERO.with(Dimension::ToolCalls, 100),
        };
        let mut policy = OfflineExecutionPolicy::new(assignment, at(10), limits).unwrap();
        let message = f.unsigned(
            "message.post",
            WORKER,
            &f.action(),
            &format!(r#""workItemId": "{W1}", "conversationId": "{CONVERSATION}""#),
            &format!(
                r#"{{"messageId": "{M1}", "content": [{{"type": "text", "text": "Drafted offline."}}]}}"#
            ),
        );
        let buffered = policy
            .buffer(
                &mut InMemoryOutbox::new(),
                &key(&f, WORKER),
                &message,
                Resources::ZERO.with(Dimension::ToolCalls, tools),
                at(20),
            )
            .unwrap();
        engine.perform(&f.session_open(WORKER), at(40)).unwrap();
        f.use_session_epoch(2);
        let (epoch, replacement) = ownership(&engine, W1);
        f.ok(
            &engine,
            &f.by_worker("work.start", WORKER, W1, epoch, &replacement, ""),
            at(40),
        );
        let rebased = rebase_offline_command(
            &buffered,
            &key(&f, WORKER),
            &RebaseInput {
                session_epoch: 2,
                membership_epoch: 1,
                issued_at: at(42),
                execution_lease_id: None,
            },
        )
        .unwrap();
        let command = CommandIngress::new(AllowAllAuthorizerForTests)
            .verify(
                &json::canonical_bytes(&rebased).unwrap(),
                &f.registry,
                at(42),
            )
            .unwrap();
        (f, engine, command)
    }

    #[test]
    fn a_buffered_message_is_charged_then_posted() {
        let (f, engine, command) = reconciled_post(2);
        let before = tool_calls(&engine, AccountKind::WorkItem, W1);
        let events = f.ok(&engine, &command, at(42));
        let kinds: Vec<&str> = events.iter().map(|e| text(e, "/kind")).collect();
        assert_eq!(kinds, vec![RECORDED, "message.posted"]);
        assert_eq!(text(&events[1], "/workItemId"), W1);
        assert_eq!(tool_calls(&engine, AccountKind::WorkItem, W1), before + 2);
        assert_eq!(tool_calls(&engine, AccountKind::Mission, MISSION), 2);
        let m = stored(&engine, M1).unwrap();
        assert_eq!(
            (m.state(), m.conversation_id()),
            (MessageState::Posted, CONVERSATION)
        );
        assert!(
            engine.perform(&command, at(43)).unwrap().duplicate,
            "charged once"
        );
        assert_eq!(tool_calls(&engine, AccountKind::Mission, MISSION), 2);
    }

    #[test]
    fn an_offline_overflow_posts_nothing_and_charges_nothing() {
        // W1's contract grants 10 tool calls (§12: one-dimension overflow rejects it all).
        let (f, engine, command) = reconciled_post(11);
        let before = tool_calls(&engine, AccountKind::WorkItem, W1);
        f.refused(&engine, &command, at(42), WireCode::BudgetExceeded);
        assert!(stored(&engine, M1).is_none(), "the Message is not posted");
        assert_eq!(tool_calls(&engine, AccountKind::WorkItem, W1), before);
    }
}
