//! Rows `active --mission.submit_for_approval--> awaiting_approval`,
//! `awaiting_approval --mission.approve--> approved` and
//! `awaiting_approval --mission.request_changes--> active` (§7.1, §7.3, digest 2.1).
//!
//! An Approval binds the exact Mission revision and Artifact set that were submitted (§4.10,
//! §7.3). Requested changes reopen the same Mission; the submission stays in the Group's
//! history (its Event), so nothing is deleted.
//!
//! Payloads (docs/engine.md): submit `{artifactHashes}`; approve `{approvalId,
//! missionRevision, artifactHashes, acceptancePolicyVersion?, comments?}`; request changes
//! `{missionRevision, feedback}`.

use missionweaveprotocol::json::Value;

use super::aggregate::{MISSION_KIND, Mission, Submission};
use super::read::MissionRead;
use super::rules::{
    event_payload, existing, expected_revision, require_coordinator, require_owner, require_state,
    rewrite,
};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::input::num;
use crate::input::{artifact_hashes, opt_text, text, u64_member};
use crate::mission::state::MissionState;
use crate::store::AggregateKey;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `mission.submit_for_approval` → `mission.submitted_for_approval`, by the current
/// Coordinator (§7.2: only the current epoch may submit).
pub(crate) fn submit(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (group_revision, mut mission) = existing(read)?;
    require_coordinator(command, &mission, now)?;
    expected_revision(command, &mission)?;
    require_state(command, &mission, |s| s == MissionState::Active)?;
    let hashes = artifact_hashes(command.payload(), "artifactHashes")?;
    let read_revision = mission.revision();
    mission.transition(MissionState::AwaitingApproval);
    mission.submission = Some(Submission {
        mission_revision: mission.revision(),
        artifact_hashes: hashes.clone(),
    });
    let mut payload = event_payload(&mission);
    payload.insert("missionRevision", num(mission.revision()));
    payload.insert("artifactHashes", strings(&hashes));
    rewrite(
        command,
        group_revision,
        read_revision,
        &mission,
        "mission.submitted_for_approval",
        payload,
    )
}

/// `mission.approve` → `mission.approved`, by the MissionOwner, binding the submitted
/// revision and exactly the submitted Artifact set.
pub(crate) fn approve(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (group_revision, mut mission) = existing(read)?;
    expected_revision(command, &mission)?;
    require_owner(command, &mission)?;
    require_state(command, &mission, |s| s == MissionState::AwaitingApproval)?;
    let p = command.payload();
    let approval_id = text(p, "approvalId")?;
    let revision = bound_revision(p, &mission)?;
    let hashes = artifact_hashes(p, "artifactHashes")?;
    let submitted = submitted(&mission)?;
    let same_set = hashes.len() == submitted.artifact_hashes.len()
        && hashes.iter().all(|h| submitted.artifact_hashes.contains(h));
    if !same_set {
        return Err(EngineError::invalid(
            "artifact_set_mismatch",
            "artifactHashes must be exactly the submitted Artifact set",
        ));
    }
    let policy_version = opt_text(p, "acceptancePolicyVersion")?;
    let comments = opt_text(p, "comments")?;
    let read_revision = mission.revision();
    mission.transition(MissionState::Approved);
    let mut payload = event_payload(&mission);
    payload.insert("approvalId", Value::string(approval_id));
    payload.insert("missionRevision", num(revision));
    payload.insert("artifactHashes", strings(&hashes));
    if let Some(v) = policy_version {
        payload.insert("acceptancePolicyVersion", Value::string(v));
    }
    if let Some(c) = comments {
        payload.insert("comments", Value::string(c));
    }
    let decision = rewrite(
        command,
        group_revision,
        read_revision,
        &mission,
        "mission.approved",
        payload,
    )?;
    // §10.2 row 16: a child's approval verifies its parent WorkItem.
    match &read.family {
        Some(family) => super::cascade::after_approve(
            family,
            command,
            decision,
            &mission,
            approval_id,
            &hashes,
            now,
        ),
        None => Ok(decision),
    }
}

/// `mission.request_changes` → `mission.changes_requested`, by the MissionOwner: the same
/// Mission becomes `active` again (§7.3).
pub(crate) fn request_changes(
    read: &MissionRead,
    command: &VerifiedCommand,
    _now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (group_revision, mut mission) = existing(read)?;
    expected_revision(command, &mission)?;
    require_owner(command, &mission)?;
    require_state(command, &mission, |s| s == MissionState::AwaitingApproval)?;
    let p = command.payload();
    let revision = bound_revision(p, &mission)?;
    let feedback = text(p, "feedback")?;
    let read_revision = mission.revision();
    mission.transition(MissionState::Active);
    let mut payload = event_payload(&mission);
    payload.insert("missionRevision", num(revision));
    payload.insert("feedback", Value::string(feedback));
    rewrite(
        command,
        group_revision,
        read_revision,
        &mission,
        "mission.changes_requested",
        payload,
    )
}

fn submitted(mission: &Mission) -> Result<&Submission, EngineError> {
    // `awaiting_approval` is reached only through a submission, which records it.
    mission
        .submission
        .as_ref()
        .ok_or_else(|| EngineError::Corrupt {
            key: AggregateKey::new(MISSION_KIND, mission.mission_id()),
            detail: "awaiting approval without a submission".into(),
        })
}

/// The payload's `missionRevision` must be the submitted revision (§4.10: an Approval binds
/// an exact Mission revision): `REVISION_CONFLICT` otherwise.
fn bound_revision(payload: &Value, mission: &Mission) -> Result<u64, EngineError> {
    let named = u64_member(payload, "missionRevision")?;
    let submitted = submitted(mission)?.mission_revision;
    if named == submitted {
        Ok(named)
    } else {
        Err(EngineError::RevisionConflict {
            key: AggregateKey::new(MISSION_KIND, mission.mission_id()),
            expected: named,
            current: submitted,
        })
    }
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().map(Value::string).collect())
}
