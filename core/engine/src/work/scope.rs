//! What a Work Contract allows (§10.1 "allowed tools, data, operations and resource
//! constraints") and which operations always need a human Execution Approval (§12). Read by the
//! engine's approval gate and by the Agent-side policy layer.

use missionweaveprotocol::json::Value;

use super::contract::ExecutionApproval;

/// Operation prefixes that always need a human Execution Approval (§12: production deployment,
/// payments, external communications, destructive changes).
pub const HIGH_RISK_OPERATION_PREFIXES: [&str; 4] =
    ["production.", "payment.", "external.send", "destructive."];

/// True when `operation` starts with one of [`HIGH_RISK_OPERATION_PREFIXES`].
pub fn is_high_risk_operation(operation: &str) -> bool {
    HIGH_RISK_OPERATION_PREFIXES
        .iter()
        .any(|p| operation.starts_with(p))
}

/// One `allowedResources[]` entry of a Work Contract (`common.schema.json#/$defs/resourceGrant`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceGrant {
    /// The resource.
    pub resource: String,
    /// Operations allowed on it.
    pub operations: Vec<String>,
}

/// What a Work Contract allows (§10.1 "allowed tools, data, operations and resource
/// constraints").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContractScope {
    /// `constraints.allowedTools`: the 0.1 contract schema has no tools member, so tools are
    /// read from the free-form `constraints` object; absent = no tool is allowed.
    pub tools: Vec<String>,
    /// `allowedResources`.
    pub resources: Vec<ResourceGrant>,
    /// `executionApproval` other than `not_required` (§12 contract-required approval).
    pub approval_required: bool,
}

impl ContractScope {
    /// Reads a Work Contract document.
    pub fn from_contract(contract: &Value) -> Self {
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let resources = contract
            .get("allowedResources")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|grant| {
                        Some(ResourceGrant {
                            resource: grant.get("resource")?.as_str()?.to_owned(),
                            operations: strings(grant.get("operations")),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let approval = contract
            .get("executionApproval")
            .and_then(Value::as_str)
            .and_then(ExecutionApproval::parse)
            .unwrap_or(ExecutionApproval::NotRequired);
        Self {
            tools: strings(contract.pointer("/constraints/allowedTools")),
            resources,
            approval_required: approval != ExecutionApproval::NotRequired,
        }
    }
}
