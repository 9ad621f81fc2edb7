//! Negative evidence for rules the rows alone did not isolate (`matrix::RULES`): a stale value
//! in both directions for every fence (Session, Membership, revision), a reused Action ID, a
//! Command outside the freshness window, a lease check that only the lease can fail, and a
//! payload member no kind defines.

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::payloads::{self, W1};
use crate::scenario::{Build, Scenario, Watch};
use crate::steps::{self, Lease, by, worker};
use crate::world::{COORDINATOR, OWNER, WORKER, World};

const MAIN: &str = "urn:missionweaveprotocol:conversation:finance-main";
const REASON: &str = r#"{"reason": "the books are closed elsewhere"}"#;

fn post(id: &str) -> String {
    format!(
        r#"{{"messageId": "{id}", "conversationId": "{MAIN}",
        "content": [{{"type": "text", "text": "ready"}}]}}"#
    )
}

/// `mission.cancel` by the MissionOwner expecting Mission revision `revision` (§15.3).
fn cancel_expecting(revision: u64) -> Build {
    by(
        OWNER,
        "mission.cancel",
        &format!(r#""expectedRevision": {revision}"#),
        REASON,
    )
}

/// `work.start` of `W1` expecting WorkItem revision `revision` (§15.3).
fn start_expecting(revision: u64) -> Build {
    Box::new(move |w: &World| {
        let (epoch, lease) = steps::claim(w, W1, Lease::Ownership)?;
        w.command(
            "work.start",
            WORKER,
            &format!(r#""expectedRevision": {revision}"#),
            &format!(r#"{{"workItemId":"{W1}","ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
        )
    })
}

/// `mission.renew_coordinator` by the Coordinator under Action ID number `action` (`None`:
/// the last one signed), issued `age_ms` before now, renewing for `seconds`.
fn renew_as(action: Option<u64>, age_ms: u64, seconds: u64) -> Build {
    Box::new(move |w: &World| {
        let action = action.unwrap_or_else(|| w.last_action());
        w.command_as(
            action,
            UnixMillis(w.now().0.saturating_sub(age_ms as i64)),
            "mission.renew_coordinator",
            COORDINATOR,
            r#""coordinatorEpoch": 1"#,
            &format!(r#"{{"leaseSeconds": {seconds}}}"#),
        )
    })
}

pub fn scenarios() -> Vec<Scenario> {
    let m = Watch::Mission(crate::world::MISSION);
    let w1 = Watch::WorkItem(W1);
    vec![
        // §6.3: the Session fence refuses a newer (never issued) epoch too.
        Scenario::new("work.start: a Session Epoch never issued is fenced")
            .given(steps::queued(W1))
            .when(steps::worker_at_session(
                crate::world::SESSION_EPOCH + 1,
                "work.start",
                W1,
                Lease::Ownership,
            ))
            .watch(w1)
            .refused(WireCode::AuthStaleSession)
            .moves("queued", "queued"),
        // §8, §15.1: MEMBERSHIP_STALE for an older and a newer Membership Epoch.
        Scenario::new("message.post: an older Membership Epoch is fenced")
            .given(steps::worker_membership_epoch_2())
            .when(steps::at_membership(
                1,
                WORKER,
                "message.post",
                post("urn:missionweaveprotocol:message:m-old"),
            ))
            .refused(WireCode::MembershipStale),
        Scenario::new("message.post: a newer Membership Epoch is fenced")
            .given(steps::worker_membership_epoch_2())
            .when(steps::at_membership(
                3,
                WORKER,
                "message.post",
                post("urn:missionweaveprotocol:message:m-new"),
            ))
            .refused(WireCode::MembershipStale),
        Scenario::new("message.post: the current Membership Epoch posts")
            .given(steps::worker_membership_epoch_2())
            .when(steps::at_membership(
                2,
                WORKER,
                "message.post",
                post("urn:missionweaveprotocol:message:m-cur"),
            ))
            .emits(&["message.posted"]),
        // §15.1: the same Action ID with other content is ACTION_ID_COLLISION.
        Scenario::new("mission.renew_coordinator: a reused Action ID with other content")
            .given(vec![crate::scenario::Step::Perform(renew_as(
                Some(900),
                0,
                120,
            ))])
            .when(renew_as(Some(900), 0, 240))
            .watch(m)
            .refused(WireCode::ActionIdCollision),
        // §6.4, §15.1: a Command older than the freshness window is refused at ingress.
        Scenario::new("mission.renew_coordinator: issued before the freshness window")
            .when(renew_as(None, 301_000, 120))
            .watch(m)
            .refused(WireCode::AuthInvalidSignature),
        // §11.3 lease vs ownership: the current Ownership Epoch and Session, but the ownership
        // lease cited where the Execution Lease is required — only the lease check refuses.
        Scenario::new("work.checkpoint: the current epoch citing another lease")
            .given(steps::active(W1))
            .when(worker(
                "work.checkpoint",
                W1,
                Lease::Ownership,
                0,
                payloads::CHECKPOINT,
            ))
            .watch(w1)
            .refused(WireCode::WorkLeaseExpired)
            .moves("active", "active"),
        // §15.3 on the Mission: an older and a newer expectedRevision (current 2).
        Scenario::new("mission.cancel: a stale expectedRevision")
            .given(steps::awaiting())
            .when(cancel_expecting(1))
            .watch(m)
            .refused(WireCode::RevisionConflict)
            .moves("awaiting_approval", "awaiting_approval"),
        Scenario::new("mission.cancel: a future expectedRevision")
            .given(steps::awaiting())
            .when(cancel_expecting(3))
            .watch(m)
            .refused(WireCode::RevisionConflict)
            .moves("awaiting_approval", "awaiting_approval"),
        // §15.3 on the WorkItem: a newer expectedRevision (current 3; the older one is
        // "work.start: a stale expectedRevision").
        Scenario::new("work.start: a future expectedRevision")
            .given(steps::queued(W1))
            .when(start_expecting(4))
            .watch(w1)
            .refused(WireCode::RevisionConflict)
            .moves("queued", "queued"),
        // §15.1, §21: a payload member the kind does not define.
        Scenario::new("mission.cancel: a payload member no kind defines")
            .when(by(
                OWNER,
                "mission.cancel",
                "",
                r#"{"reason": "x", "approvedBy": "urn:missionweaveprotocol:human:bob"}"#,
            ))
            .watch(m)
            .refused(WireCode::SchemaValidationFailed)
            .moves("active", "active"),
    ]
}
