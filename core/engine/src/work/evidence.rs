//! Evidence coverage of acceptance criteria (§13.2).
//!
//! The engine verifies each Evidence document (signed, `evidence.schema.json`) and hands this
//! module the parts review needs as [`EvidenceRef`]s. Two rules:
//! - `work.submit`: every acceptance criterion is mapped by at least one submitted Evidence
//!   ("Submission MUST include Evidence mapped to acceptance criteria").
//! - `work.accept_result`: for every criterion, every `evidenceRequired` type has a `passed`
//!   Evidence of that type among the submission and review Evidence (review is evidence-based;
//!   reviewer and human Evidence may only exist after submission, so this is checked at review).

use missionweaveprotocol::json::Value;

use super::contract::WorkContract;
use super::error::WorkError;

/// Evidence `result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvidenceResult {
    /// The check passed.
    Passed,
    /// The check failed.
    Failed,
    /// No conclusion.
    Inconclusive,
}

missionweaveprotocol::spelling!(EvidenceResult {
    Passed => "passed",
    Failed => "failed",
    Inconclusive => "inconclusive",
});

/// What review needs from one verified Evidence document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvidenceRef {
    /// `evidenceId`.
    pub evidence_id: String,
    /// `workItemId` it is about.
    pub work_item_id: String,
    /// `type` (`deterministic_test`, …).
    pub evidence_type: String,
    /// `criterionIds` it maps to.
    pub criterion_ids: Vec<String>,
    /// `result`.
    pub result: EvidenceResult,
}

impl EvidenceRef {
    /// Reads the members review needs from an Evidence document (already verified and
    /// schema-valid); `None` when one is missing.
    pub fn from_document(document: &Value) -> Option<Self> {
        let text = |name: &str| {
            document
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Some(Self {
            evidence_id: text("evidenceId")?,
            work_item_id: text("workItemId")?,
            evidence_type: text("type")?,
            criterion_ids: document
                .get("criterionIds")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            result: EvidenceResult::parse(document.get("result")?.as_str()?)?,
        })
    }
}

/// Every Evidence is about this WorkItem and maps only to criteria of its contract; IDs unique.
pub fn check_belongs(
    work_item_id: &str,
    contract: &WorkContract,
    evidence: &[EvidenceRef],
) -> Result<(), WorkError> {
    for (index, item) in evidence.iter().enumerate() {
        let known = |id: &String| contract.criteria().iter().any(|c| &c.criterion_id == id);
        if item.work_item_id != work_item_id
            || item.criterion_ids.is_empty()
            || !item.criterion_ids.iter().all(known)
            || evidence[..index]
                .iter()
                .any(|e| e.evidence_id == item.evidence_id)
        {
            return Err(WorkError::EvidenceMismatch(item.evidence_id.clone()));
        }
    }
    Ok(())
}

/// `work.submit` (§13.2): each criterion is mapped by some submitted Evidence.
pub fn check_mapped(contract: &WorkContract, evidence: &[EvidenceRef]) -> Result<(), WorkError> {
    for criterion in contract.criteria() {
        if !evidence
            .iter()
            .any(|e| e.criterion_ids.contains(&criterion.criterion_id))
        {
            return Err(WorkError::CriterionNotCovered(
                criterion.criterion_id.clone(),
            ));
        }
    }
    Ok(())
}

/// `work.accept_result` (§13.2): each required Evidence type of each criterion has a `passed`
/// Evidence among `evidence`.
pub fn check_satisfied(contract: &WorkContract, evidence: &[EvidenceRef]) -> Result<(), WorkError> {
    for criterion in contract.criteria() {
        for required in &criterion.evidence_required {
            let satisfied = evidence.iter().any(|e| {
                e.result == EvidenceResult::Passed
                    && &e.evidence_type == required
                    && e.criterion_ids.contains(&criterion.criterion_id)
            });
            if !satisfied {
                return Err(WorkError::CriterionNotSatisfied(
                    criterion.criterion_id.clone(),
                    required.clone(),
                ));
            }
        }
    }
    Ok(())
}
