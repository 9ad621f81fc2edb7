//! The six budget dimensions (`ResourceUsage`, `DelegationBudget`) and capability references.

use missionweaveprotocol_kernel::capability_version::{self, CapabilityRef as CoreCapabilityRef};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, MAX_SAFE_INTEGER, Resources};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::convert::{self, type_name};
use crate::errors;

fn amounts(py: Python<'_>, values: [&Bound<'_, PyAny>; 6]) -> PyResult<Resources> {
    let mut out = Resources::ZERO;
    for (d, v) in Dimension::ALL.into_iter().zip(values) {
        out.set(d, convert::uint_arg(py, v, d.as_str(), MAX_SAFE_INTEGER)?);
    }
    Ok(out)
}

fn repr_amounts(name: &str, r: &Resources, extra: &str) -> String {
    let fields: Vec<String> = Dimension::ALL
        .into_iter()
        .map(|d| format!("{}={}", d.as_str(), r.get(d)))
        .collect();
    format!("{name}({}{extra})", fields.join(", "))
}

fn amounts_dict<'py>(py: Python<'py>, r: &Resources) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for d in Dimension::ALL {
        dict.set_item(d.as_str(), r.get(d))?;
    }
    Ok(dict)
}

/// `ResourceUsage(financial_microunits=0, model_tokens=0, tool_calls=0, compute_seconds=0,
/// wall_clock_seconds=0, external_actions=0)`: six non-negative safe integers. Used for usage,
/// deltas and limits (a zero limit allows nothing). Money is in integer micro-units.
#[pyclass(
    module = "missionweaveprotocol._native",
    frozen,
    eq,
    hash,
    from_py_object
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceUsage {
    pub inner: Resources,
}

#[pymethods]
impl ResourceUsage {
    #[new]
    #[pyo3(signature = (financial_microunits=None, model_tokens=None, tool_calls=None, compute_seconds=None, wall_clock_seconds=None, external_actions=None))]
    fn py_new<'py>(
        py: Python<'py>,
        financial_microunits: Option<&Bound<'py, PyAny>>,
        model_tokens: Option<&Bound<'py, PyAny>>,
        tool_calls: Option<&Bound<'py, PyAny>>,
        compute_seconds: Option<&Bound<'py, PyAny>>,
        wall_clock_seconds: Option<&Bound<'py, PyAny>>,
        external_actions: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Self> {
        let zero = 0i64.into_pyobject(py)?.into_any();
        let pick = |v: Option<&Bound<'py, PyAny>>| v.cloned().unwrap_or_else(|| zero.clone());
        let values = [
            pick(financial_microunits),
            pick(model_tokens),
            pick(tool_calls),
            pick(compute_seconds),
            pick(wall_clock_seconds),
            pick(external_actions),
        ];
        Ok(Self {
            inner: amounts(
                py,
                [
                    &values[0], &values[1], &values[2], &values[3], &values[4], &values[5],
                ],
            )?,
        })
    }

    /// `ResourceUsage` with every dimension set to `value`.
    #[staticmethod]
    fn splat(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self {
            inner: Resources::splat(convert::uint_arg(py, value, "value", MAX_SAFE_INTEGER)?),
        })
    }

    #[getter]
    fn financial_microunits(&self) -> u64 {
        self.inner.get(Dimension::Financial)
    }
    #[getter]
    fn model_tokens(&self) -> u64 {
        self.inner.get(Dimension::ModelTokens)
    }
    #[getter]
    fn tool_calls(&self) -> u64 {
        self.inner.get(Dimension::ToolCalls)
    }
    #[getter]
    fn compute_seconds(&self) -> u64 {
        self.inner.get(Dimension::ComputeSeconds)
    }
    #[getter]
    fn wall_clock_seconds(&self) -> u64 {
        self.inner.get(Dimension::WallClockSeconds)
    }
    #[getter]
    fn external_actions(&self) -> u64 {
        self.inner.get(Dimension::ExternalSideEffects)
    }

    /// True when every dimension is zero.
    fn is_zero(&self) -> bool {
        self.inner.is_zero()
    }

    /// The six amounts by field name.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        amounts_dict(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        repr_amounts("ResourceUsage", &self.inner, "")
    }
}

impl ResourceUsage {
    pub fn new(inner: Resources) -> Self {
        Self { inner }
    }
}

/// A `ResourceUsage` argument, or `InvalidInputError`.
pub fn usage_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<Resources> {
    value
        .cast::<ResourceUsage>()
        .map(|u| u.get().inner)
        .map_err(|_| {
            errors::invalid_input(
                py,
                format!("{what} must be a ResourceUsage, not {}", type_name(value)),
            )
        })
}

/// An optional `ResourceUsage` (default: zero).
pub fn opt_usage_arg(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Resources> {
    match convert::present(value) {
        Some(v) => usage_arg(py, v, what),
        None => Ok(Resources::ZERO),
    }
}

/// A currency code argument (`^[A-Z]{3}$`).
pub fn currency_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<Currency> {
    let text = convert::str_arg(py, value, what)?;
    Currency::parse(&text).ok_or_else(|| {
        errors::invalid_input(
            py,
            format!("{what} must be three upper-case letters (ISO 4217), not {text:?}"),
        )
    })
}

/// An optional currency code.
pub fn opt_currency_arg(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<Currency>> {
    convert::present(value)
        .map(|v| currency_arg(py, v, what))
        .transpose()
}

/// `DelegationBudget(*, currency, financial_microunits, model_tokens, tool_calls,
/// compute_seconds, wall_clock_seconds, external_actions)`: a Grant's cumulative ceilings.
/// All six ceilings and the currency are required (§9.1).
#[pyclass(
    module = "missionweaveprotocol._native",
    frozen,
    eq,
    hash,
    from_py_object
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DelegationBudget {
    pub ceilings: Resources,
    pub currency: Currency,
}

#[pymethods]
impl DelegationBudget {
    #[new]
    #[pyo3(signature = (*, currency, financial_microunits, model_tokens, tool_calls, compute_seconds, wall_clock_seconds, external_actions))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        currency: &Bound<'_, PyAny>,
        financial_microunits: &Bound<'_, PyAny>,
        model_tokens: &Bound<'_, PyAny>,
        tool_calls: &Bound<'_, PyAny>,
        compute_seconds: &Bound<'_, PyAny>,
        wall_clock_seconds: &Bound<'_, PyAny>,
        external_actions: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        Ok(Self {
            currency: currency_arg(py, currency, "currency")?,
            ceilings: amounts(
                py,
                [
                    financial_microunits,
                    model_tokens,
                    tool_calls,
                    compute_seconds,
                    wall_clock_seconds,
                    external_actions,
                ],
            )?,
        })
    }

    #[getter]
    fn currency(&self) -> &str {
        self.currency.as_str()
    }
    #[getter]
    fn financial_microunits(&self) -> u64 {
        self.ceilings.get(Dimension::Financial)
    }
    #[getter]
    fn model_tokens(&self) -> u64 {
        self.ceilings.get(Dimension::ModelTokens)
    }
    #[getter]
    fn tool_calls(&self) -> u64 {
        self.ceilings.get(Dimension::ToolCalls)
    }
    #[getter]
    fn compute_seconds(&self) -> u64 {
        self.ceilings.get(Dimension::ComputeSeconds)
    }
    #[getter]
    fn wall_clock_seconds(&self) -> u64 {
        self.ceilings.get(Dimension::WallClockSeconds)
    }
    #[getter]
    fn external_actions(&self) -> u64 {
        self.ceilings.get(Dimension::ExternalSideEffects)
    }

    /// The ceilings as a `ResourceUsage`.
    fn ceilings(&self) -> ResourceUsage {
        ResourceUsage::new(self.ceilings)
    }

    fn __repr__(&self) -> String {
        repr_amounts(
            "DelegationBudget",
            &self.ceilings,
            &format!(", currency={:?}", self.currency.as_str()),
        )
    }
}

/// `CapabilityRef(id, version)`: a capability at a semantic version (a requirement's minimum or
/// the version offered).
#[pyclass(
    module = "missionweaveprotocol._native",
    frozen,
    eq,
    hash,
    from_py_object
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CapabilityRef {
    pub inner: CoreCapabilityRef,
}

#[pymethods]
impl CapabilityRef {
    #[new]
    fn py_new(py: Python<'_>, id: &Bound<'_, PyAny>, version: &Bound<'_, PyAny>) -> PyResult<Self> {
        let id = convert::str_arg(py, id, "id")?;
        let version = convert::str_arg(py, version, "version")?;
        if id.is_empty() {
            return Err(errors::invalid_input(py, "capability id must not be empty"));
        }
        CoreCapabilityRef::new(&id, &version)
            .map(|inner| Self { inner })
            .ok_or_else(|| {
                errors::invalid_input(
                    py,
                    format!("capability version {version:?} is not a semantic version"),
                )
            })
    }

    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }

    #[getter]
    fn version(&self) -> &str {
        self.inner.version.as_str()
    }

    fn __repr__(&self) -> String {
        format!(
            "CapabilityRef(id={:?}, version={:?})",
            self.inner.id,
            self.inner.version.as_str()
        )
    }
}

/// One `CapabilityRef` or `(id, version)` pair.
fn capability_arg(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<CoreCapabilityRef> {
    if let Ok(c) = value.cast::<CapabilityRef>() {
        return Ok(c.get().inner.clone());
    }
    if let Ok(pair) = value.cast::<PyTuple>()
        && pair.len() == 2
    {
        let c = CapabilityRef::py_new(py, &pair.get_item(0)?, &pair.get_item(1)?)?;
        return Ok(c.inner);
    }
    Err(errors::invalid_input(
        py,
        format!(
            "a capability must be a CapabilityRef or an (id, version) tuple, not {}",
            type_name(value)
        ),
    ))
}

/// An iterable of capabilities.
pub fn capabilities_arg(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<Vec<CoreCapabilityRef>> {
    convert::iter_arg(py, value, what)?
        .map(|item| capability_arg(py, &item?))
        .collect()
}

/// Capabilities as a tuple of `CapabilityRef`.
pub fn capabilities_tuple<'py>(
    py: Python<'py>,
    caps: &[CoreCapabilityRef],
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, caps.iter().map(|c| CapabilityRef { inner: c.clone() }))
}

/// `capability_reference_version(version=None)`: the SemVer text of a reference capability
/// version — an `int` n is `n.0.0`, `None` (a bare capability id) is any version (`0.0.0`), a
/// `str` is taken as it is.
#[pyfunction]
#[pyo3(signature = (version=None))]
pub fn capability_reference_version(
    py: Python<'_>,
    version: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    match convert::present(version) {
        None => Ok(capability_version::ANY_VERSION.to_owned()),
        Some(v) if convert::plain_int(v) => Ok(capability_version::reference_version(
            convert::uint_arg(py, v, "version", u64::MAX)?,
        )),
        Some(v) => Ok(convert::str_arg(py, v, "version")?.into_owned()),
    }
}

/// `budget_from_wire(budget) -> (currency | None, (six limits | None))`: the limits of a
/// `common.schema.json#/$defs/budget` object as written (the engine's reading,
/// `budget::account::wire_dimensions`): `None` for a dimension left out, the financial one in
/// exact micro-units. A malformed budget is `InvalidInputError`.
#[pyfunction]
pub fn budget_from_wire<'py>(
    py: Python<'py>,
    budget: &Bound<'py, PyAny>,
) -> PyResult<(Option<String>, Bound<'py, PyTuple>)> {
    let value = convert::to_value(budget)
        .map_err(|_| errors::invalid_input(py, "budget must be a JSON object"))?;
    let (currency, limits) = missionweaveprotocol_engine::budget::account::wire_dimensions(&value)
        .ok_or_else(|| {
            errors::invalid_input(
                py,
                "budget is not a budget object (limits are safe non-negative integers, the \
                 financial one exact to a micro-unit; currency is ISO 4217)",
            )
        })?;
    Ok((
        currency.map(|c| c.as_str().to_owned()),
        PyTuple::new(py, limits)?,
    ))
}

/// `budget_to_wire(currency, limits) -> dict`: the inverse of `budget_from_wire` (the engine's
/// `wire_budget`): the dimensions that are set, the financial limit as `micro-units / 10^6`
/// written exactly. `InvalidInputError` for a limit above 2^53 − 1, a financial limit without
/// a currency, or not six limits.
#[pyfunction]
#[pyo3(signature = (currency, limits))]
pub fn budget_to_wire<'py>(
    py: Python<'py>,
    currency: Option<&Bound<'py, PyAny>>,
    limits: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let currency = opt_currency_arg(py, currency, "currency")?;
    let items = convert::iter_arg(py, limits, "limits")?.collect::<PyResult<Vec<_>>>()?;
    if items.len() != 6 {
        return Err(errors::invalid_input(py, "limits must hold six values"));
    }
    let mut out = [None; 6];
    for (slot, (item, d)) in out.iter_mut().zip(items.iter().zip(Dimension::ALL)) {
        if !item.is_none() {
            *slot = Some(convert::uint_arg(py, item, d.as_str(), MAX_SAFE_INTEGER)?);
        }
    }
    let value = missionweaveprotocol_engine::budget::account::wire_budget(currency.as_ref(), &out)
        .ok_or_else(|| errors::invalid_input(py, "a financial limit needs a currency"))?;
    convert::to_python(py, &value)
}
