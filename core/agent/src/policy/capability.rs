//! Capability grants (§12): short-lived least-privilege tokens bound to the Worker Agent ID and
//! Session Epoch, the WorkItem ID and Ownership Epoch, the current Execution Lease ID, the
//! allowed tools, resources and operations, the six budget limits, and an expiry no later than
//! the Execution Lease's.
//!
//! [`AuthorizationService::issue`] refuses every high-risk grant (`APPROVAL_REQUIRED`): a caller
//! cannot name an arbitrary approval ID and get a high-risk token. Only
//! [`ExecutionAuthorization`](super::ExecutionAuthorization), after checking a persisted
//! Execution Approval, issues one (through the crate-private `issue_approved`).
//!
//! Verification refuses a malformed or forged token, an expired one, another Worker
//! (`AUTH_FORBIDDEN`), a fenced Session Epoch (`AUTH_STALE_SESSION`), another WorkItem
//! (`AUTH_FORBIDDEN`), a fenced Ownership Epoch (`WORK_STALE_OWNERSHIP`), another or a no longer
//! live Execution Lease (`WORK_LEASE_EXPIRED`: released, revoked or expired leases kill their
//! tokens, digest 2.5) and an operation outside the grant (`AUTH_FORBIDDEN`). A renewed lease
//! keeps its ID, so its tokens stay valid.

use core::fmt;

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Object, Value};

use super::error::PolicyError;
use super::token::{
    TokenKey, check_epoch, check_id, check_ttl, check_window, count, expiry, get_count,
    get_instant, get_opt_text, get_text, get_texts, instant, sorted_unique, texts,
};
use missionweaveprotocol_engine::work::scope::is_high_risk_operation;
use missionweaveprotocol_kernel::lease::{Lease, LeaseType};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The MAC domain of capability grants.
const DOMAIN: &str = "missionweaveprotocol.capability-grant.v1";

/// The longest lifetime a service may be configured with (15 min, as membership tokens).
pub const MAXIMUM_TTL_MS: u64 = 15 * 60 * 1000;

/// What a capability token states (the reference's `CapabilityGrant`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapabilityGrant {
    /// Unique grant ID.
    pub grant_id: String,
    /// The Worker Agent.
    pub worker_id: String,
    /// Its Session Epoch.
    pub session_epoch: u64,
    /// The WorkItem.
    pub work_item_id: String,
    /// Its Ownership Epoch.
    pub ownership_epoch: u64,
    /// The Execution Lease ID.
    pub execution_lease_id: String,
    /// The lease's expiry when the grant was issued.
    pub execution_lease_expires_at: UnixMillis,
    /// Allowed tools (sorted, unique).
    pub allowed_tools: Vec<String>,
    /// Allowed resources (sorted, unique).
    pub allowed_resources: Vec<String>,
    /// Allowed operations (sorted, unique).
    pub allowed_operations: Vec<String>,
    /// The six limits (0 = nothing may be spent in that dimension).
    pub budget: Resources,
    /// Issue instant.
    pub issued_at: UnixMillis,
    /// Expiry, at or before the lease's.
    pub expires_at: UnixMillis,
    /// The Execution Approval a high-risk grant rests on.
    pub approval_id: Option<String>,
}

impl CapabilityGrant {
    /// The canonical claims object (camelCase; instants in Unix milliseconds; budget as the
    /// six snake_case dimension names).
    pub fn to_value(&self) -> Value {
        let mut budget = Object::new();
        for d in Dimension::ALL {
            budget.insert(d.as_str(), count(self.budget.get(d)));
        }
        let mut o = Object::new();
        o.insert("grantId", Value::string(self.grant_id.as_str()));
        o.insert("workerId", Value::string(self.worker_id.as_str()));
        o.insert("sessionEpoch", count(self.session_epoch));
        o.insert("workItemId", Value::string(self.work_item_id.as_str()));
        o.insert("ownershipEpoch", count(self.ownership_epoch));
        o.insert(
            "executionLeaseId",
            Value::string(self.execution_lease_id.as_str()),
        );
        o.insert(
            "executionLeaseExpiresAt",
            instant(self.execution_lease_expires_at),
        );
        o.insert("allowedTools", texts(&self.allowed_tools));
        o.insert("allowedResources", texts(&self.allowed_resources));
        o.insert("allowedOperations", texts(&self.allowed_operations));
        o.insert("budget", Value::Object(budget));
        o.insert("issuedAt", instant(self.issued_at));
        o.insert("expiresAt", instant(self.expires_at));
        if let Some(id) = &self.approval_id {
            o.insert("approvalId", Value::string(id.as_str()));
        }
        Value::Object(o)
    }

    fn from_object(o: &Object) -> Result<Self, PolicyError> {
        let budget_object = o
            .get("budget")
            .and_then(Value::as_object)
            .ok_or_else(|| super::token::malformed("budget"))?;
        let mut budget = Resources::ZERO;
        for d in Dimension::ALL {
            budget.set(d, get_count(budget_object, d.as_str())?);
        }
        let grant = Self {
            grant_id: get_text(o, "grantId")?,
            worker_id: get_text(o, "workerId")?,
            session_epoch: get_count(o, "sessionEpoch")?,
            work_item_id: get_text(o, "workItemId")?,
            ownership_epoch: get_count(o, "ownershipEpoch")?,
            execution_lease_id: get_text(o, "executionLeaseId")?,
            execution_lease_expires_at: get_instant(o, "executionLeaseExpiresAt")?,
            allowed_tools: get_texts(o, "allowedTools")?,
            allowed_resources: get_texts(o, "allowedResources")?,
            allowed_operations: get_texts(o, "allowedOperations")?,
            budget,
            issued_at: get_instant(o, "issuedAt")?,
            expires_at: get_instant(o, "expiresAt")?,
            approval_id: get_opt_text(o, "approvalId")?,
        };
        if grant.expires_at > grant.execution_lease_expires_at {
            return Err(super::token::malformed("expiresAt"));
        }
        Ok(grant)
    }
}

/// An issued grant and its bearer token. `Debug` hides the token.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuedCapabilityGrant {
    /// What it states.
    pub claims: CapabilityGrant,
    /// The bearer token.
    pub token: String,
}

impl fmt::Debug for IssuedCapabilityGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IssuedCapabilityGrant")
            .field("claims", &self.claims)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// Who a grant is for (issue request and verification expectation alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapabilityBinding<'a> {
    /// The Worker Agent.
    pub worker_id: &'a str,
    /// Its current Session Epoch.
    pub session_epoch: u64,
    /// The WorkItem.
    pub work_item_id: &'a str,
    /// Its current Ownership Epoch.
    pub ownership_epoch: u64,
}

/// What a grant allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapabilityScope<'a> {
    /// Tools.
    pub tools: &'a [String],
    /// Resources.
    pub resources: &'a [String],
    /// Operations.
    pub operations: &'a [String],
    /// The six limits.
    pub budget: Resources,
}

/// Issues and verifies capability grants under one secret (the reference's
/// `AuthorizationService`). `Debug` hides the secret.
#[derive(Clone, Debug)]
pub struct AuthorizationService {
    key: TokenKey,
    maximum_ttl_ms: u64,
}

fn check_lease(
    binding: &CapabilityBinding<'_>,
    lease: &Lease,
    now: UnixMillis,
) -> Result<(), PolicyError> {
    if lease.lease_type() != LeaseType::Execution {
        return Err(PolicyError::invalid(
            "execution_lease",
            "a capability grant binds an Execution Lease",
        ));
    }
    if lease.binding().holder_agent_id != binding.worker_id {
        return Err(PolicyError::new(
            WireCode::AuthForbidden,
            "lease_holder_mismatch",
            "the Execution Lease is held by another Agent",
        ));
    }
    if lease.binding().session_epoch != binding.session_epoch {
        return Err(PolicyError::new(
            WireCode::AuthStaleSession,
            "lease_session_stale",
            "the Execution Lease belongs to another Session Epoch",
        ));
    }
    if lease.work_item_id() != Some(binding.work_item_id) {
        return Err(PolicyError::new(
            WireCode::AuthForbidden,
            "lease_work_item_mismatch",
            "the Execution Lease is for another WorkItem",
        ));
    }
    if lease.ownership_epoch() != Some(binding.ownership_epoch) {
        return Err(PolicyError::new(
            WireCode::WorkStaleOwnership,
            "lease_ownership_stale",
            "the Execution Lease belongs to another Ownership Epoch",
        ));
    }
    if !lease.is_live(now) {
        return Err(PolicyError::new(
            WireCode::WorkLeaseExpired,
            "lease_not_live",
            format!(
                "the Execution Lease is {} at now",
                lease.state_at(now).as_str()
            ),
        ));
    }
    Ok(())
}

impl AuthorizationService {
    /// A service keyed with `secret` (32..=1024 bytes), maximum TTL 15 minutes.
    pub fn new(secret: &[u8]) -> Result<Self, PolicyError> {
        Ok(Self {
            key: TokenKey::new(secret)?,
            maximum_ttl_ms: MAXIMUM_TTL_MS,
        })
    }

    /// The same service with a shorter maximum TTL (1 ms ..= 15 min).
    pub fn with_maximum_ttl(mut self, maximum_ttl_ms: u64) -> Result<Self, PolicyError> {
        check_ttl(maximum_ttl_ms, MAXIMUM_TTL_MS).map_err(|_| {
            PolicyError::invalid("maximum_ttl", "maximum_ttl must be 1 ms to 15 min")
        })?;
        self.maximum_ttl_ms = maximum_ttl_ms;
        Ok(self)
    }

    /// The maximum TTL in milliseconds.
    pub fn maximum_ttl_ms(&self) -> u64 {
        self.maximum_ttl_ms
    }

    /// Issues a low-risk grant. `high_risk` or an `approval_id` is refused with
    /// `APPROVAL_REQUIRED`, as is any high-risk operation (`production.`, `payment.`,
    /// `external.send`, `destructive.`): those go through `ExecutionAuthorization`.
    #[allow(clippy::too_many_arguments)]
    pub fn issue(
        &self,
        binding: &CapabilityBinding<'_>,
        lease: &Lease,
        scope: &CapabilityScope<'_>,
        high_risk: bool,
        approval_id: Option<&str>,
        ttl_ms: u64,
        grant_id: &str,
        now: UnixMillis,
    ) -> Result<IssuedCapabilityGrant, PolicyError> {
        if high_risk || approval_id.is_some() {
            return Err(PolicyError::approval_required(
                "direct_high_risk_refused",
                "high-risk grants are issued only by ExecutionAuthorization after a verified Execution Approval",
            ));
        }
        if let Some(op) = scope.operations.iter().find(|o| is_high_risk_operation(o)) {
            return Err(PolicyError::approval_required(
                "high_risk_operation",
                format!("operation {op:?} is high-risk and needs an Execution Approval"),
            )
            .with_text("operation", op.as_str()));
        }
        self.issue_approved(binding, lease, scope, None, None, ttl_ms, grant_id, now)
    }

    /// Issues a grant; `approval` (ID and expiry) is set only by `ExecutionAuthorization` after
    /// it verified the approval. The expiry is `min(now + ttl, lease expiry, approval expiry)`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn issue_approved(
        &self,
        binding: &CapabilityBinding<'_>,
        lease: &Lease,
        scope: &CapabilityScope<'_>,
        approval_id: Option<&str>,
        approval_expires_at: Option<UnixMillis>,
        ttl_ms: u64,
        grant_id: &str,
        now: UnixMillis,
    ) -> Result<IssuedCapabilityGrant, PolicyError> {
        check_id("grant_id", grant_id)?;
        check_id("worker_id", binding.worker_id)?;
        check_id("work_item_id", binding.work_item_id)?;
        check_epoch("session_epoch", binding.session_epoch)?;
        check_epoch("ownership_epoch", binding.ownership_epoch)?;
        check_ttl(ttl_ms, self.maximum_ttl_ms)?;
        if let Some(d) = scope.budget.first_unsafe() {
            return Err(PolicyError::invalid(
                "budget",
                format!("budget {} is above 2^53-1", d.as_str()),
            ));
        }
        let tools = sorted_unique("allowed_tools", scope.tools, false)?;
        let resources = sorted_unique("allowed_resources", scope.resources, false)?;
        let operations = sorted_unique("allowed_operations", scope.operations, false)?;
        check_lease(binding, lease, now)?;
        let lease_expires_at = lease.window().expires_at;
        // §12 "an expiration no later than the Execution Lease" (and no later than the approval).
        let mut expires_at = expiry(now, ttl_ms)?.min(lease_expires_at);
        if let Some(at) = approval_expires_at {
            expires_at = expires_at.min(at);
        }
        if expires_at <= now {
            return Err(PolicyError::approval_required(
                "approval_expired",
                "the Execution Approval has expired",
            ));
        }
        let claims = CapabilityGrant {
            grant_id: grant_id.to_owned(),
            worker_id: binding.worker_id.to_owned(),
            session_epoch: binding.session_epoch,
            work_item_id: binding.work_item_id.to_owned(),
            ownership_epoch: binding.ownership_epoch,
            execution_lease_id: lease.lease_id().to_owned(),
            execution_lease_expires_at: lease_expires_at,
            allowed_tools: tools,
            allowed_resources: resources,
            allowed_operations: operations,
            budget: scope.budget,
            issued_at: now,
            expires_at,
            approval_id: approval_id.map(str::to_owned),
        };
        let token = self.key.seal(DOMAIN, &claims.to_value())?;
        Ok(IssuedCapabilityGrant { claims, token })
    }

    /// The grant of `token` if it is authentic, unexpired at `now`, bound to `expected` and to
    /// `lease` (same ID, still live), and — when `operation` is given — allows it.
    pub fn verify(
        &self,
        token: &str,
        expected: &CapabilityBinding<'_>,
        lease: &Lease,
        operation: Option<&str>,
        now: UnixMillis,
    ) -> Result<CapabilityGrant, PolicyError> {
        let grant = CapabilityGrant::from_object(&self.key.open(DOMAIN, token)?)?;
        check_window(grant.issued_at, grant.expires_at, now)?;
        if grant.worker_id != expected.worker_id {
            return Err(PolicyError::new(
                WireCode::AuthForbidden,
                "token_worker_mismatch",
                "the grant was issued to another Worker",
            ));
        }
        if grant.session_epoch != expected.session_epoch {
            return Err(PolicyError::new(
                WireCode::AuthStaleSession,
                "token_session_stale",
                "the grant's Session Epoch is fenced",
            ));
        }
        if grant.work_item_id != expected.work_item_id {
            return Err(PolicyError::new(
                WireCode::AuthForbidden,
                "token_work_item_mismatch",
                "the grant is for another WorkItem",
            ));
        }
        if grant.ownership_epoch != expected.ownership_epoch {
            return Err(PolicyError::new(
                WireCode::WorkStaleOwnership,
                "token_ownership_stale",
                "the grant's Ownership Epoch is fenced",
            ));
        }
        if grant.execution_lease_id != lease.lease_id() {
            return Err(PolicyError::new(
                WireCode::WorkLeaseExpired,
                "token_lease_mismatch",
                "the grant is bound to another Execution Lease",
            ));
        }
        check_lease(expected, lease, now)?;
        if let Some(op) = operation
            && !grant.allowed_operations.iter().any(|o| o == op)
        {
            return Err(PolicyError::new(
                WireCode::AuthForbidden,
                "operation_not_granted",
                format!("operation {op:?} is not in the grant"),
            )
            .with_text("operation", op));
        }
        Ok(grant)
    }
}
