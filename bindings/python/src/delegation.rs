//! Scoped Delegation Grants (§9.1): the Grant, the authoritative state a use is checked
//! against (`DelegationContext`, `MembershipView`, `WorkItemTree`) and `DelegationAuthority`.

use std::collections::HashMap;

use missionweaveprotocol_kernel::delegation::{
    self as kernel, DelegatedWork as CoreWork, DelegationAuthority as CoreAuthority,
    DelegationContext as CoreCtx, DelegationGrant as CoreGrant, MembershipView as CoreMembership,
    WorkItemNode, WorkItemTree as CoreTree,
};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert::{self, typed};
use crate::errors;
use crate::instant::{millis_arg, to_datetime};
use crate::resources::{
    DelegationBudget, ResourceUsage, capabilities_arg, capabilities_tuple, opt_currency_arg,
    opt_usage_arg, usage_arg,
};

fn depth_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<u32> {
    Ok(convert::uint_arg(py, value, what, u64::from(u32::MAX))? as u32)
}

/// `DelegationGrant(*, grant_id, grantee_agent_id, mission_id, group_id, target_work_item_id,
/// allowed_capabilities, budget, max_descendant_depth, grantee_membership_epoch,
/// coordinator_epoch, granted_by, granted_at, expires_at)`: the persisted Grant.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegationGrant {
    inner: CoreGrant,
}

#[pymethods]
impl DelegationGrant {
    #[new]
    #[pyo3(signature = (*, grant_id, grantee_agent_id, mission_id, group_id, target_work_item_id, allowed_capabilities, budget, max_descendant_depth, grantee_membership_epoch, coordinator_epoch, granted_by, granted_at, expires_at))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        grant_id: &Bound<'_, PyAny>,
        grantee_agent_id: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        target_work_item_id: &Bound<'_, PyAny>,
        allowed_capabilities: &Bound<'_, PyAny>,
        budget: &Bound<'_, PyAny>,
        max_descendant_depth: &Bound<'_, PyAny>,
        grantee_membership_epoch: &Bound<'_, PyAny>,
        coordinator_epoch: &Bound<'_, PyAny>,
        granted_by: &Bound<'_, PyAny>,
        granted_at: &Bound<'_, PyAny>,
        expires_at: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let s = |v: &Bound<'_, PyAny>, what: &str| {
            convert::str_arg(py, v, what).map(std::borrow::Cow::into_owned)
        };
        let budget = typed::<DelegationBudget>(py, budget, "budget", "DelegationBudget")?.get();
        Ok(Self {
            inner: CoreGrant {
                grant_id: s(grant_id, "grant_id")?,
                grantee_agent_id: s(grantee_agent_id, "grantee_agent_id")?,
                mission_id: s(mission_id, "mission_id")?,
                group_id: s(group_id, "group_id")?,
                target_work_item_id: s(target_work_item_id, "target_work_item_id")?,
                allowed_capabilities: capabilities_arg(
                    py,
                    allowed_capabilities,
                    "allowed_capabilities",
                )?,
                currency: budget.currency,
                ceilings: budget.ceilings,
                max_descendant_depth: depth_arg(py, max_descendant_depth, "max_descendant_depth")?,
                grantee_membership_epoch: convert::uint_arg(
                    py,
                    grantee_membership_epoch,
                    "grantee_membership_epoch",
                    u64::MAX,
                )?,
                coordinator_epoch: convert::uint_arg(
                    py,
                    coordinator_epoch,
                    "coordinator_epoch",
                    u64::MAX,
                )?,
                granted_by: s(granted_by, "granted_by")?,
                granted_at: millis_arg(py, granted_at, "granted_at")?,
                expires_at: millis_arg(py, expires_at, "expires_at")?,
            },
        })
    }

    #[getter]
    fn grant_id(&self) -> &str {
        &self.inner.grant_id
    }
    #[getter]
    fn grantee_agent_id(&self) -> &str {
        &self.inner.grantee_agent_id
    }
    #[getter]
    fn mission_id(&self) -> &str {
        &self.inner.mission_id
    }
    #[getter]
    fn group_id(&self) -> &str {
        &self.inner.group_id
    }
    #[getter]
    fn target_work_item_id(&self) -> &str {
        &self.inner.target_work_item_id
    }
    #[getter]
    fn allowed_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        capabilities_tuple(py, &self.inner.allowed_capabilities)
    }
    #[getter]
    fn budget(&self) -> DelegationBudget {
        DelegationBudget {
            ceilings: self.inner.ceilings,
            currency: self.inner.currency,
        }
    }
    #[getter]
    fn max_descendant_depth(&self) -> u32 {
        self.inner.max_descendant_depth
    }
    #[getter]
    fn grantee_membership_epoch(&self) -> u64 {
        self.inner.grantee_membership_epoch
    }
    #[getter]
    fn coordinator_epoch(&self) -> u64 {
        self.inner.coordinator_epoch
    }
    #[getter]
    fn granted_by(&self) -> &str {
        &self.inner.granted_by
    }
    #[getter]
    fn granted_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.inner.granted_at)
    }
    #[getter]
    fn expires_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.inner.expires_at)
    }

    fn __repr__(&self) -> String {
        format!(
            "DelegationGrant(grant_id={:?}, grantee_agent_id={:?}, target_work_item_id={:?})",
            self.inner.grant_id, self.inner.grantee_agent_id, self.inner.target_work_item_id
        )
    }
}

/// `MembershipView(group_id, *, epoch, active=True, work_delegate=True)`: the acting Agent's
/// Membership in the Grant's Group as authoritative state has it now.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MembershipView {
    #[pyo3(get)]
    group_id: String,
    #[pyo3(get)]
    epoch: u64,
    #[pyo3(get)]
    active: bool,
    #[pyo3(get)]
    work_delegate: bool,
}

#[pymethods]
impl MembershipView {
    #[new]
    #[pyo3(signature = (group_id, *, epoch, active=None, work_delegate=None))]
    fn py_new(
        py: Python<'_>,
        group_id: &Bound<'_, PyAny>,
        epoch: &Bound<'_, PyAny>,
        active: Option<&Bound<'_, PyAny>>,
        work_delegate: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let flag = |v: Option<&Bound<'_, PyAny>>, what: &str| match convert::present(v) {
            Some(v) => convert::bool_arg(py, v, what),
            None => Ok(true),
        };
        Ok(Self {
            group_id: convert::str_arg(py, group_id, "group_id")?.into_owned(),
            epoch: convert::uint_arg(py, epoch, "epoch", u64::MAX)?,
            active: flag(active, "active")?,
            work_delegate: flag(work_delegate, "work_delegate")?,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "MembershipView(group_id={:?}, epoch={}, active={}, work_delegate={})",
            self.group_id,
            self.epoch,
            if self.active { "True" } else { "False" },
            if self.work_delegate { "True" } else { "False" }
        )
    }
}

/// `DelegationContext(*, actor_agent_id, mission_id, group_id, coordinator_epoch,
/// coordinator_agent_id, now, membership=None, organization_max_depth=3)`: authoritative state
/// at the moment of use (the default depth is the reference's cooperation limit).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug, Clone)]
pub struct DelegationContext {
    #[pyo3(get)]
    actor_agent_id: String,
    #[pyo3(get)]
    mission_id: String,
    #[pyo3(get)]
    group_id: String,
    #[pyo3(get)]
    coordinator_epoch: u64,
    #[pyo3(get)]
    coordinator_agent_id: String,
    now: UnixMillis,
    #[pyo3(get)]
    membership: Option<MembershipView>,
    #[pyo3(get)]
    organization_max_depth: u32,
}

#[pymethods]
impl DelegationContext {
    #[new]
    #[pyo3(signature = (*, actor_agent_id, mission_id, group_id, coordinator_epoch, coordinator_agent_id, now, membership=None, organization_max_depth=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        actor_agent_id: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        coordinator_epoch: &Bound<'_, PyAny>,
        coordinator_agent_id: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
        membership: Option<&Bound<'_, PyAny>>,
        organization_max_depth: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let s = |v: &Bound<'_, PyAny>, what: &str| {
            convert::str_arg(py, v, what).map(std::borrow::Cow::into_owned)
        };
        let membership = match convert::present(membership) {
            Some(m) => Some(
                typed::<MembershipView>(py, m, "membership", "MembershipView")?
                    .get()
                    .clone(),
            ),
            None => None,
        };
        Ok(Self {
            actor_agent_id: s(actor_agent_id, "actor_agent_id")?,
            mission_id: s(mission_id, "mission_id")?,
            group_id: s(group_id, "group_id")?,
            coordinator_epoch: convert::uint_arg(
                py,
                coordinator_epoch,
                "coordinator_epoch",
                u64::MAX,
            )?,
            coordinator_agent_id: s(coordinator_agent_id, "coordinator_agent_id")?,
            now: millis_arg(py, now, "now")?,
            membership,
            organization_max_depth: match convert::present(organization_max_depth) {
                Some(v) => depth_arg(py, v, "organization_max_depth")?,
                None => 3,
            },
        })
    }

    #[getter]
    fn now<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.now)
    }
}

impl DelegationContext {
    fn core(&self) -> CoreCtx<'_> {
        CoreCtx {
            actor_agent_id: &self.actor_agent_id,
            membership: self.membership.as_ref().map(|m| CoreMembership {
                group_id: &m.group_id,
                active: m.active,
                work_delegate: m.work_delegate,
                epoch: m.epoch,
            }),
            mission_id: &self.mission_id,
            group_id: &self.group_id,
            coordinator_epoch: self.coordinator_epoch,
            coordinator_agent_id: &self.coordinator_agent_id,
            organization_max_depth: self.organization_max_depth,
            now: self.now,
        }
    }
}

#[derive(Debug, Clone)]
struct Node {
    mission_id: String,
    parent: Option<String>,
    closed: bool,
}

#[derive(Debug, Clone, Default)]
struct Nodes(HashMap<String, Node>);

impl CoreTree for Nodes {
    fn node(&self, work_item_id: &str) -> Option<WorkItemNode<'_>> {
        self.0.get(work_item_id).map(|n| WorkItemNode {
            mission_id: &n.mission_id,
            parent_work_item_id: n.parent.as_deref(),
            closed: n.closed,
        })
    }
}

/// `WorkItemTree()`: the authoritative WorkItem graph as the Grant checks see it (Mission,
/// parent, and whether the item is failed, cancelled or verified).
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug, Clone, Default)]
pub struct WorkItemTree {
    nodes: Nodes,
}

#[pymethods]
impl WorkItemTree {
    #[new]
    fn py_new() -> Self {
        Self::default()
    }

    /// Adds or replaces a WorkItem.
    #[pyo3(signature = (work_item_id, *, mission_id, parent_work_item_id=None, closed=None))]
    fn add(
        &mut self,
        py: Python<'_>,
        work_item_id: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        parent_work_item_id: Option<&Bound<'_, PyAny>>,
        closed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let id = convert::str_arg(py, work_item_id, "work_item_id")?.into_owned();
        let node = Node {
            mission_id: convert::str_arg(py, mission_id, "mission_id")?.into_owned(),
            parent: convert::opt_str_arg(py, parent_work_item_id, "parent_work_item_id")?,
            closed: match convert::present(closed) {
                Some(v) => convert::bool_arg(py, v, "closed")?,
                None => false,
            },
        };
        self.nodes.0.insert(id, node);
        Ok(())
    }

    /// Marks a WorkItem failed, cancelled or verified (`closed=False` reopens the record).
    #[pyo3(signature = (work_item_id, closed=None))]
    fn set_closed(
        &mut self,
        py: Python<'_>,
        work_item_id: &Bound<'_, PyAny>,
        closed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let id = convert::str_arg(py, work_item_id, "work_item_id")?;
        let closed = match convert::present(closed) {
            Some(v) => convert::bool_arg(py, v, "closed")?,
            None => true,
        };
        match self.nodes.0.get_mut(id.as_ref()) {
            Some(n) => {
                n.closed = closed;
                Ok(())
            }
            None => Err(errors::invalid_input(
                py,
                format!("no WorkItem {id:?} in the tree"),
            )),
        }
    }

    /// Removes a WorkItem; returns whether it existed.
    fn remove(&mut self, py: Python<'_>, work_item_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let id = convert::str_arg(py, work_item_id, "work_item_id")?;
        Ok(self.nodes.0.remove(id.as_ref()).is_some())
    }

    fn __len__(&self) -> usize {
        self.nodes.0.len()
    }

    fn __contains__(&self, work_item_id: &Bound<'_, PyAny>) -> bool {
        work_item_id
            .extract::<String>()
            .is_ok_and(|id| self.nodes.0.contains_key(&id))
    }
}

/// `DelegatedWork(*, required_capabilities=(), budget=None, currency=None)`: what a delegated
/// `work.authorize` / `work.offer` wants to create or offer (the Work Contract's capabilities
/// and budget; a nonzero financial budget needs the currency).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug, Clone)]
pub struct DelegatedWork {
    caps: Vec<missionweaveprotocol_kernel::capability_version::CapabilityRef>,
    budget: Resources,
    currency: Option<Currency>,
}

#[pymethods]
impl DelegatedWork {
    #[new]
    #[pyo3(signature = (*, required_capabilities=None, budget=None, currency=None))]
    fn py_new(
        py: Python<'_>,
        required_capabilities: Option<&Bound<'_, PyAny>>,
        budget: Option<&Bound<'_, PyAny>>,
        currency: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            caps: match convert::present(required_capabilities) {
                Some(v) => capabilities_arg(py, v, "required_capabilities")?,
                None => Vec::new(),
            },
            budget: opt_usage_arg(py, budget, "budget")?,
            currency: opt_currency_arg(py, currency, "currency")?,
        })
    }

    #[getter]
    fn required_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        capabilities_tuple(py, &self.caps)
    }
    #[getter]
    fn budget(&self) -> ResourceUsage {
        ResourceUsage::new(self.budget)
    }
    #[getter]
    fn currency(&self) -> Option<&str> {
        self.currency.as_ref().map(Currency::as_str)
    }
}

impl DelegatedWork {
    fn core(&self) -> CoreWork<'_> {
        CoreWork {
            required_capabilities: &self.caps,
            budget: self.budget,
            currency: self.currency,
        }
    }
}

/// `DelegationAuthority(grant)`: checks and accounts every use of one Grant. Invalidating
/// conditions (Membership change, Coordinator replacement, expiry, missing or closed target)
/// latch: once seen, every later use fails with the same `DelegationViolation`.
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug, Clone)]
pub struct DelegationAuthority {
    inner: CoreAuthority,
}

type Args<'a, 'py> = (PyRef<'a, DelegationContext>, PyRef<'a, WorkItemTree>);

fn ctx_tree<'a, 'py>(
    py: Python<'py>,
    context: &'a Bound<'py, PyAny>,
    tree: &'a Bound<'py, PyAny>,
) -> PyResult<Args<'a, 'py>> {
    let ctx = typed::<DelegationContext>(py, context, "context", "DelegationContext")?.borrow();
    let tree = typed::<WorkItemTree>(py, tree, "tree", "WorkItemTree")?.borrow();
    Ok((ctx, tree))
}

fn work_arg<'a, 'py>(py: Python<'py>, work: &'a Bound<'py, PyAny>) -> PyResult<&'a DelegatedWork> {
    Ok(typed::<DelegatedWork>(py, work, "work", "DelegatedWork")?.get())
}

#[pymethods]
impl DelegationAuthority {
    #[new]
    fn py_new(py: Python<'_>, grant: &Bound<'_, PyAny>) -> PyResult<Self> {
        let grant = typed::<DelegationGrant>(py, grant, "grant", "DelegationGrant")?
            .get()
            .inner
            .clone();
        CoreAuthority::new(grant)
            .map(|inner| Self { inner })
            .map_err(|v| errors::delegation_violation(py, &v))
    }

    #[getter]
    fn grant(&self) -> DelegationGrant {
        DelegationGrant {
            inner: self.inner.grant().clone(),
        }
    }

    /// Cumulative budget of every WorkItem created or offered under the Grant.
    #[getter]
    fn charged(&self) -> ResourceUsage {
        ResourceUsage::new(self.inner.charged())
    }

    /// What remains under the ceilings.
    #[getter]
    fn remaining(&self) -> ResourceUsage {
        ResourceUsage::new(self.inner.remaining())
    }

    /// The latched `DelegationViolation` once the Grant can no longer be used, else `None`.
    #[getter]
    fn invalidated<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.inner.invalidated().map(|v| {
            errors::delegation_violation(py, v)
                .into_value(py)
                .into_bound(py)
                .into_any()
        })
    }

    /// Every use-time check that does not depend on the WorkItem (identity, scope, Membership
    /// and its epoch, Coordinator Epoch and issuer, validity window, target).
    fn check_use(
        &mut self,
        py: Python<'_>,
        context: &Bound<'_, PyAny>,
        tree: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (ctx, tree) = ctx_tree(py, context, tree)?;
        self.inner
            .check_use(&ctx.core(), &tree.nodes)
            .map_err(|v| errors::delegation_violation(py, &v))
    }

    /// `work.offer` of the target or an existing descendant under the Grant; charges the item's
    /// budget once. Returns its depth below the target.
    fn authorize_existing(
        &mut self,
        py: Python<'_>,
        context: &Bound<'_, PyAny>,
        tree: &Bound<'_, PyAny>,
        work_item_id: &Bound<'_, PyAny>,
        work: &Bound<'_, PyAny>,
    ) -> PyResult<u32> {
        let (ctx, tree) = ctx_tree(py, context, tree)?;
        let id = convert::str_arg(py, work_item_id, "work_item_id")?;
        let work = work_arg(py, work)?;
        self.inner
            .authorize_offer(&ctx.core(), &tree.nodes, &id, &work.core())
            .map_err(|v| errors::delegation_violation(py, &v))
    }

    /// `work.authorize` of a new WorkItem under `parent_work_item_id` in the Grant's subtree.
    /// Returns the new item's depth below the target.
    fn authorize_descendant(
        &mut self,
        py: Python<'_>,
        context: &Bound<'_, PyAny>,
        tree: &Bound<'_, PyAny>,
        new_work_item_id: &Bound<'_, PyAny>,
        parent_work_item_id: &Bound<'_, PyAny>,
        work: &Bound<'_, PyAny>,
    ) -> PyResult<u32> {
        let (ctx, tree) = ctx_tree(py, context, tree)?;
        let id = convert::str_arg(py, new_work_item_id, "new_work_item_id")?;
        let parent = convert::str_arg(py, parent_work_item_id, "parent_work_item_id")?;
        let work = work_arg(py, work)?;
        self.inner
            .authorize_descendant(&ctx.core(), &tree.nodes, &id, &parent, &work.core())
            .map_err(|v| errors::delegation_violation(py, &v))
    }

    /// Restores a WorkItem previously attributed to the Grant (rebuild from the log).
    fn restore_attribution(
        &mut self,
        py: Python<'_>,
        work_item_id: &Bound<'_, PyAny>,
        budget: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let id = convert::str_arg(py, work_item_id, "work_item_id")?;
        let budget = usage_arg(py, budget, "budget")?;
        self.inner
            .restore_attribution(&id, &budget)
            .map_err(|v| errors::delegation_violation(py, &v))
    }

    fn __repr__(&self) -> String {
        format!(
            "DelegationAuthority(grant_id={:?}, invalidated={})",
            self.inner.grant().grant_id,
            if self.inner.invalidated().is_some() {
                "True"
            } else {
                "False"
            }
        )
    }
}

// ---- the reference's shapes (`missionweaveprotocol.delegation`) ------------------------------
//
// Conversions only: what a reference Principal, Membership, WorkItem status or `ResourceBudget`
// means for a Grant is `missionweaveprotocol_kernel::delegation`'s.

/// `delegation_check_grant_user(principal_type)`: only an Agent may use a Grant
/// (`DelegationViolation`, kind `identity`, otherwise).
#[pyfunction]
pub fn delegation_check_grant_user(py: Python<'_>, principal_type: &str) -> PyResult<()> {
    kernel::check_grant_user(principal_type).map_err(|v| errors::delegation_violation(py, &v))
}

/// `delegation_check_grantor(principal_type)`: a Grant is granted by an Agent
/// (`DelegationViolation`, kind `malformed`, otherwise).
#[pyfunction]
pub fn delegation_check_grantor(py: Python<'_>, principal_type: &str) -> PyResult<()> {
    kernel::check_grantor(principal_type).map_err(|v| errors::delegation_violation(py, &v))
}

/// `delegation_is_closed_status(status)`: whether a WorkItem in `status` is closed for the Grant
/// checks (`verified`, `failed`, `cancelled`).
#[pyfunction]
pub fn delegation_is_closed_status(status: &str) -> bool {
    kernel::is_closed_status(status)
}

/// `delegation_membership_view(actor_agent_id, *, principal_type, principal_id, group_id,
/// status, roles, epoch)`: the acting Agent's `MembershipView` of a Membership record, or
/// `None` when the record is another principal's.
#[pyfunction]
#[pyo3(signature = (actor_agent_id, *, principal_type, principal_id, group_id, status, roles, epoch))]
#[allow(clippy::too_many_arguments)]
pub fn delegation_membership_view(
    py: Python<'_>,
    actor_agent_id: &str,
    principal_type: &str,
    principal_id: &str,
    group_id: &Bound<'_, PyAny>,
    status: &str,
    roles: &Bound<'_, PyAny>,
    epoch: &Bound<'_, PyAny>,
) -> PyResult<Option<MembershipView>> {
    let roles = convert::str_list_arg(py, roles, "roles")?;
    let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
    let group_id = convert::str_arg(py, group_id, "group_id")?;
    let record = kernel::MembershipRecord {
        principal_type,
        principal_id,
        group_id: &group_id,
        status,
        roles: &roles,
        epoch: convert::uint_arg(py, epoch, "epoch", u64::MAX)?,
    };
    Ok(
        CoreMembership::of_record(actor_agent_id, &record).map(|view| MembershipView {
            group_id: view.group_id.to_owned(),
            epoch: view.epoch,
            active: view.active,
            work_delegate: view.work_delegate,
        }),
    )
}

/// Six optional amounts (the reference's `ResourceBudget` in `ResourceUsage` field order;
/// `None` = not set).
fn optional_ceilings(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<kernel::OptionalCeilings> {
    let items: Vec<Bound<'_, PyAny>> =
        convert::iter_arg(py, value, what)?.collect::<PyResult<_>>()?;
    if items.len() != Dimension::ALL.len() {
        return Err(errors::invalid_input(
            py,
            format!("{what} must have six amounts, not {}", items.len()),
        ));
    }
    let mut out = [None; 6];
    for (d, item) in Dimension::ALL.into_iter().zip(&items) {
        out[d.index()] = match convert::present(Some(item)) {
            Some(v) => Some(convert::uint_arg(py, v, d.as_str(), MAX_SAFE_INTEGER)?),
            None => None,
        };
    }
    Ok(out)
}

/// `delegation_budget_contains(have, child)`: the reference's `ResourceBudget.contains` over
/// six optional amounts each.
#[pyfunction]
pub fn delegation_budget_contains(
    py: Python<'_>,
    have: &Bound<'_, PyAny>,
    child: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    Ok(kernel::budget_contains(
        &optional_ceilings(py, have, "have")?,
        &optional_ceilings(py, child, "child")?,
    ))
}

/// `delegation_grant_ceilings(budget)`: a Grant's ceilings (all six must be set), or
/// `DelegationViolation` (kind `malformed`) naming the unset ones.
#[pyfunction]
pub fn delegation_grant_ceilings(
    py: Python<'_>,
    budget: &Bound<'_, PyAny>,
) -> PyResult<ResourceUsage> {
    kernel::grant_ceilings(&optional_ceilings(py, budget, "budget")?)
        .map(ResourceUsage::new)
        .map_err(|v| errors::delegation_violation(py, &v))
}

/// `delegation_budget_within_ceiling(candidate, ceiling)`: whether `candidate` fits under
/// `ceiling` in every dimension (a zero ceiling permits only zero).
#[pyfunction]
pub fn delegation_budget_within_ceiling(
    py: Python<'_>,
    candidate: &Bound<'_, PyAny>,
    ceiling: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    Ok(usage_arg(py, candidate, "candidate")?.fits_within(&usage_arg(py, ceiling, "ceiling")?))
}

/// `delegation_contract_currency(grant, budget, currency=None)`: the currency of a Work Contract
/// budget under the Grant (its own, else the Grant's when it spends money).
#[pyfunction]
#[pyo3(signature = (grant, budget, currency=None))]
pub fn delegation_contract_currency(
    py: Python<'_>,
    grant: &Bound<'_, PyAny>,
    budget: &Bound<'_, PyAny>,
    currency: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<String>> {
    let grant = typed::<DelegationGrant>(py, grant, "grant", "DelegationGrant")?;
    let budget = usage_arg(py, budget, "budget")?;
    let currency = opt_currency_arg(py, currency, "currency")?;
    Ok(grant
        .get()
        .inner
        .contract_currency(&budget, currency)
        .map(|c| c.as_str().to_owned()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(delegation_check_grant_user, m)?)?;
    m.add_function(wrap_pyfunction!(delegation_check_grantor, m)?)?;
    m.add_function(wrap_pyfunction!(delegation_is_closed_status, m)?)?;
    m.add_function(wrap_pyfunction!(delegation_membership_view, m)?)?;
    m.add_function(wrap_pyfunction!(delegation_budget_contains, m)?)?;
    m.add_function(wrap_pyfunction!(delegation_grant_ceilings, m)?)?;
    m.add_function(wrap_pyfunction!(delegation_budget_within_ceiling, m)?)?;
    m.add_function(wrap_pyfunction!(delegation_contract_currency, m)?)?;
    Ok(())
}
