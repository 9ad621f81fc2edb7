//! The hierarchical six-dimensional budget ledger (§12, §14) and its snapshot.

use missionweaveprotocol::json::{self, canonical_bytes};
use missionweaveprotocol_kernel::budget::{
    AccountKind, BudgetLedger as CoreLedger, BudgetLedgerSnapshot as CoreSnapshot,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert::{self, type_name};
use crate::errors;
use crate::resources::{ResourceUsage, opt_currency_arg, usage_arg};

/// An `AccountRef`: `("mission", id)` or `("work_item", id)`.
fn account_arg(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<(AccountKind, String)> {
    let bad = || {
        errors::invalid_input(
            py,
            format!(
                "account must be a ('mission' | 'work_item', id) tuple, not {}",
                type_name(value)
            ),
        )
    };
    let pair = value.cast::<PyTuple>().map_err(|_| bad())?;
    if pair.len() != 2 {
        return Err(bad());
    }
    let first = pair.get_item(0)?;
    let kind = convert::str_arg(py, &first, "account kind")?;
    let kind = AccountKind::parse(kind.as_ref()).ok_or_else(bad)?;
    let id = convert::str_arg(py, &pair.get_item(1)?, "account id")?.into_owned();
    Ok((kind, id))
}

/// `BudgetLedgerSnapshot`: a full ledger snapshot. `to_dict()`/`from_dict()` give its JSON form
/// (`{"version": 1, "missions": [...], "workItems": [...]}`).
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetLedgerSnapshot {
    inner: CoreSnapshot,
}

#[pymethods]
impl BudgetLedgerSnapshot {
    /// Reads the JSON form strictly (unknown members, missing members and inexact integers
    /// are `BudgetLedgerError` with kind `malformed_snapshot`).
    #[staticmethod]
    fn from_dict(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = convert::snapshot_mapping(py, data, "data", "a mapping (the snapshot's form)")?;
        CoreSnapshot::from_value(&value)
            .map(|inner| Self { inner })
            .map_err(|e| errors::budget_snapshot_error(py, &e))
    }

    /// Parses the JSON text (strict parser) and reads it like `from_dict`.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = convert::bytes_arg(py, text, "text", true)?;
        let value = json::parse(&bytes).map_err(|e| errors::parse_error(py, &e))?;
        CoreSnapshot::from_value(&value)
            .map(|inner| Self { inner })
            .map_err(|e| errors::budget_snapshot_error(py, &e))
    }

    /// The JSON form as plain Python values.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(py, &self.inner.to_value())
    }

    /// The JSON form as RFC 8785 canonical text.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        let bytes =
            canonical_bytes(&self.inner.to_value()).map_err(|e| errors::canonical_error(py, &e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    #[getter]
    fn mission_ids(&self) -> Vec<String> {
        self.inner
            .missions
            .iter()
            .map(|m| m.mission_id.clone())
            .collect()
    }

    #[getter]
    fn work_item_ids(&self) -> Vec<String> {
        self.inner
            .work_items
            .iter()
            .map(|w| w.work_item_id.clone())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "BudgetLedgerSnapshot(missions={}, work_items={})",
            self.inner.missions.len(),
            self.inner.work_items.len()
        )
    }
}

/// `BudgetLedger()`: Missions, child Missions and WorkItems with six-dimensional limits.
/// Children reserve their limits against their parent; a consumption is charged to a WorkItem
/// and its whole ancestry atomically (`BUDGET_EXCEEDED` names the dimension). O(depth) per call.
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug, Clone, Default)]
pub struct BudgetLedger {
    inner: CoreLedger,
}

#[pymethods]
impl BudgetLedger {
    #[new]
    fn py_new() -> Self {
        Self::default()
    }

    /// Registers a root Mission, or — with `parent_work_item_id` — a child Mission promoted
    /// from that WorkItem (its limits are reserved against it; the currency defaults to the
    /// parent's and must match it). A nonzero financial limit needs a currency.
    #[pyo3(signature = (mission_id, limit, *, currency=None, parent_work_item_id=None))]
    fn register_mission(
        &mut self,
        py: Python<'_>,
        mission_id: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        currency: Option<&Bound<'_, PyAny>>,
        parent_work_item_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let id = convert::str_arg(py, mission_id, "mission_id")?;
        let limit = usage_arg(py, limit, "limit")?;
        let currency = opt_currency_arg(py, currency, "currency")?;
        let result = match convert::opt_str_arg(py, parent_work_item_id, "parent_work_item_id")? {
            Some(parent) => self
                .inner
                .register_child_mission(&id, &parent, currency, limit),
            None => self.inner.register_mission(&id, currency, limit),
        };
        result.map_err(|e| errors::budget_error(py, &e))
    }

    /// Registers a WorkItem under its Mission or under a parent WorkItem of the same Mission.
    #[pyo3(signature = (work_item_id, mission_id, limit, *, parent_work_item_id=None))]
    fn register_work_item(
        &mut self,
        py: Python<'_>,
        work_item_id: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        parent_work_item_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let id = convert::str_arg(py, work_item_id, "work_item_id")?;
        let mission = convert::str_arg(py, mission_id, "mission_id")?;
        let limit = usage_arg(py, limit, "limit")?;
        let parent = convert::opt_str_arg(py, parent_work_item_id, "parent_work_item_id")?;
        self.inner
            .register_work_item(&id, &mission, parent.as_deref(), limit)
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// Charges a nonzero `delta` to the WorkItem and every ancestor, all or nothing. Returns
    /// the WorkItem's new cumulative usage.
    fn consume(
        &mut self,
        py: Python<'_>,
        work_item_id: &Bound<'_, PyAny>,
        delta: &Bound<'_, PyAny>,
    ) -> PyResult<ResourceUsage> {
        let id = convert::str_arg(py, work_item_id, "work_item_id")?;
        let delta = usage_arg(py, delta, "delta")?;
        self.inner
            .consume(&id, &delta)
            .map(ResourceUsage::new)
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// What can still be consumed through the account: the minimum of `limit − usage` over it
    /// and its whole ancestry.
    fn remaining(&self, py: Python<'_>, account: &Bound<'_, PyAny>) -> PyResult<ResourceUsage> {
        let (kind, id) = account_arg(py, account)?;
        self.inner
            .remaining(kind, &id)
            .map(ResourceUsage::new)
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// Cumulative usage of the account's subtree.
    fn usage(&self, py: Python<'_>, account: &Bound<'_, PyAny>) -> PyResult<ResourceUsage> {
        let (kind, id) = account_arg(py, account)?;
        self.inner
            .usage(kind, &id)
            .map(ResourceUsage::new)
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// The account's limits.
    fn limit(&self, py: Python<'_>, account: &Bound<'_, PyAny>) -> PyResult<ResourceUsage> {
        let (kind, id) = account_arg(py, account)?;
        self.inner
            .limit(kind, &id)
            .map(ResourceUsage::new)
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// Sum of the limits reserved by the account's direct children.
    fn reserved(&self, py: Python<'_>, account: &Bound<'_, PyAny>) -> PyResult<ResourceUsage> {
        let (kind, id) = account_arg(py, account)?;
        self.inner
            .reserved(kind, &id)
            .map(ResourceUsage::new)
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// The currency of the account's financial dimension (a WorkItem uses its Mission's).
    fn currency(&self, py: Python<'_>, account: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let (kind, id) = account_arg(py, account)?;
        self.inner
            .currency(kind, &id)
            .map(|c| c.map(|c| c.as_str().to_owned()))
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// Number of ancestors (0 for a root Mission).
    fn depth(&self, py: Python<'_>, account: &Bound<'_, PyAny>) -> PyResult<usize> {
        let (kind, id) = account_arg(py, account)?;
        self.inner
            .depth(kind, &id)
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// A full snapshot.
    fn snapshot(&self) -> BudgetLedgerSnapshot {
        BudgetLedgerSnapshot {
            inner: self.inner.snapshot(),
        }
    }

    /// Rebuilds from a `BudgetLedgerSnapshot` or its JSON form (a mapping), rejecting
    /// duplicates, dangling or cross-Mission parents, cycles, currency conflicts,
    /// over-reservation and inconsistent totals.
    #[staticmethod]
    fn rebuild(py: Python<'_>, snapshot: &Bound<'_, PyAny>) -> PyResult<Self> {
        let snap = match snapshot.cast::<BudgetLedgerSnapshot>() {
            Ok(s) => s.get().inner.clone(),
            Err(_) => {
                let value = convert::snapshot_mapping(
                    py,
                    snapshot,
                    "snapshot",
                    "a BudgetLedgerSnapshot or its mapping form",
                )?;
                CoreSnapshot::from_value(&value)
                    .map_err(|e| errors::budget_snapshot_error(py, &e))?
            }
        };
        CoreLedger::rebuild(&snap)
            .map(|inner| Self { inner })
            .map_err(|e| errors::budget_error(py, &e))
    }

    /// Number of accounts (Missions plus WorkItems).
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!("BudgetLedger(accounts={})", self.inner.len())
    }
}
