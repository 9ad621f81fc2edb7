//! The Work Contract (§10.1, `work-contract.schema.json`).
//!
//! Validation order: first the §10.1 information is present (`WORK_CONTRACT_INCOMPLETE`, so that
//! a missing goal or empty acceptance criteria read as an incomplete contract, not a schema
//! slip), then the whole schema (`SCHEMA_VALIDATION_FAILED`), then the cross-field risk rule.

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol::schema::SchemaCatalog;

use super::error::WorkError;

/// `executionApproval` (§10.1 "pre-execution approval requirement", §12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionApproval {
    /// Work may start without an execution approval.
    NotRequired,
    /// Policy must grant execution approval before `work.start`.
    PolicyRequired,
    /// A human must grant execution approval before `work.start`.
    HumanRequired,
}

missionweaveprotocol::spelling!(ExecutionApproval {
    NotRequired => "not_required",
    PolicyRequired => "policy_required",
    HumanRequired => "human_required",
});

/// One acceptance criterion (`common.schema.json#/$defs/acceptanceCriterion`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Criterion {
    /// `criterionId`.
    pub criterion_id: String,
    /// `evidenceRequired` Evidence types (≥ 1).
    pub evidence_required: Vec<String>,
}

/// A validated Work Contract: the document as sent plus the parts the state machine reads.
/// Equality is JSON equality of the document (member order does not matter).
#[derive(Clone, Debug)]
pub struct WorkContract {
    document: Value,
    version: u64,
    criteria: Vec<Criterion>,
    dependencies: Vec<String>,
    execution_approval: ExecutionApproval,
}

/// §10.1 members, each required and non-empty where the schema says `minItems`/`minLength`.
const REQUIRED: [&str; 15] = [
    "contractVersion",
    "goal",
    "requiredDeliverables",
    "acceptanceCriteria",
    "inputArtifacts",
    "dependencyWorkItemIds",
    "allowedResources",
    "requiredCapabilities",
    "deadline",
    "requestedUrgency",
    "businessImpact",
    "retryPolicy",
    "budget",
    "sideEffectRisk",
    "executionApproval",
];

/// Non-empty lists among them (`minItems: 1`).
const NON_EMPTY_LISTS: [&str; 3] = [
    "requiredDeliverables",
    "acceptanceCriteria",
    "requiredCapabilities",
];

const RETRY_POLICY: [&str; 4] = ["maxAttempts", "backoff", "maxDelay", "retryableFailures"];

const BUDGET_LIMITS: [&str; 6] = [
    "financialLimit",
    "modelTokenLimit",
    "toolCallLimit",
    "computeSecondsLimit",
    "wallClockSecondsLimit",
    "externalSideEffectLimit",
];

fn present(document: &Value) -> Result<(), WorkError> {
    let incomplete = WorkError::ContractIncomplete;
    if document.as_object().is_none() {
        return Err(incomplete("contract"));
    }
    for name in REQUIRED {
        match document.get(name) {
            None | Some(Value::Null) => return Err(incomplete(name)),
            Some(Value::String(s)) if s.as_str().is_some_and(|s| s.trim().is_empty()) => {
                return Err(incomplete(name));
            }
            _ => {}
        }
    }
    for name in NON_EMPTY_LISTS {
        if document
            .get(name)
            .and_then(Value::as_array)
            .is_some_and(<[Value]>::is_empty)
        {
            return Err(incomplete(name));
        }
    }
    // "acceptance criteria and required Evidence": every criterion names its Evidence.
    for criterion in document
        .get("acceptanceCriteria")
        .and_then(Value::as_array)
        .unwrap_or_default()
    {
        let evidence = criterion.get("evidenceRequired").and_then(Value::as_array);
        if evidence.is_none_or(<[Value]>::is_empty) {
            return Err(incomplete("acceptanceCriteria.evidenceRequired"));
        }
    }
    // "retry attempts, backoff, deadline and cost policy".
    if let Some(policy) = document.get("retryPolicy").and_then(Value::as_object)
        && RETRY_POLICY.into_iter().any(|m| !policy.contains(m))
    {
        return Err(incomplete("retryPolicy"));
    }
    // "the six budgets as applicable": at least one limit applies.
    if let Some(budget) = document.get("budget").and_then(Value::as_object)
        && !BUDGET_LIMITS.into_iter().any(|m| budget.contains(m))
    {
        return Err(incomplete("budget"));
    }
    Ok(())
}

impl PartialEq for WorkContract {
    fn eq(&self, other: &Self) -> bool {
        self.document.json_eq(&other.document)
    }
}

impl WorkContract {
    /// Validates a contract document (§10.1, then the schema, then the risk rule).
    pub fn from_value(document: Value) -> Result<Self, WorkError> {
        present(&document)?;
        SchemaCatalog::embedded()
            .validate("work-contract", &document)
            .map_err(WorkError::ContractSchema)?;
        let text = |name: &str| document.get(name).and_then(Value::as_str).unwrap_or("");
        // §10.1 "risk classification and any pre-execution approval requirement", §12: work
        // with high-risk or destructive side effects cannot skip the approval gate (the
        // reference enforces the same rule on its contract model).
        let execution_approval = ExecutionApproval::parse(text("executionApproval"))
            .unwrap_or(ExecutionApproval::NotRequired);
        if matches!(text("sideEffectRisk"), "high_risk" | "destructive")
            && execution_approval == ExecutionApproval::NotRequired
        {
            return Err(WorkError::ContractIncomplete("executionApproval"));
        }
        let version = document
            .get("contractVersion")
            .and_then(Value::as_number)
            .and_then(Number::as_u64)
            .unwrap_or(1);
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap_or_default()
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let criteria = document
            .get("acceptanceCriteria")
            .and_then(Value::as_array)
            .unwrap_or_default()
            .iter()
            .map(|c| Criterion {
                criterion_id: c
                    .get("criterionId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                evidence_required: c.get("evidenceRequired").map(strings).unwrap_or_default(),
            })
            .collect();
        let dependencies = document
            .get("dependencyWorkItemIds")
            .map(strings)
            .unwrap_or_default();
        Ok(Self {
            document,
            version,
            criteria,
            dependencies,
            execution_approval,
        })
    }

    /// The contract document.
    pub fn document(&self) -> &Value {
        &self.document
    }
    /// `contractVersion`.
    pub fn version(&self) -> u64 {
        self.version
    }
    /// Acceptance criteria.
    pub fn criteria(&self) -> &[Criterion] {
        &self.criteria
    }
    /// `dependencyWorkItemIds`.
    pub fn dependencies(&self) -> &[String] {
        &self.dependencies
    }
    /// `executionApproval`.
    pub fn execution_approval(&self) -> ExecutionApproval {
        self.execution_approval
    }

    /// The revised contract with one more dependency and the next `contractVersion` (§10.1 "a
    /// materially revised contract increments its revision", §10.4 dynamic insertion).
    pub fn with_dependency(&self, dependency: &str) -> Result<Self, WorkError> {
        let mut document = self.document.clone();
        if let Value::Object(object) = &mut document {
            let mut ids: Vec<Value> = self
                .dependencies
                .iter()
                .map(|id| Value::string(id.as_str()))
                .collect();
            ids.push(Value::string(dependency));
            object.insert("dependencyWorkItemIds", Value::Array(ids));
            object.insert(
                "contractVersion",
                Value::Number(Number::from_u64(self.version.saturating_add(1))),
            );
        }
        Self::from_value(document)
    }
}
