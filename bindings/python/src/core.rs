//! The authoritative core (`service::Core`) for `missionweaveprotocol.core` and
//! `missionweaveprotocol.store`: conversions only. Every call that runs the engine releases the
//! GIL; refusals become `missionweaveprotocol.core` exceptions through the core's own
//! family table (`CoreError::family`), never a Python-side table of codes.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use missionweaveprotocol::crypto::SigningKey as CoreSigningKey;
use missionweaveprotocol::registry::KeyRegistrySnapshot;
use missionweaveprotocol_engine::config::{CoreConfig, OfflineLimitsConfig};
use missionweaveprotocol_engine::engine::Performed;
use missionweaveprotocol_engine::service::{self, Core, CoreError};
use missionweaveprotocol_engine::store::{
    InMemoryStore as CoreStore, IntegrityKey, ReplayPage, Store, StoreOptions,
};
use missionweaveprotocol_host::OsRandom;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_open::{LifecycleError, ManagedStore, SharedStore, StoreUrl};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::convert;
use crate::errors;
use crate::keys::SigningKey;
use crate::registry::AgentRegistryKeyResolver;

/// Every store is one more `Arc<dyn Store + Send + Sync>` (in memory, SQLite, PostgreSQL).
pub(crate) type SharedCore = Core<SharedStore, CoreSigningKey>;

const CORE_MODULE: &str = "missionweaveprotocol.core";
static REFUSAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The `missionweaveprotocol.core` exception of a core refusal (not raised).
fn refusal_exception<'py>(py: Python<'py>, error: &CoreError) -> PyResult<Bound<'py, PyAny>> {
    let build = REFUSAL.import(py, CORE_MODULE, "_native_refusal")?;
    let fields = PyDict::new(py);
    for (name, value) in error.fields.iter() {
        fields.set_item(*name, errors::field(py, value)?)?;
    }
    build.call1((
        error.family.as_str(),
        error.wire_code.as_str(),
        error.reason.as_str(),
        error.message.as_str(),
        fields,
        error.retryable,
    ))
}

fn refusal(py: Python<'_>, error: &CoreError) -> PyErr {
    refusal_exception(py, error)
        .map(PyErr::from_value)
        .unwrap_or_else(|e| e)
}

fn now_or(now_ms: Option<i64>) -> UnixMillis {
    UnixMillis(now_ms.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }))
}

/// `InMemoryStore()`: the engine's per-aggregate in-memory store (a handle; `Core` shares it).
#[pyclass(
    module = "missionweaveprotocol._native",
    frozen,
    name = "InMemoryStore"
)]
pub struct NativeStore {
    inner: SharedStore,
}

impl core::fmt::Debug for NativeStore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("InMemoryStore")
    }
}

/// The last sequence of `group`'s Event log in `store` (GIL released: a durable store reads).
fn last_sequence_of(
    py: Python<'_>,
    store: &(dyn Store + Send + Sync),
    group: &str,
) -> PyResult<u64> {
    py.detach(|| store.head(group))
        .map(|h| h.last_sequence())
        .map_err(|e| refusal(py, &CoreError::describe(&e)))
}

#[pymethods]
impl NativeStore {
    #[new]
    fn py_new() -> Self {
        Self {
            inner: Arc::new(CoreStore::new()),
        }
    }

    /// The last sequence of `group_id`'s Event log (0: no Events).
    fn last_sequence(&self, py: Python<'_>, group_id: &Bound<'_, PyAny>) -> PyResult<u64> {
        let group = convert::str_arg(py, group_id, "group_id")?;
        last_sequence_of(py, &*self.inner, &group)
    }
}

/// A lifecycle refusal as the reference raises it: `RuntimeError` (used before `initialize`,
/// after `close`, or a database that would not open), with the core's `reason` and
/// `wire_code` as attributes.
fn lifecycle_error(py: Python<'_>, error: &LifecycleError) -> PyErr {
    use missionweaveprotocol::DescribeError;
    let err = PyRuntimeError::new_err(error.to_string());
    let value = err.value(py);
    let tagged = value
        .setattr("reason", error.reason())
        .and_then(|()| value.setattr("wire_code", error.wire_code().as_str()));
    match tagged {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// `SQLStore(url)`: a store named by a sqlite or postgres URL (`missionweaveprotocol.store`
/// wraps it). The URL is checked here (`InvalidInputError`, a `ValueError`); `initialize`
/// opens the database and `close` releases it, both with the GIL released.
#[pyclass(module = "missionweaveprotocol._native", frozen, name = "SQLStore")]
#[derive(Debug)]
pub struct NativeSqlStore {
    inner: Arc<ManagedStore>,
}

impl NativeSqlStore {
    fn with(url: StoreUrl) -> Self {
        Self {
            inner: Arc::new(ManagedStore::new(url)),
        }
    }

    /// The open store for a core, or `RuntimeError`.
    fn shared(&self, py: Python<'_>) -> PyResult<SharedStore> {
        self.inner
            .ensure_open()
            .map_err(|e| lifecycle_error(py, &e))?;
        Ok(Arc::clone(&self.inner) as SharedStore)
    }
}

#[pymethods]
impl NativeSqlStore {
    #[new]
    fn py_new(py: Python<'_>, url: &Bound<'_, PyAny>) -> PyResult<Self> {
        let url = convert::str_arg(py, url, "url")?;
        StoreUrl::parse(&url)
            .map(Self::with)
            .map_err(|e| errors::describe(py, &e))
    }

    /// `SQLStore.sqlite(path, integrity_key=None)`: the SQLite store at `path` (`":memory:"`:
    /// in memory). `integrity_key` (bytes, at least 32) authenticates every row with
    /// HMAC-SHA256 (`StoreOptions::integrity_key`, `docs/store.md` "Data at rest"): the file
    /// then opens with that key only, and the Core serves its Events without re-verifying
    /// their signatures when it was keyed since it was created. A key too short is
    /// `InvalidInputError`.
    #[staticmethod]
    #[pyo3(signature = (path, integrity_key = None))]
    fn sqlite(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        integrity_key: Option<&Bound<'_, PyBytes>>,
    ) -> PyResult<Self> {
        let path = convert::str_arg(py, path, "path")?;
        let url = StoreUrl::sqlite_path(&path).map_err(|e| errors::describe(py, &e))?;
        let options = match integrity_key {
            None => StoreOptions::default(),
            Some(key) => StoreOptions::keyed(
                IntegrityKey::new(key.as_bytes().to_vec()).map_err(|e| errors::describe(py, &e))?,
            ),
        };
        Ok(Self {
            inner: Arc::new(ManagedStore::with_options(url, options)),
        })
    }

    /// `SQLStore.postgresql(url)`: a postgres URL, anything else refused.
    #[staticmethod]
    fn postgresql(py: Python<'_>, url: &Bound<'_, PyAny>) -> PyResult<Self> {
        let url = convert::str_arg(py, url, "url")?;
        StoreUrl::parse_postgresql(&url)
            .map(Self::with)
            .map_err(|e| errors::describe(py, &e))
    }

    /// `sqlite` or `postgresql`.
    #[getter]
    fn dialect_name(&self) -> &'static str {
        self.inner.url().dialect_name()
    }

    /// The URL with its password masked (`***`).
    #[getter]
    fn url(&self) -> &str {
        self.inner.url().masked()
    }

    /// Whether `initialize` opened it and `close` did not release it yet.
    #[getter]
    fn is_open(&self) -> bool {
        self.inner.is_open()
    }

    /// Opens the database and migrates its schema (blocking I/O, GIL released); idempotent
    /// while open. `RuntimeError` after `close` or when the database does not open.
    fn initialize(&self, py: Python<'_>) -> PyResult<()> {
        let store = &self.inner;
        py.detach(|| store.initialize())
            .map_err(|e| lifecycle_error(py, &e))
    }

    /// Releases the connection (GIL released: SQLite checkpoints on close); idempotent.
    /// Returns whether it was open.
    fn close(&self, py: Python<'_>) -> bool {
        let store = &self.inner;
        py.detach(|| store.close())
    }

    /// The last sequence of `group_id`'s Event log (0: no Events); `RuntimeError` unless open.
    fn last_sequence(&self, py: Python<'_>, group_id: &Bound<'_, PyAny>) -> PyResult<u64> {
        let group = convert::str_arg(py, group_id, "group_id")?;
        let store = self.shared(py)?;
        last_sequence_of(py, &*store, &group)
    }
}

/// `Core(store, registry, authority_key, authority_type, authority_id, *,
/// max_future_skew_ms, max_age_ms, event_id_prefix)`: the engine, the Registry and ingress.
#[pyclass(module = "missionweaveprotocol._native", frozen, name = "Core")]
pub struct NativeCore {
    pub(crate) inner: Arc<SharedCore>,
}

impl core::fmt::Debug for NativeCore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.inner.fmt(f)
    }
}

pub(crate) fn registry_arg(
    py: Python<'_>,
    registry: &Bound<'_, PyAny>,
) -> PyResult<Arc<KeyRegistrySnapshot>> {
    if let Ok(resolver) = registry.cast::<AgentRegistryKeyResolver>() {
        return resolver
            .get()
            .inner
            .snapshot()
            .cloned()
            .map_err(|e| errors::describe(py, e));
    }
    let bytes = convert::bytes_arg(py, registry, "registry", false).map_err(|_| {
        errors::invalid_input(
            py,
            format!(
                "registry must be an AgentRegistryKeyResolver or Registry bytes, not {}",
                convert::type_name(registry)
            ),
        )
    })?;
    py.detach(|| KeyRegistrySnapshot::from_bytes_cached(&bytes))
        .map_err(|e| errors::describe(py, &e))
}

fn performed<'py>(py: Python<'py>, performed: &Performed) -> PyResult<Bound<'py, PyTuple>> {
    let events = PyTuple::new(
        py,
        performed.events.iter().map(|e| PyBytes::new(py, &e.body)),
    )?;
    (events, performed.group_id.as_str(), performed.duplicate).into_pyobject(py)
}

fn page<'py>(py: Python<'py>, page: &ReplayPage) -> PyResult<Bound<'py, PyTuple>> {
    let events = PyTuple::new(py, page.events.iter().map(|e| PyBytes::new(py, &e.body)))?;
    (events, page.continuation, page.last_sequence).into_pyobject(py)
}

#[pymethods]
impl NativeCore {
    /// `Core(store, registry, authority_key, options)`: `options` is the JSON form of the
    /// core's `CoreConfig` (built by `missionweaveprotocol.core.Core` from its keyword
    /// arguments), which owns every set-up rule; random Event IDs come from the OS.
    #[new]
    #[pyo3(signature = (store, registry, authority_key, options, offline_limits = None))]
    fn py_new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        registry: &Bound<'_, PyAny>,
        authority_key: &Bound<'_, PyAny>,
        options: &Bound<'_, PyAny>,
        offline_limits: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let store: SharedStore = match store.cast::<NativeSqlStore>() {
            Ok(sql) => sql.get().shared(py)?,
            Err(_) => {
                let memory =
                    convert::typed::<NativeStore>(py, store, "store", "InMemoryStore or SQLStore")?;
                Arc::clone(&memory.get().inner)
            }
        };
        let key = convert::typed::<SigningKey>(py, authority_key, "authority_key", "SigningKey")?;
        let options = convert::str_arg(py, options, "options")?;
        let mut config = CoreConfig::from_json(&options).map_err(|e| errors::describe(py, &e))?;
        if let Some(tuple) = convert::present(offline_limits) {
            config.offline_limits = Some(offline_limits_arg(py, tuple)?);
        }
        let registry = registry_arg(py, registry)?;
        let key = key.get().inner.clone();
        let core = config
            .build(store, registry, key, Box::new(OsRandom))
            .map_err(|e| errors::describe(py, &e))?;
        Ok(Self {
            inner: Arc::new(core),
        })
    }

    /// Verifies and applies wire Command bytes (GIL released): `(event bytes, group, duplicate)`.
    #[pyo3(signature = (command, now_ms = None))]
    fn perform<'py>(
        &self,
        py: Python<'py>,
        command: &Bound<'py, PyAny>,
        now_ms: Option<i64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let bytes = convert::bytes_arg(py, command, "command", false)?;
        let core = &self.inner;
        let result = py.detach(|| core.perform_bytes(&bytes, now_or(now_ms)));
        match result {
            Ok(done) => performed(py, &done),
            Err(e) => Err(refusal(py, &e)),
        }
    }

    /// Several wire Commands in order, one GIL release for all: each result is the tuple of
    /// `perform` or the refusal's exception instance (not raised).
    #[pyo3(signature = (commands, now_ms = None))]
    fn perform_many<'py>(
        &self,
        py: Python<'py>,
        commands: &Bound<'py, PyAny>,
        now_ms: Option<i64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut owned = Vec::new();
        for item in convert::iter_arg(py, commands, "commands")? {
            owned.push(convert::bytes_arg(py, &item?, "command", false)?.into_owned());
        }
        let core = &self.inner;
        let results: Vec<Result<Performed, CoreError>> = py.detach(|| {
            owned
                .iter()
                .map(|bytes| core.perform_bytes(bytes, now_or(now_ms)))
                .collect()
        });
        let out = PyList::empty(py);
        for result in &results {
            match result {
                Ok(done) => out.append(performed(py, done)?)?,
                Err(e) => out.append(refusal_exception(py, e)?)?,
            }
        }
        Ok(out)
    }

    /// `perform_many` with each Command's own time: `items` are `(bytes, now_ms | None)`
    /// pairs (the Core's batching of concurrent awaits, one GIL release per batch).
    fn perform_timed<'py>(
        &self,
        py: Python<'py>,
        items: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut owned = Vec::new();
        for item in convert::iter_arg(py, items, "items")? {
            let (bytes, now_ms): (Bound<'py, PyAny>, Option<i64>) = item?.extract()?;
            owned.push((
                convert::bytes_arg(py, &bytes, "command", false)?.into_owned(),
                now_ms,
            ));
        }
        let core = &self.inner;
        let results: Vec<Result<Performed, CoreError>> = py.detach(|| {
            owned
                .iter()
                .map(|(bytes, now_ms)| core.perform_bytes(bytes, now_or(*now_ms)))
                .collect()
        });
        let out = PyList::empty(py);
        for result in &results {
            match result {
                Ok(done) => out.append(performed(py, done)?)?,
                Err(e) => out.append(refusal_exception(py, e)?)?,
            }
        }
        Ok(out)
    }

    /// The query answer (the normative document, as plain Python values).
    #[pyo3(signature = (kind, entity_id, group_id = None, actor_type = None, now_ms = None))]
    fn query<'py>(
        &self,
        py: Python<'py>,
        kind: &Bound<'py, PyAny>,
        entity_id: &Bound<'py, PyAny>,
        group_id: Option<&Bound<'py, PyAny>>,
        actor_type: Option<&Bound<'py, PyAny>>,
        now_ms: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kind = convert::str_arg(py, kind, "kind")?;
        let entity = convert::str_arg(py, entity_id, "entity_id")?;
        let group = convert::opt_str_arg(py, group_id, "group_id")?;
        let actor = convert::opt_str_arg(py, actor_type, "actor_type")?;
        let core = &self.inner;
        let answer = py.detach(|| {
            core.query_named(
                &kind,
                &entity,
                group.as_deref(),
                actor.as_deref(),
                now_or(now_ms),
            )
        });
        match answer {
            Ok(value) => convert::to_python(py, &value),
            Err(e) => Err(refusal(py, &e)),
        }
    }

    /// `(event bytes, continuation, last_sequence)` of up to `limit` Events after `after`.
    fn replay<'py>(
        &self,
        py: Python<'py>,
        group_id: &Bound<'py, PyAny>,
        after: i64,
        limit: i64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let group = convert::str_arg(py, group_id, "group_id")?;
        let core = &self.inner;
        match py.detach(|| core.replay(&group, after, limit)) {
            Ok(p) => page(py, &p),
            Err(e) => Err(refusal(py, &e)),
        }
    }

    /// The freshness window `(max_future_skew_ms, max_age_ms)`.
    #[getter]
    fn freshness(&self) -> (u64, u64) {
        let w = self.inner.freshness();
        (w.max_future_skew_ms, w.max_age_ms)
    }
}

/// `error_family(wire_code, reason)`: the reference family of a refusal (the core's table).
#[pyfunction]
pub fn error_family(
    py: Python<'_>,
    wire_code: &Bound<'_, PyAny>,
    reason: &Bound<'_, PyAny>,
) -> PyResult<&'static str> {
    let code = convert::str_arg(py, wire_code, "wire_code")?;
    let reason = convert::str_arg(py, reason, "reason")?;
    let code = missionweaveprotocol::WireCode::parse(&code)
        .ok_or_else(|| errors::invalid_input(py, format!("{code:?} is not a wire code")))?;
    Ok(service::ErrorFamily::of(code, &reason).as_str())
}

/// `wire_code_families()`: every §19 wire code with its family, `{code: family}`.
#[pyfunction]
pub fn wire_code_families(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (code, family) in service::wire_code_families() {
        out.set_item(code, family)?;
    }
    Ok(out)
}

/// `(max_disconnect_grace_ms, max_actions, max_usage)` as the configuration's offline bounds
/// (the core checks them when it builds).
fn offline_limits_arg(py: Python<'_>, tuple: &Bound<'_, PyAny>) -> PyResult<OfflineLimitsConfig> {
    let items: Vec<Bound<'_, PyAny>> =
        convert::iter_arg(py, tuple, "offline_limits")?.collect::<PyResult<_>>()?;
    let [grace, actions, usage] = items.as_slice() else {
        return Err(errors::invalid_input(
            py,
            "offline_limits is (max_disconnect_grace_ms, max_actions, max_usage)",
        ));
    };
    Ok(OfflineLimitsConfig {
        max_disconnect_grace_ms: convert::uint_arg(py, grace, "max_disconnect_grace_ms", u64::MAX)?,
        max_actions: convert::uint_arg(py, actions, "max_actions", u64::from(u32::MAX))? as u32,
        max_usage: Some(crate::resources::usage_arg(py, usage, "max_usage")?.into()),
    })
}
