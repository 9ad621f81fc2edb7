//! Rows 11–12: `work.submit` (`active` → `submitted`, Artifacts and Evidence mapped to the
//! acceptance criteria, §13.2) and `work.accept_result` (`submitted` → `verified`, an
//! evidence-based Coordinator review; the Coordinator Epoch is the engine's check).

use missionweaveprotocol::json::Value;

use super::{event, integer, require_state, strings, timestamp, touch};
use crate::work::error::WorkError;
use crate::work::evidence::{EvidenceRef, check_belongs, check_mapped, check_satisfied};
use crate::work::fencing::{WorkClaim, check_epoch, check_execution_claim};
use crate::work::state::{Submission, Transition, WorkItem, WorkItemState};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `work.submit` input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmitInput {
    /// The owner's claim citing the current Execution Lease (§11.3).
    pub claim: WorkClaim,
    /// Published Artifact hashes (≥ 1, `sha256:` + 64 lowercase hex).
    pub artifact_hashes: Vec<String>,
    /// The verified Evidence mapped to the acceptance criteria (≥ 1).
    pub evidence: Vec<EvidenceRef>,
}

fn is_sha256(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Row 11: `active` → `submitted`; releases the Execution Lease ("work submitted").
pub fn submit(
    item: &WorkItem,
    input: SubmitInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    check_epoch(item, &input.claim)?;
    require_state(item, "work.submit", &[WorkItemState::Active])?;
    check_execution_claim(item, &input.claim, now)?;
    if input.artifact_hashes.is_empty() {
        return Err(WorkError::InvalidInput(
            "artifactHashes",
            "at least one Artifact",
        ));
    }
    for (index, hash) in input.artifact_hashes.iter().enumerate() {
        if !is_sha256(hash) || input.artifact_hashes[..index].contains(hash) {
            return Err(WorkError::InvalidInput(
                "artifactHashes",
                "distinct sha256 content hashes",
            ));
        }
    }
    if input.evidence.is_empty() {
        return Err(WorkError::InvalidInput("evidence", "at least one Evidence"));
    }
    check_belongs(&item.work_item_id, &item.contract, &input.evidence)?;
    check_mapped(&item.contract, &input.evidence)?;
    let mut next = item.clone();
    if let Some(lease) = &mut next.execution_lease {
        lease.release(now, "work submitted")?;
    }
    let evidence_ids: Vec<String> = input
        .evidence
        .iter()
        .map(|e| e.evidence_id.clone())
        .collect();
    next.submission = Some(Submission {
        artifact_hashes: input.artifact_hashes.clone(),
        evidence: input.evidence,
        submitted_at: now,
    });
    next.state = WorkItemState::Submitted;
    touch(&mut next, now);
    let submitted = event(
        "work.submitted",
        &next,
        [
            ("artifactHashes", strings(&input.artifact_hashes)),
            ("evidenceIds", strings(&evidence_ids)),
            ("ownershipEpoch", integer(input.claim.ownership_epoch)),
            (
                "executionLeaseId",
                Value::string(input.claim.lease_id.as_str()),
            ),
            ("submittedAt", timestamp(now)?),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![submitted],
    })
}

/// `work.accept_result` input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcceptResultInput {
    /// The review's verified Evidence (≥ 1).
    pub evidence: Vec<EvidenceRef>,
}

/// Row 12: `submitted` → `verified` when, for every criterion, each required Evidence type has
/// a passing Evidence among the submission's and the review's.
pub fn accept_result(
    item: &WorkItem,
    input: AcceptResultInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    require_state(item, "work.accept_result", &[WorkItemState::Submitted])?;
    let submission = item
        .submission
        .as_ref()
        .ok_or(WorkError::Document("submission"))?;
    if input.evidence.is_empty() {
        return Err(WorkError::InvalidInput(
            "evidence",
            "at least one review Evidence",
        ));
    }
    let mut all = submission.evidence.clone();
    all.extend(input.evidence.iter().cloned());
    check_belongs(&item.work_item_id, &item.contract, &all)?;
    check_satisfied(&item.contract, &all)?;
    let mut next = item.clone();
    next.review_evidence = input.evidence;
    next.state = WorkItemState::Verified;
    touch(&mut next, now);
    let review_ids: Vec<String> = next
        .review_evidence
        .iter()
        .map(|e| e.evidence_id.clone())
        .collect();
    let accepted = event(
        "work.result.accepted",
        &next,
        [
            ("artifactHashes", strings(&submission.artifact_hashes)),
            ("evidenceIds", strings(&review_ids)),
            (
                "ownershipEpoch",
                integer(next.owner.as_ref().map_or(0, |o| o.ownership_epoch)),
            ),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![accepted],
    })
}
