//! Conversation and Message scenarios (§9, §9.1 last paragraph, §4 invariants 2 and 6,
//! digest 2.14). The Message aggregate is observed through `Engine::message` in checks.

use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::message::MessageState;

use crate::payloads::{self, W1};
use crate::scenario::{Scenario, Step};
use crate::steps::{by, coordinator};
use crate::world::{COORDINATOR, GROUP, OWNER, WORKER, World};

/// The Group's planning Conversation (`payloads::create_mission`).
const MAIN: &str = "urn:missionweaveprotocol:conversation:finance-main";
const M1: &str = "urn:missionweaveprotocol:message:m1";
const M2: &str = "urn:missionweaveprotocol:message:m2";
const M3: &str = "urn:missionweaveprotocol:message:m3";

fn post(id: &str, extra: &str) -> String {
    format!(
        r#"{{"messageId": "{id}", "conversationId": "{MAIN}",
        "content": [{{"type": "text", "text": "Deploy immediately."}}]{extra}}}"#
    )
}

fn amend(id: &str, target: &str, extra: &str) -> String {
    format!(
        r#"{{"messageId": "{id}", "targetMessageId": "{target}", "reason": "policy: no deploy orders in chat"{extra}}}"#
    )
}

fn correction(id: &str, target: &str) -> String {
    amend(
        id,
        target,
        r#", "content": [{"type": "text", "text": "Deploy after approval."}]"#,
    )
}

/// `M1` posted by the MissionOwner in the planning Conversation.
fn posted_by_owner() -> Vec<Step> {
    vec![Step::Perform(by(OWNER, "message.post", "", post(M1, "")))]
}

/// The Worker joins the Group (`membership.change` by the MissionOwner).
fn worker_member() -> Vec<Step> {
    vec![Step::Perform(by(
        OWNER,
        "membership.change",
        "",
        format!(
            r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "worker", "scopes": ["work:execute"]}}"#
        ),
    ))]
}

/// The stored state of Message `id` (`none` when absent).
fn state(w: &World, id: &str) -> Result<String, String> {
    Ok(w.engine()
        .message(GROUP, id)
        .map_err(|e| e.to_string())?
        .map_or("none".to_owned(), |m| m.state().as_str().to_owned()))
}

fn expect(w: &World, id: &str, expected: &str) -> Result<(), String> {
    let found = state(w, id)?;
    (found == expected)
        .then_some(())
        .ok_or(format!("Message {id} is {found}, expected {expected}"))
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        // ---- message.post ----
        Scenario::new("message.post: the Coordinator posts in the planning Conversation")
            .when(by(COORDINATOR, "message.post", "", post(M1, "")))
            .emits(&["message.posted"])
            .check("the Message is stored, posted, authority false", |w| {
                expect(w, M1, MessageState::Posted.as_str())
            }),
        Scenario::new("message.post: a Worker without Membership")
            .when(by(WORKER, "message.post", "", post(M1, "")))
            .refused(WireCode::MembershipRequired)
            .check("no Message is stored", |w| expect(w, M1, "none")),
        Scenario::new("message.post: a Message claiming authority never commits")
            .when(by(
                COORDINATOR,
                "message.post",
                "",
                post(M1, r#", "authority": true"#),
            ))
            .refused(WireCode::SchemaValidationFailed)
            .check("no Message is stored", |w| expect(w, M1, "none")),
        Scenario::new("message.post: mentioning an Agent that is not a member")
            .when(by(
                OWNER,
                "message.post",
                "",
                post(
                    M1,
                    &format!(r#", "mentions": [{{"type": "agent", "id": "{WORKER}"}}]"#),
                ),
            ))
            .refused(WireCode::InvalidCommand),
        Scenario::new("message.post: a member Worker mentions the Coordinator")
            .given(worker_member())
            .when(by(
                WORKER,
                "message.post",
                "",
                post(
                    M1,
                    &format!(r#", "mentions": [{{"type": "agent", "id": "{COORDINATOR}"}}]"#),
                ),
            ))
            .emits(&["message.posted"]),
        Scenario::new("message.post: an unknown Conversation")
            .when(by(
                OWNER,
                "message.post",
                "",
                post(M1, "").replace(MAIN, "urn:missionweaveprotocol:conversation:side"),
            ))
            .refused(WireCode::InvalidCommand),
        // ---- message.correct ----
        Scenario::new("message.correct: the author corrects its Message")
            .given(posted_by_owner())
            .when(by(OWNER, "message.correct", "", correction(M2, M1)))
            .emits(&["message.corrected"])
            .check("the original is corrected, the correction posted", |w| {
                expect(w, M1, "corrected")?;
                expect(w, M2, "posted")
            }),
        Scenario::new("message.correct: another member is not the author")
            .given(posted_by_owner())
            .when(by(COORDINATOR, "message.correct", "", correction(M2, M1)))
            .refused(WireCode::AuthForbidden)
            .check("the original is unchanged", |w| expect(w, M1, "posted")),
        // ---- message.retract ----
        Scenario::new("message.retract: the author retracts its Message")
            .given(posted_by_owner())
            .when(by(OWNER, "message.retract", "", amend(M2, M1, "")))
            .emits(&["message.retracted"])
            .check("the original is retracted", |w| expect(w, M1, "retracted")),
        Scenario::new("message.retract: a retracted Message stays retracted")
            .given(posted_by_owner())
            .given(vec![Step::Perform(by(
                OWNER,
                "message.retract",
                "",
                amend(M2, M1, ""),
            ))])
            .when(by(OWNER, "message.retract", "", amend(M3, M1, "")))
            .refused(WireCode::InvalidStateTransition)
            .check("no second retraction is stored", |w| expect(w, M3, "none")),
        // ---- message.redact ----
        Scenario::new("message.redact: the MissionOwner redacts a Worker's Message")
            .given(worker_member())
            .given(vec![Step::Perform(by(
                WORKER,
                "message.post",
                "",
                post(M1, ""),
            ))])
            .when(by(OWNER, "message.redact", "", amend(M2, M1, "")))
            .emits(&["message.redacted"])
            .check("the body is gone, the provenance stays", |w| {
                let m = w
                    .engine()
                    .message(GROUP, M1)
                    .map_err(|e| e.to_string())?
                    .ok_or("M1 vanished")?;
                let author = m.author().map(|a| a.id);
                match (m.state(), m.document().get("content"), author.as_deref()) {
                    (MessageState::Redacted, None, Some(WORKER)) => Ok(()),
                    other => Err(format!("stored {other:?}")),
                }
            }),
        Scenario::new("message.redact: no policy reason")
            .given(posted_by_owner())
            .when(by(
                OWNER,
                "message.redact",
                "",
                format!(r#"{{"messageId": "{M2}", "targetMessageId": "{M1}"}}"#),
            ))
            .refused(WireCode::InvalidCommand)
            .check("the original is unchanged", |w| expect(w, M1, "posted")),
        // ---- §4 invariant 2 on another kind ----
        Scenario::new("work.authorize: citing a Message as its Delegation Grant is forbidden")
            .given(posted_by_owner())
            .when(coordinator(
                "work.authorize",
                payloads::authorize(W1, &[]).replacen(
                    r#""workItemId""#,
                    &format!(r#""delegationGrantId":"{M1}","workItemId""#),
                    1,
                ),
            ))
            .refused(WireCode::AuthForbidden),
    ]
}
