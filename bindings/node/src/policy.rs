//! Tokens, execution authorization and local guardrails (`authority::policy`, §8, §12, §20)
//! for Node: conversions only. Each call takes its arguments as one JSON object (camelCase;
//! instants in Unix milliseconds; budgets as `{financialMicrounits, modelTokens, toolCalls,
//! computeSeconds, wallClockSeconds, externalActions}`, absent members 0) and returns the
//! addon's envelope (`{"ok":…}` / `{"error":…}`); nothing throws. Secrets never appear in an
//! envelope.

use std::sync::Mutex;

use missionweaveprotocol::json::{self, Number, Value};
use missionweaveprotocol_agent::policy::{
    self as core_policy, ApprovalDocuments, AuthorizationService, CapabilityBinding,
    CapabilityScope, CooperationLimits, ExecutionAuthorization, ExecutionRequest, LiveDocuments,
    MembershipBinding, MembershipTokenService, MembershipView, PolicyError, RateKind,
};
use missionweaveprotocol_engine::config::{
    CooperationLimitsConfig, Limit, cooperation_limits_json,
};
use missionweaveprotocol_ffi::envelope::{Failure, Obj, Outcome, finish};
use missionweaveprotocol_kernel::lease::Lease;
use missionweaveprotocol_kernel::resources::{Dimension, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::snapshot_json::dimension_member;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use napi_derive::napi;

type Args = Value;

fn parse_args(text: &str) -> Result<Args, Failure> {
    match json::parse(text.as_bytes()) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(Failure::argument("the arguments must be a JSON object")),
    }
}

fn text<'a>(args: &'a Args, name: &str) -> Result<&'a str, Failure> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| Failure::argument(format!("{name} must be a string")))
}

fn opt_text<'a>(args: &'a Args, name: &str) -> Result<Option<&'a str>, Failure> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text(args, name).map(Some),
    }
}

fn count(args: &Args, name: &str) -> Result<u64, Failure> {
    args.get(name)
        .and_then(Value::as_number)
        .and_then(Number::as_u64)
        .filter(|n| *n <= MAX_SAFE_INTEGER)
        .ok_or_else(|| Failure::argument(format!("{name} must be a non-negative safe integer")))
}

fn opt_count(args: &Args, name: &str) -> Result<Option<u64>, Failure> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => count(args, name).map(Some),
    }
}

fn instant(args: &Args, name: &str) -> Result<UnixMillis, Failure> {
    args.get(name)
        .and_then(Value::as_number)
        .and_then(Number::as_i64)
        .map(UnixMillis)
        .ok_or_else(|| Failure::argument(format!("{name} must be an integer (Unix ms)")))
}

fn strings(args: &Args, name: &str) -> Result<Vec<String>, Failure> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| Failure::argument(format!("{name} must hold strings")))
            })
            .collect(),
        Some(_) => Err(Failure::argument(format!(
            "{name} must be an array of strings"
        ))),
    }
}

fn resources(value: &Value, name: &str) -> Result<Resources, Failure> {
    let Some(object) = value.as_object() else {
        return Err(Failure::argument(format!("{name} must be an object")));
    };
    let mut out = Resources::ZERO;
    for d in Dimension::ALL {
        if let Some(v) = object.get(dimension_member(d)) {
            let n = v
                .as_number()
                .and_then(Number::as_u64)
                .filter(|n| *n <= MAX_SAFE_INTEGER)
                .ok_or_else(|| {
                    Failure::argument(format!(
                        "{name}.{} must be a safe integer",
                        dimension_member(d)
                    ))
                })?;
            out.set(d, n);
        }
    }
    Ok(out)
}

fn opt_resources(args: &Args, name: &str) -> Result<Option<Resources>, Failure> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => resources(v, name).map(Some),
    }
}

fn object<'a>(args: &'a Args, name: &str) -> Result<&'a Value, Failure> {
    args.get(name)
        .filter(|v| v.as_object().is_some())
        .ok_or_else(|| Failure::argument(format!("{name} must be an object")))
}

fn opt_object(args: &Args, name: &str) -> Result<Option<Value>, Failure> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => object(args, name).cloned().map(Some),
    }
}

fn refused(error: &PolicyError) -> Failure {
    Failure::error(error)
}

fn lease(args: &Args) -> Result<Lease, Failure> {
    Lease::from_value(object(args, "executionLease")?).map_err(|e| Failure::error(&e))
}

fn id_or_random(args: &Args, name: &str) -> Result<String, Failure> {
    match opt_text(args, name)? {
        Some(id) => Ok(id.to_owned()),
        None => missionweaveprotocol_host::random_token_id()
            .ok_or_else(|| Failure::argument("the OS random source failed")),
    }
}

fn issued(claims: Value, token: String) -> Value {
    Obj::new()
        .value("claims", claims)
        .str("token", token)
        .build()
}

/// An empty secret draws 32 random bytes.
fn secret(secret: &[u8]) -> Result<Vec<u8>, Failure> {
    match secret {
        bytes if !bytes.is_empty() => Ok(bytes.to_vec()),
        _ => missionweaveprotocol_host::random_secret()
            .map(|s| s.to_vec())
            .ok_or_else(|| Failure::argument("the OS random source failed")),
    }
}

fn membership_binding<'a>(
    args: &'a Args,
    roles: &'a [String],
) -> Result<MembershipBinding<'a>, Failure> {
    Ok(MembershipBinding {
        principal_id: text(args, "principalId")?,
        group_id: text(args, "groupId")?,
        roles,
        membership_epoch: count(args, "membershipEpoch")?,
        session_epoch: count(args, "sessionEpoch")?,
    })
}

/// Membership tokens (§8). `new PolicyMembershipTokens(secret, maximumTtlMs)`; an empty
/// secret draws 32 random bytes.
#[napi]
#[derive(Debug)]
pub struct PolicyMembershipTokens(Result<MembershipTokenService, String>);

#[napi]
impl PolicyMembershipTokens {
    #[napi(constructor)]
    pub fn new(secret_bytes: &[u8], maximum_ttl_ms: u32) -> Self {
        let made = self::secret(secret_bytes)
            .and_then(|s| MembershipTokenService::new(&s).map_err(|e| refused(&e)))
            .and_then(|s| {
                s.with_maximum_ttl(u64::from(maximum_ttl_ms))
                    .map_err(|e| refused(&e))
            });
        Self(made.map_err(|e| finish(Err(e))))
    }

    /// `{"ok":null}` or the construction error.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => finish(Ok(Value::Null)),
            Err(envelope) => envelope.clone(),
        }
    }

    /// `{principalId, groupId, roles, membershipEpoch, sessionEpoch, ttlMs, nowMs, tokenId?}` →
    /// `{claims, token}`.
    #[napi(catch_unwind)]
    pub fn issue(&self, args: String) -> String {
        let service = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let args = parse_args(&args)?;
            let roles = strings(&args, "roles")?;
            let binding = membership_binding(&args, &roles)?;
            let token_id = id_or_random(&args, "tokenId")?;
            let out = service
                .issue(
                    &binding,
                    count(&args, "ttlMs")?,
                    &token_id,
                    instant(&args, "nowMs")?,
                )
                .map_err(|e| refused(&e))?;
            Ok(issued(out.claims.to_value(), out.token))
        })())
    }

    /// `{membership, sessionEpoch, ttlMs, nowMs, tokenId?}` → `{claims, token}`.
    #[napi(catch_unwind)]
    pub fn issue_for_membership(&self, args: String) -> String {
        let service = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let args = parse_args(&args)?;
            let view = MembershipView::from_document(object(&args, "membership")?)
                .map_err(|e| refused(&e))?;
            let token_id = id_or_random(&args, "tokenId")?;
            let out = service
                .issue_for_membership(
                    &view,
                    count(&args, "sessionEpoch")?,
                    count(&args, "ttlMs")?,
                    &token_id,
                    instant(&args, "nowMs")?,
                )
                .map_err(|e| refused(&e))?;
            Ok(issued(out.claims.to_value(), out.token))
        })())
    }

    /// `token`, `{principalId, groupId, roles, membershipEpoch, sessionEpoch, nowMs}` → claims.
    #[napi(catch_unwind)]
    pub fn verify(&self, token: String, args: String) -> String {
        let service = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let args = parse_args(&args)?;
            let roles = strings(&args, "roles")?;
            let binding = membership_binding(&args, &roles)?;
            let claims = service
                .verify(&token, &binding, instant(&args, "nowMs")?)
                .map_err(|e| refused(&e))?;
            Ok(claims.to_value())
        })())
    }

    /// `token`, `{membership, sessionEpoch, nowMs}` → claims.
    #[napi(catch_unwind)]
    pub fn verify_membership(&self, token: String, args: String) -> String {
        let service = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let args = parse_args(&args)?;
            let view = MembershipView::from_document(object(&args, "membership")?)
                .map_err(|e| refused(&e))?;
            let claims = service
                .verify_membership(
                    &token,
                    &view,
                    count(&args, "sessionEpoch")?,
                    instant(&args, "nowMs")?,
                )
                .map_err(|e| refused(&e))?;
            Ok(claims.to_value())
        })())
    }
}

fn capability_binding(args: &Args) -> Result<CapabilityBinding<'_>, Failure> {
    Ok(CapabilityBinding {
        worker_id: text(args, "workerId")?,
        session_epoch: count(args, "sessionEpoch")?,
        work_item_id: text(args, "workItemId")?,
        ownership_epoch: count(args, "ownershipEpoch")?,
    })
}

/// Capability grants and execution authorization (§12).
/// `new PolicyAuthorization(secret, maximumTtlMs)` (empty secret: random).
#[napi]
#[derive(Debug)]
pub struct PolicyAuthorization(Result<ExecutionAuthorization, String>);

#[napi]
impl PolicyAuthorization {
    #[napi(constructor)]
    pub fn new(secret_bytes: &[u8], maximum_ttl_ms: u32) -> Self {
        let made = self::secret(secret_bytes)
            .and_then(|s| AuthorizationService::new(&s).map_err(|e| refused(&e)))
            .and_then(|s| {
                s.with_maximum_ttl(u64::from(maximum_ttl_ms))
                    .map_err(|e| refused(&e))
            })
            .map(ExecutionAuthorization::new);
        Self(made.map_err(|e| finish(Err(e))))
    }

    /// `{"ok":null}` or the construction error.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => finish(Ok(Value::Null)),
            Err(envelope) => envelope.clone(),
        }
    }

    /// `{workerId, sessionEpoch, workItemId, ownershipEpoch, executionLease, ttlMs, nowMs,
    /// allowedTools?, allowedResources?, allowedOperations?, budget?, highRisk?, approvalId?,
    /// grantId?}` → `{claims, token}` (high-risk requests: `APPROVAL_REQUIRED`).
    #[napi(catch_unwind)]
    pub fn issue(&self, args: String) -> String {
        let service = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let args = parse_args(&args)?;
            let lease = lease(&args)?;
            let tools = strings(&args, "allowedTools")?;
            let resources = strings(&args, "allowedResources")?;
            let operations = strings(&args, "allowedOperations")?;
            let scope = CapabilityScope {
                tools: &tools,
                resources: &resources,
                operations: &operations,
                budget: opt_resources(&args, "budget")?.unwrap_or(Resources::ZERO),
            };
            let high_risk = args
                .get("highRisk")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let grant_id = id_or_random(&args, "grantId")?;
            let out = service
                .authorization()
                .issue(
                    &capability_binding(&args)?,
                    &lease,
                    &scope,
                    high_risk,
                    opt_text(&args, "approvalId")?,
                    count(&args, "ttlMs")?,
                    &grant_id,
                    instant(&args, "nowMs")?,
                )
                .map_err(|e| refused(&e))?;
            Ok(issued(out.claims.to_value(), out.token))
        })())
    }

    /// `token`, `{workerId, sessionEpoch, workItemId, ownershipEpoch, executionLease, nowMs,
    /// operation?}` → the grant.
    #[napi(catch_unwind)]
    pub fn verify(&self, token: String, args: String) -> String {
        let service = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let args = parse_args(&args)?;
            let lease = lease(&args)?;
            let grant = service
                .authorization()
                .verify(
                    &token,
                    &capability_binding(&args)?,
                    &lease,
                    opt_text(&args, "operation")?,
                    instant(&args, "nowMs")?,
                )
                .map_err(|e| refused(&e))?;
            Ok(grant.to_value())
        })())
    }

    /// Execution authorization over queried documents: the request members of `issue`
    /// (without `executionLease`/`highRisk`) plus `currentSessionEpoch`, `workItem`,
    /// `executionLease`, `mission` (documents or null), `remaining` (budgets of the WorkItem
    /// and its ancestry), `missionPermissions?` and `executionApproval?` (the queried
    /// `execution_approval` document the request's `approvalId` names; absent: approval-gated
    /// requests are `APPROVAL_REQUIRED`).
    #[napi(catch_unwind)]
    pub fn authorize_execution(&self, args: String) -> String {
        let service = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let args = parse_args(&args)?;
            let worker = text(&args, "workerId")?;
            let remaining = match args.get("remaining") {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| resources(v, "remaining"))
                    .collect::<Result<Vec<_>, _>>()?,
                _ => return Err(Failure::argument("remaining must be an array of budgets")),
            };
            let permissions = match args.get("missionPermissions") {
                None | Some(Value::Null) => None,
                Some(_) => Some(strings(&args, "missionPermissions")?),
            };
            let documents = LiveDocuments {
                session: opt_count(&args, "currentSessionEpoch")?.map(|e| (worker.to_owned(), e)),
                work_item: opt_object(&args, "workItem")?,
                execution_lease: opt_object(&args, "executionLease")?,
                mission: opt_object(&args, "mission")?,
                mission_permissions: permissions,
                remaining,
            };
            let tools = strings(&args, "allowedTools")?;
            let resources_ = strings(&args, "allowedResources")?;
            let operations = strings(&args, "allowedOperations")?;
            let request = ExecutionRequest {
                binding: capability_binding(&args)?,
                tools: &tools,
                resources: &resources_,
                operations: &operations,
                budget: opt_resources(&args, "budget")?,
                approval_id: opt_text(&args, "approvalId")?,
                ttl_ms: count(&args, "ttlMs")?,
            };
            let grant_id = id_or_random(&args, "grantId")?;
            let out = service
                .issue(
                    &documents,
                    &ApprovalDocuments(
                        opt_object(&args, "executionApproval")?
                            .into_iter()
                            .collect(),
                    ),
                    &request,
                    &grant_id,
                    instant(&args, "nowMs")?,
                )
                .map_err(|e| refused(&e))?;
            Ok(issued(out.claims.to_value(), out.token))
        })())
    }
}

fn resources_value(r: &Resources) -> Value {
    missionweaveprotocol_kernel::snapshot_json::resources_to_value(r)
}

/// A hard local budget meter (§12). `new PolicyBudgetMeter(limitJson)`.
#[napi]
#[derive(Debug)]
pub struct PolicyBudgetMeter(Result<Mutex<core_policy::BudgetMeter>, String>);

#[napi]
impl PolicyBudgetMeter {
    #[napi(constructor)]
    pub fn new(limit: String) -> Self {
        let made = parse_args(&limit)
            .and_then(|v| resources(&v, "limit"))
            .and_then(|l| core_policy::BudgetMeter::new(l).map_err(|e| refused(&e)))
            .map(Mutex::new);
        Self(made.map_err(|e| finish(Err(e))))
    }

    /// `delta` (a budget object) → the cumulative usage, or `BUDGET_EXCEEDED`.
    #[napi(catch_unwind)]
    pub fn consume(&self, delta: String) -> String {
        let meter = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let delta = resources(&parse_args(&delta)?, "delta")?;
            let mut meter = meter
                .lock()
                .map_err(|_| Failure::argument("the meter lock is poisoned"))?;
            let usage = meter.consume(&delta).map_err(|e| refused(&e))?;
            Ok(resources_value(&usage))
        })())
    }

    /// The cumulative usage so far.
    #[napi(catch_unwind)]
    pub fn usage(&self) -> String {
        self.read(|m| resources_value(&m.usage()))
    }

    /// The limit the meter enforces.
    #[napi(catch_unwind)]
    pub fn limit(&self) -> String {
        self.read(|m| resources_value(&m.limit()))
    }
}

impl PolicyBudgetMeter {
    fn read(&self, f: impl FnOnce(&core_policy::BudgetMeter) -> Value) -> String {
        let meter = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish(
            meter
                .lock()
                .map(|m| f(&m))
                .map_err(|_| Failure::argument("the meter lock is poisoned")),
        )
    }
}

/// The local §20 guard. `new PolicyGuard(limitsJson)` (camelCase `CooperationLimits`
/// members; absent ones take the reference's defaults).
#[napi]
#[derive(Debug)]
pub struct PolicyGuard(Result<Mutex<core_policy::PolicyGuard>, String>);

fn limits(args: &Args) -> Result<CooperationLimits, Failure> {
    // The core's one merge rule (`CooperationLimitsConfig`): absent keeps the default.
    let field = |name: &str| -> Result<Limit, Failure> {
        match opt_count(args, name)? {
            None => Ok(Limit::Default),
            Some(v) => u32::try_from(v)
                .map(Limit::At)
                .map_err(|_| Failure::argument(format!("{name} is too large"))),
        }
    };
    let tracked = opt_count(args, "maximumTrackedKeys")?
        .map(|v| u32::try_from(v).map_err(|_| Failure::argument("maximumTrackedKeys is too large")))
        .transpose()?;
    CooperationLimitsConfig {
        maximum_delegation_depth: field("maximumDelegationDepth")?,
        maximum_queued_work_items: field("maximumQueuedWorkItems")?,
        maximum_active_work_items: field("maximumActiveWorkItems")?,
        maximum_unresolved_clarifications: field("maximumUnresolvedClarifications")?,
        maximum_message_rate_per_minute: field("maximumMessageRatePerMinute")?,
        maximum_proposal_rate_per_minute: field("maximumProposalRatePerMinute")?,
        maximum_clarification_rate_per_minute: field("maximumClarificationRatePerMinute")?,
        maximum_tracked_keys: tracked,
    }
    .resolve()
    .map_err(|e| Failure::error(&e))
}

#[napi]
impl PolicyGuard {
    #[napi(constructor)]
    pub fn new(limits_json: String) -> Self {
        let made = parse_args(&limits_json)
            .and_then(|a| limits(&a))
            .and_then(|l| core_policy::PolicyGuard::new(l).map_err(|e| refused(&e)))
            .map(Mutex::new);
        Self(made.map_err(|e| finish(Err(e))))
    }

    fn run(
        &self,
        f: impl FnOnce(&mut core_policy::PolicyGuard) -> Result<Value, PolicyError>,
    ) -> String {
        let guard = match &self.0 {
            Ok(inner) => inner,
            Err(envelope) => return envelope.clone(),
        };
        finish((|| -> Outcome {
            let mut guard = guard
                .lock()
                .map_err(|_| Failure::argument("the guard lock is poisoned"))?;
            f(&mut guard).map_err(|e| refused(&e))
        })())
    }

    #[napi(catch_unwind)]
    pub fn check_delegation_depth(&self, depth: u32) -> String {
        self.run(|g| {
            g.check_delegation_depth(u64::from(depth))
                .map(|()| Value::Null)
        })
    }

    #[napi(catch_unwind)]
    pub fn check_queue(&self, queued: u32, active: u32) -> String {
        self.run(|g| {
            g.check_queue(u64::from(queued), u64::from(active))
                .map(|()| Value::Null)
        })
    }

    #[napi(catch_unwind)]
    pub fn check_unresolved_clarifications(&self, unresolved: u32) -> String {
        self.run(|g| {
            g.check_unresolved_clarifications(u64::from(unresolved))
                .map(|()| Value::Null)
        })
    }

    /// `kind` is `message`, `proposal` or `clarification`; `RATE_LIMITED` carries
    /// `fields.retryAfterMs`.
    #[napi(catch_unwind)]
    pub fn check_rate(
        &self,
        kind: String,
        principal_id: String,
        group_id: String,
        now_ms: i64,
    ) -> String {
        let kind = match kind.as_str() {
            "message" => RateKind::Message,
            "proposal" => RateKind::Proposal,
            "clarification" => RateKind::Clarification,
            other => {
                return finish(Err(Failure::argument(format!(
                    "kind must be message, proposal or clarification, not {other:?}"
                ))));
            }
        };
        self.run(|g| {
            g.check_rate(kind, &principal_id, &group_id, UnixMillis(now_ms))
                .map(|()| Value::Null)
        })
    }

    /// The limits in force (camelCase `CooperationLimits`).
    #[napi(catch_unwind)]
    pub fn limits(&self) -> String {
        self.run(|g| Ok(limits_value(g.limits())))
    }

    #[napi(catch_unwind)]
    pub fn tracked_keys(&self) -> String {
        self.run(|g| Ok(Value::Number(Number::from_u64(g.tracked_keys() as u64))))
    }

    /// `automatic` or `human_approval_required`.
    #[napi(catch_unwind)]
    pub fn classify_action(operation: String) -> String {
        core_policy::PolicyGuard::classify_action(&operation)
            .as_str()
            .to_owned()
    }
}

fn limits_value(l: &CooperationLimits) -> Value {
    cooperation_limits_json(l)
}

/// The reference's §20 defaults (camelCase `CooperationLimits`), from the core's `Default`.
#[napi(catch_unwind)]
pub fn policy_cooperation_limits_defaults() -> String {
    finish(Ok(limits_value(&CooperationLimits::default())))
}

/// `PolicyGuard.classifyAction` as a free function: the package's guarded backend keeps only
/// the addon's top-level functions and constructors, not static methods.
#[napi(catch_unwind)]
pub fn policy_classify_action(operation: String) -> String {
    core_policy::PolicyGuard::classify_action(&operation)
        .as_str()
        .to_owned()
}
