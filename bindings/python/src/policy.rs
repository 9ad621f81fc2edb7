//! Tokens, execution authorization and local guardrails (`authority::policy`, §8, §12, §20)
//! for `missionweaveprotocol.policy`: conversions only. Claims come back as camelCase dicts
//! (instants in Unix milliseconds) that the Python module turns into its pydantic models;
//! refusals are `PolicyError`s carrying the core's §19 code, reason and fields.

use std::sync::Mutex;

use missionweaveprotocol::json::Value;
use missionweaveprotocol_agent::policy::{
    self as core_policy, ApprovalDocuments, AuthorizationService, CapabilityBinding,
    CapabilityScope, ExecutionAuthorization, ExecutionRequest, LiveDocuments, MembershipBinding,
    MembershipTokenService, MembershipView, PolicyError, RateKind,
};
use missionweaveprotocol_engine::config::{CooperationLimitsConfig, Limit};
use missionweaveprotocol_kernel::lease::Lease;
use missionweaveprotocol_kernel::resources::Resources;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert;
use crate::errors;
use crate::instant::millis_arg;
use crate::resources::{ResourceUsage, usage_arg};

fn refused(py: Python<'_>, error: &PolicyError) -> PyErr {
    errors::describe(py, error)
}

fn secret_arg(py: Python<'_>, secret: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u8>> {
    match convert::present(secret) {
        Some(value) => match value.cast::<PyBytes>() {
            Ok(bytes) => Ok(bytes.as_bytes().to_vec()),
            Err(_) => Err(errors::invalid_input(py, "secret must be bytes")),
        },
        None => missionweaveprotocol_host::random_secret()
            .map(|s| s.to_vec())
            .ok_or_else(|| errors::invalid_input(py, "the OS random source failed")),
    }
}

fn token_id(py: Python<'_>, given: Option<&str>) -> PyResult<String> {
    match given {
        Some(id) => Ok(id.to_owned()),
        None => missionweaveprotocol_host::random_token_id()
            .ok_or_else(|| errors::invalid_input(py, "the OS random source failed")),
    }
}

fn document(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    convert::to_value(value)
        .map_err(|_| errors::invalid_input(py, format!("{what} must be a JSON-domain mapping")))
}

fn lease_arg(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Lease> {
    let doc = document(py, value, "execution_lease")?;
    Lease::from_value(&doc).map_err(|e| errors::describe(py, &e))
}

fn pair<'py>(
    py: Python<'py>,
    claims: &Value,
    token: String,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    Ok((convert::to_python(py, claims)?, token))
}

/// `MembershipTokenCore(secret=None, *, maximum_ttl_ms=None)`: membership tokens (§8); the
/// maximum TTL defaults to the core's bound (`MAXIMUM_TTL_MS`, 15 min).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct MembershipTokenCore {
    inner: MembershipTokenService,
}

#[pymethods]
impl MembershipTokenCore {
    #[new]
    #[pyo3(signature = (secret=None, *, maximum_ttl_ms=None))]
    fn py_new(
        py: Python<'_>,
        secret: Option<&Bound<'_, PyAny>>,
        maximum_ttl_ms: Option<u64>,
    ) -> PyResult<Self> {
        let secret = secret_arg(py, secret)?;
        let inner = MembershipTokenService::new(&secret)
            .and_then(|s| s.with_maximum_ttl(maximum_ttl_ms.unwrap_or(core_policy::MAXIMUM_TTL_MS)))
            .map_err(|e| refused(py, &e))?;
        Ok(Self { inner })
    }

    /// `(claims dict, token)`.
    #[pyo3(signature = (*, principal_id, group_id, roles, membership_epoch, session_epoch, ttl_ms, now, token_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn issue<'py>(
        &self,
        py: Python<'py>,
        principal_id: &str,
        group_id: &str,
        roles: Vec<String>,
        membership_epoch: u64,
        session_epoch: u64,
        ttl_ms: u64,
        now: &Bound<'py, PyAny>,
        token_id: Option<&str>,
    ) -> PyResult<(Bound<'py, PyAny>, String)> {
        let now = millis_arg(py, now, "now")?;
        let binding = MembershipBinding {
            principal_id,
            group_id,
            roles: &roles,
            membership_epoch,
            session_epoch,
        };
        let id = self::token_id(py, token_id)?;
        let issued = self
            .inner
            .issue(&binding, ttl_ms, &id, now)
            .map_err(|e| refused(py, &e))?;
        pair(py, &issued.claims.to_value(), issued.token)
    }

    /// `(claims dict, token)` for an active Agent Membership document.
    #[pyo3(signature = (*, membership, session_epoch, ttl_ms, now, token_id=None))]
    fn issue_for_membership<'py>(
        &self,
        py: Python<'py>,
        membership: &Bound<'py, PyAny>,
        session_epoch: u64,
        ttl_ms: u64,
        now: &Bound<'py, PyAny>,
        token_id: Option<&str>,
    ) -> PyResult<(Bound<'py, PyAny>, String)> {
        let now = millis_arg(py, now, "now")?;
        let view = MembershipView::from_document(&document(py, membership, "membership")?)
            .map_err(|e| refused(py, &e))?;
        let id = self::token_id(py, token_id)?;
        let issued = self
            .inner
            .issue_for_membership(&view, session_epoch, ttl_ms, &id, now)
            .map_err(|e| refused(py, &e))?;
        pair(py, &issued.claims.to_value(), issued.token)
    }

    /// The claims dict of a valid token.
    #[pyo3(signature = (token, *, principal_id, group_id, roles, membership_epoch, session_epoch, now))]
    #[allow(clippy::too_many_arguments)]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        token: &str,
        principal_id: &str,
        group_id: &str,
        roles: Vec<String>,
        membership_epoch: u64,
        session_epoch: u64,
        now: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let now = millis_arg(py, now, "now")?;
        let expected = MembershipBinding {
            principal_id,
            group_id,
            roles: &roles,
            membership_epoch,
            session_epoch,
        };
        let claims = self
            .inner
            .verify(token, &expected, now)
            .map_err(|e| refused(py, &e))?;
        convert::to_python(py, &claims.to_value())
    }

    /// The claims dict of a token valid for the current Membership document.
    #[pyo3(signature = (token, *, membership, session_epoch, now))]
    fn verify_membership<'py>(
        &self,
        py: Python<'py>,
        token: &str,
        membership: &Bound<'py, PyAny>,
        session_epoch: u64,
        now: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let now = millis_arg(py, now, "now")?;
        let view = MembershipView::from_document(&document(py, membership, "membership")?)
            .map_err(|e| refused(py, &e))?;
        let claims = self
            .inner
            .verify_membership(token, &view, session_epoch, now)
            .map_err(|e| refused(py, &e))?;
        convert::to_python(py, &claims.to_value())
    }
}

/// `AuthorizationCore(secret=None, *, maximum_ttl_ms=None)` (default: the core's
/// `MAXIMUM_GRANT_TTL_MS`, 15 min): capability grants (§12) and
/// execution authorization over queried live documents.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct AuthorizationCore {
    inner: ExecutionAuthorization,
}

fn opt_usage(py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Resources>> {
    convert::present(value)
        .map(|v| usage_arg(py, v, "budget"))
        .transpose()
}

#[pymethods]
impl AuthorizationCore {
    #[new]
    #[pyo3(signature = (secret=None, *, maximum_ttl_ms=None))]
    fn py_new(
        py: Python<'_>,
        secret: Option<&Bound<'_, PyAny>>,
        maximum_ttl_ms: Option<u64>,
    ) -> PyResult<Self> {
        let secret = secret_arg(py, secret)?;
        let service = AuthorizationService::new(&secret)
            .and_then(|s| {
                s.with_maximum_ttl(maximum_ttl_ms.unwrap_or(core_policy::MAXIMUM_GRANT_TTL_MS))
            })
            .map_err(|e| refused(py, &e))?;
        Ok(Self {
            inner: ExecutionAuthorization::new(service),
        })
    }

    /// A low-risk grant: `(claims dict, token)`.
    #[pyo3(signature = (*, worker_id, session_epoch, work_item_id, ownership_epoch, execution_lease, ttl_ms, now, allowed_tools=Vec::new(), allowed_resources=Vec::new(), allowed_operations=Vec::new(), budget=None, high_risk=false, approval_id=None, grant_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn issue<'py>(
        &self,
        py: Python<'py>,
        worker_id: &str,
        session_epoch: u64,
        work_item_id: &str,
        ownership_epoch: u64,
        execution_lease: &Bound<'py, PyAny>,
        ttl_ms: u64,
        now: &Bound<'py, PyAny>,
        allowed_tools: Vec<String>,
        allowed_resources: Vec<String>,
        allowed_operations: Vec<String>,
        budget: Option<&Bound<'py, PyAny>>,
        high_risk: bool,
        approval_id: Option<&str>,
        grant_id: Option<&str>,
    ) -> PyResult<(Bound<'py, PyAny>, String)> {
        let now = millis_arg(py, now, "now")?;
        let lease = lease_arg(py, execution_lease)?;
        let binding = CapabilityBinding {
            worker_id,
            session_epoch,
            work_item_id,
            ownership_epoch,
        };
        let scope = CapabilityScope {
            tools: &allowed_tools,
            resources: &allowed_resources,
            operations: &allowed_operations,
            budget: opt_usage(py, budget)?.unwrap_or(Resources::ZERO),
        };
        let id = token_id(py, grant_id)?;
        let issued = self
            .inner
            .authorization()
            .issue(
                &binding,
                &lease,
                &scope,
                high_risk,
                approval_id,
                ttl_ms,
                &id,
                now,
            )
            .map_err(|e| refused(py, &e))?;
        pair(py, &issued.claims.to_value(), issued.token)
    }

    /// The claims dict of a valid grant.
    #[pyo3(signature = (token, *, worker_id, session_epoch, work_item_id, ownership_epoch, execution_lease, now, operation=None))]
    #[allow(clippy::too_many_arguments)]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        token: &str,
        worker_id: &str,
        session_epoch: u64,
        work_item_id: &str,
        ownership_epoch: u64,
        execution_lease: &Bound<'py, PyAny>,
        now: &Bound<'py, PyAny>,
        operation: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let now = millis_arg(py, now, "now")?;
        let lease = lease_arg(py, execution_lease)?;
        let expected = CapabilityBinding {
            worker_id,
            session_epoch,
            work_item_id,
            ownership_epoch,
        };
        let grant = self
            .inner
            .authorization()
            .verify(token, &expected, &lease, operation, now)
            .map_err(|e| refused(py, &e))?;
        convert::to_python(py, &grant.to_value())
    }

    /// `ExecutionAuthorization.issue` over documents the host queried from its core: the
    /// Worker's current Session Epoch (`None`: no session), the WorkItem, its Execution Lease
    /// and its Mission documents (`None`: absent), the Mission permissions (`None`: no list),
    /// the remaining budgets of the WorkItem and its ancestry, and the Execution Approval
    /// document the request cites (`None`: none).
    #[pyo3(signature = (*, worker_id, session_epoch, work_item_id, ownership_epoch, ttl_ms, now, current_session_epoch, work_item, execution_lease, mission, remaining, mission_permissions=None, allowed_tools=Vec::new(), allowed_resources=Vec::new(), allowed_operations=Vec::new(), budget=None, approval_id=None, grant_id=None, execution_approval=None))]
    #[allow(clippy::too_many_arguments)]
    fn authorize_execution<'py>(
        &self,
        py: Python<'py>,
        worker_id: &str,
        session_epoch: u64,
        work_item_id: &str,
        ownership_epoch: u64,
        ttl_ms: u64,
        now: &Bound<'py, PyAny>,
        current_session_epoch: Option<u64>,
        work_item: Option<&Bound<'py, PyAny>>,
        execution_lease: Option<&Bound<'py, PyAny>>,
        mission: Option<&Bound<'py, PyAny>>,
        remaining: Vec<Bound<'py, PyAny>>,
        mission_permissions: Option<Vec<String>>,
        allowed_tools: Vec<String>,
        allowed_resources: Vec<String>,
        allowed_operations: Vec<String>,
        budget: Option<&Bound<'py, PyAny>>,
        approval_id: Option<&str>,
        grant_id: Option<&str>,
        execution_approval: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyAny>, String)> {
        let now = millis_arg(py, now, "now")?;
        let opt_doc = |v: Option<&Bound<'py, PyAny>>, what: &str| -> PyResult<Option<Value>> {
            convert::present(v)
                .map(|v| document(py, v, what))
                .transpose()
        };
        let documents = LiveDocuments {
            session: current_session_epoch.map(|e| (worker_id.to_owned(), e)),
            work_item: opt_doc(work_item, "work_item")?,
            execution_lease: opt_doc(execution_lease, "execution_lease")?,
            mission: opt_doc(mission, "mission")?,
            mission_permissions,
            remaining: remaining
                .iter()
                .map(|r| usage_arg(py, r, "remaining"))
                .collect::<PyResult<_>>()?,
        };
        let request = ExecutionRequest {
            binding: CapabilityBinding {
                worker_id,
                session_epoch,
                work_item_id,
                ownership_epoch,
            },
            tools: &allowed_tools,
            resources: &allowed_resources,
            operations: &allowed_operations,
            budget: opt_usage(py, budget)?,
            approval_id,
            ttl_ms,
        };
        let id = token_id(py, grant_id)?;
        // The Execution Approval the request cites, as the host queried it (`execution_approval`);
        // absent: approval-gated requests are refused with APPROVAL_REQUIRED (§12).
        let approvals = ApprovalDocuments(
            opt_doc(execution_approval, "execution_approval")?
                .into_iter()
                .collect(),
        );
        let issued = self
            .inner
            .issue(&documents, &approvals, &request, &id, now)
            .map_err(|e| refused(py, &e))?;
        pair(py, &issued.claims.to_value(), issued.token)
    }
}

/// `BudgetMeterCore(limit: ResourceUsage)`: a hard local meter (§12).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct BudgetMeterCore {
    inner: Mutex<core_policy::BudgetMeter>,
}

#[pymethods]
impl BudgetMeterCore {
    #[new]
    fn py_new(py: Python<'_>, limit: &Bound<'_, PyAny>) -> PyResult<Self> {
        let limit = usage_arg(py, limit, "limit")?;
        let meter = core_policy::BudgetMeter::new(limit).map_err(|e| refused(py, &e))?;
        Ok(Self {
            inner: Mutex::new(meter),
        })
    }

    /// Adds `delta`; the new cumulative usage, or `PolicyError` (`BUDGET_EXCEEDED`).
    fn consume(&self, py: Python<'_>, delta: &Bound<'_, PyAny>) -> PyResult<ResourceUsage> {
        let delta = usage_arg(py, delta, "delta")?;
        let mut meter = self
            .inner
            .lock()
            .map_err(|_| errors::invalid_input(py, "the meter lock is poisoned"))?;
        meter
            .consume(&delta)
            .map(ResourceUsage::new)
            .map_err(|e| refused(py, &e))
    }

    /// Usage so far.
    #[getter]
    fn usage(&self, py: Python<'_>) -> PyResult<ResourceUsage> {
        let meter = self
            .inner
            .lock()
            .map_err(|_| errors::invalid_input(py, "the meter lock is poisoned"))?;
        Ok(ResourceUsage::new(meter.usage()))
    }

    /// The limits.
    #[getter]
    fn limit(&self, py: Python<'_>) -> PyResult<ResourceUsage> {
        let meter = self
            .inner
            .lock()
            .map_err(|_| errors::invalid_input(py, "the meter lock is poisoned"))?;
        Ok(ResourceUsage::new(meter.limit()))
    }
}

/// `PolicyGuardCore(...)`: the local §20 guard, locked for use from many threads.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct PolicyGuardCore {
    inner: Mutex<core_policy::PolicyGuard>,
}

impl PolicyGuardCore {
    fn with<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut core_policy::PolicyGuard) -> Result<T, PolicyError>,
    ) -> PyResult<T> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| errors::invalid_input(py, "the guard lock is poisoned"))?;
        f(&mut guard).map_err(|e| refused(py, &e))
    }
}

#[pymethods]
impl PolicyGuardCore {
    /// Every member absent keeps the reference's default (the core's one merge rule,
    /// `CooperationLimitsConfig`).
    #[new]
    #[pyo3(signature = (*, maximum_delegation_depth=None, maximum_queued_work_items=None, maximum_active_work_items=None, maximum_unresolved_clarifications=None, maximum_message_rate_per_minute=None, maximum_proposal_rate_per_minute=None, maximum_clarification_rate_per_minute=None, maximum_tracked_keys=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        maximum_delegation_depth: Option<u32>,
        maximum_queued_work_items: Option<u32>,
        maximum_active_work_items: Option<u32>,
        maximum_unresolved_clarifications: Option<u32>,
        maximum_message_rate_per_minute: Option<u32>,
        maximum_proposal_rate_per_minute: Option<u32>,
        maximum_clarification_rate_per_minute: Option<u32>,
        maximum_tracked_keys: Option<u32>,
    ) -> PyResult<Self> {
        let given = |n: Option<u32>| n.map_or(Limit::Default, Limit::At);
        let limits = CooperationLimitsConfig {
            maximum_delegation_depth: given(maximum_delegation_depth),
            maximum_queued_work_items: given(maximum_queued_work_items),
            maximum_active_work_items: given(maximum_active_work_items),
            maximum_unresolved_clarifications: given(maximum_unresolved_clarifications),
            maximum_message_rate_per_minute: given(maximum_message_rate_per_minute),
            maximum_proposal_rate_per_minute: given(maximum_proposal_rate_per_minute),
            maximum_clarification_rate_per_minute: given(maximum_clarification_rate_per_minute),
            maximum_tracked_keys,
        }
        .resolve()
        .map_err(|e| errors::describe(py, &e))?;
        let guard = core_policy::PolicyGuard::new(limits).map_err(|e| refused(py, &e))?;
        Ok(Self {
            inner: Mutex::new(guard),
        })
    }

    fn check_delegation_depth(&self, py: Python<'_>, depth: u64) -> PyResult<()> {
        self.with(py, |g| g.check_delegation_depth(depth))
    }

    fn check_queue(&self, py: Python<'_>, queued: u64, active: u64) -> PyResult<()> {
        self.with(py, |g| g.check_queue(queued, active))
    }

    fn check_unresolved_clarifications(&self, py: Python<'_>, unresolved: u64) -> PyResult<()> {
        self.with(py, |g| g.check_unresolved_clarifications(unresolved))
    }

    /// Counts one action of `kind` (`message`, `proposal`, `clarification`) or refuses it
    /// (`RATE_LIMITED` with `retry_after_ms`).
    fn check_rate(
        &self,
        py: Python<'_>,
        kind: &str,
        principal_id: &str,
        group_id: &str,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let kind = match kind {
            "message" => RateKind::Message,
            "proposal" => RateKind::Proposal,
            "clarification" => RateKind::Clarification,
            other => {
                return Err(errors::invalid_input(
                    py,
                    format!("kind must be message, proposal or clarification, not {other:?}"),
                ));
            }
        };
        let now: UnixMillis = millis_arg(py, now, "now")?;
        self.with(py, |g| g.check_rate(kind, principal_id, group_id, now))
    }

    /// Rate keys tracked now.
    #[getter]
    fn tracked_keys(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |g| Ok(g.tracked_keys()))
    }

    /// `automatic` or `human_approval_required`.
    #[staticmethod]
    fn classify_action(operation: &str) -> &'static str {
        core_policy::PolicyGuard::classify_action(operation).as_str()
    }
}

/// The high-risk operation prefixes (§12).
#[pyfunction]
pub fn policy_high_risk_prefixes() -> Vec<&'static str> {
    core_policy::HIGH_RISK_OPERATION_PREFIXES.to_vec()
}

/// `policy_check_token_principal(principal_type)`: membership tokens are issued to Agents only
/// (`PolicyError`, `INVALID_COMMAND`, otherwise).
#[pyfunction]
pub fn policy_check_token_principal(py: Python<'_>, principal_type: &str) -> PyResult<()> {
    core_policy::check_token_principal(principal_type).map_err(|e| refused(py, &e))
}

/// The §20 cooperation limits' defaults (the reference's), by field name.
#[pyfunction]
pub fn cooperation_limits_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = core_policy::CooperationLimits::default();
    let out = PyDict::new(py);
    for (name, value) in [
        ("maximum_delegation_depth", d.maximum_delegation_depth),
        ("maximum_queued_work_items", d.maximum_queued_work_items),
        ("maximum_active_work_items", d.maximum_active_work_items),
        (
            "maximum_unresolved_clarifications",
            d.maximum_unresolved_clarifications,
        ),
        (
            "maximum_message_rate_per_minute",
            d.maximum_message_rate_per_minute,
        ),
        (
            "maximum_proposal_rate_per_minute",
            d.maximum_proposal_rate_per_minute,
        ),
        (
            "maximum_clarification_rate_per_minute",
            d.maximum_clarification_rate_per_minute,
        ),
    ] {
        out.set_item(name, value)?;
    }
    out.set_item("maximum_tracked_keys", d.maximum_tracked_keys)?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("POLICY_MAXIMUM_TTL_MS", core_policy::MAXIMUM_TTL_MS)?;
    m.add(
        "POLICY_MAXIMUM_GRANT_TTL_MS",
        core_policy::MAXIMUM_GRANT_TTL_MS,
    )?;
    m.add_function(wrap_pyfunction!(policy_check_token_principal, m)?)?;
    m.add_function(wrap_pyfunction!(cooperation_limits_defaults, m)?)?;
    Ok(())
}
