//! The shapes of the `policy` module (§8 membership tokens, §12 capability grants and execution
//! authorization, §12 budget meters, §20 the local guard). Each call is one JSON object
//! (camelCase, instants in Unix milliseconds `…Ms`, budgets as [`ResourceInput`]); unknown
//! members are refused as Python's keyword arguments are. Documents (memberships, leases, Work
//! Items, Missions, Execution Approvals) stay JSON and are read by the core's lossless parser.
//! Lifetimes, bounds and every refusal stay in `missionweaveprotocol_agent::policy`.

use missionweaveprotocol::json::{Value, parse};
use serde::Deserialize;
use serde_json::value::RawValue;
#[cfg(test)]
use ts_rs::TS;

use super::Res;
use super::common::{Millis, ResourceInput, Safe};
use crate::envelope::Failure;

/// A JSON object argument (a protocol document), kept as its exact text until the core's
/// lossless parser reads it.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct DocumentArg(pub Box<RawValue>);

impl DocumentArg {
    /// The document as the core's value; `name` must be an object.
    pub fn object(&self, name: &str) -> Res<Value> {
        match parse(self.0.get().as_bytes()) {
            Ok(value @ Value::Object(_)) => Ok(value),
            Ok(_) => Err(Failure::argument(format!("{name} must be an object"))),
            Err(e) => Err(Failure::error(&e)),
        }
    }
}

/// The options of a token or grant service: absent `maximumTtlMs` is the core's maximum
/// (15 minutes: `MAXIMUM_TTL_MS`, `MAXIMUM_GRANT_TTL_MS`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct TokenServiceOptions {
    pub maximum_ttl_ms: Option<Safe>,
}

/// `MembershipTokenService.issue`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct MembershipIssueInput {
    pub principal_id: String,
    pub group_id: String,
    #[cfg_attr(test, ts(optional = nullable))]
    pub roles: Option<Vec<String>>,
    pub membership_epoch: Safe,
    pub session_epoch: Safe,
    pub ttl_ms: Safe,
    pub now_ms: Millis,
    /// Absent: a random `urn:uuid:` from the host's source.
    #[cfg_attr(test, ts(optional = nullable))]
    pub token_id: Option<String>,
}

/// `MembershipTokenService.verify`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct MembershipVerifyInput {
    pub principal_id: String,
    pub group_id: String,
    #[cfg_attr(test, ts(optional = nullable))]
    pub roles: Option<Vec<String>>,
    pub membership_epoch: Safe,
    pub session_epoch: Safe,
    pub now_ms: Millis,
}

/// `MembershipTokenService.issueForMembership`: an active Agent Membership document.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct MembershipDocumentIssueInput {
    #[cfg_attr(test, ts(type = "Record<string, unknown>"))]
    pub membership: DocumentArg,
    pub session_epoch: Safe,
    pub ttl_ms: Safe,
    pub now_ms: Millis,
    #[cfg_attr(test, ts(optional = nullable))]
    pub token_id: Option<String>,
}

/// `MembershipTokenService.verifyMembership`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct MembershipDocumentVerifyInput {
    #[cfg_attr(test, ts(type = "Record<string, unknown>"))]
    pub membership: DocumentArg,
    pub session_epoch: Safe,
    pub now_ms: Millis,
}

/// `AuthorizationService.issue` (a high-risk request is the core's `APPROVAL_REQUIRED`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct GrantIssueInput {
    pub worker_id: String,
    pub session_epoch: Safe,
    pub work_item_id: String,
    pub ownership_epoch: Safe,
    #[cfg_attr(test, ts(optional = nullable))]
    pub allowed_tools: Option<Vec<String>>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub allowed_resources: Option<Vec<String>>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub allowed_operations: Option<Vec<String>>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub budget: Option<ResourceInput>,
    /// The `lease.schema.json` document of the Execution Lease.
    #[cfg_attr(test, ts(type = "Record<string, unknown>"))]
    pub execution_lease: DocumentArg,
    pub ttl_ms: Safe,
    pub now_ms: Millis,
    #[cfg_attr(test, ts(optional = nullable))]
    pub high_risk: Option<bool>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub approval_id: Option<String>,
    /// Absent: a random `urn:uuid:` from the host's source.
    #[cfg_attr(test, ts(optional = nullable))]
    pub grant_id: Option<String>,
}

/// `AuthorizationService.verify`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct GrantVerifyInput {
    pub worker_id: String,
    pub session_epoch: Safe,
    pub work_item_id: String,
    pub ownership_epoch: Safe,
    #[cfg_attr(test, ts(type = "Record<string, unknown>"))]
    pub execution_lease: DocumentArg,
    pub now_ms: Millis,
    #[cfg_attr(test, ts(optional = nullable))]
    pub operation: Option<String>,
}

/// `AuthorizationService.authorizeExecution`: the request and the queried documents (`null`:
/// not found). `executionApproval` is the `execution_approval` document `approvalId` names.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct AuthorizeExecutionInput {
    pub worker_id: String,
    pub session_epoch: Safe,
    pub work_item_id: String,
    pub ownership_epoch: Safe,
    #[cfg_attr(test, ts(optional = nullable))]
    pub allowed_tools: Option<Vec<String>>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub allowed_resources: Option<Vec<String>>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub allowed_operations: Option<Vec<String>>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub budget: Option<ResourceInput>,
    pub ttl_ms: Safe,
    pub now_ms: Millis,
    #[cfg_attr(test, ts(optional = nullable))]
    pub approval_id: Option<String>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub grant_id: Option<String>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub current_session_epoch: Option<Safe>,
    #[cfg_attr(test, ts(type = "Record<string, unknown> | null", optional))]
    pub work_item: Option<DocumentArg>,
    #[cfg_attr(test, ts(type = "Record<string, unknown> | null", optional))]
    pub execution_lease: Option<DocumentArg>,
    #[cfg_attr(test, ts(type = "Record<string, unknown> | null", optional))]
    pub mission: Option<DocumentArg>,
    /// The remaining budgets of the WorkItem and its ancestry.
    pub remaining: Vec<ResourceInput>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub mission_permissions: Option<Vec<String>>,
    #[cfg_attr(test, ts(type = "Record<string, unknown> | null", optional))]
    pub execution_approval: Option<DocumentArg>,
}

/// The §20 limits of a local guard: an absent or `null` member keeps the reference's default
/// (the core's one merge rule, `CooperationLimitsConfig`, as Python's keyword arguments).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct GuardLimitsInput {
    pub maximum_delegation_depth: Option<u32>,
    pub maximum_queued_work_items: Option<u32>,
    pub maximum_active_work_items: Option<u32>,
    pub maximum_unresolved_clarifications: Option<u32>,
    pub maximum_message_rate_per_minute: Option<u32>,
    pub maximum_proposal_rate_per_minute: Option<u32>,
    pub maximum_clarification_rate_per_minute: Option<u32>,
    pub maximum_tracked_keys: Option<u32>,
}

/// The core's policy constants a binding shows as defaults (§8, §12, §6.3).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct PolicyDefaultsAnswer {
    /// The longest (and default) lifetime of a membership token service (15 minutes).
    pub membership_token_maximum_ttl_ms: u64,
    /// The longest (and default) lifetime of a capability grant service (15 minutes).
    pub capability_grant_maximum_ttl_ms: u64,
    /// A session token's default lifetime (15 minutes).
    pub session_ttl_ms: u64,
    /// A HELLO challenge's default lifetime (30 seconds).
    pub challenge_ttl_ms: u64,
}
