//! The embedded bundle, its integrity checks, the conformance runners and the schema catalog.

use missionweaveprotocol::bundle as core_bundle;
use missionweaveprotocol::conformance::{self, BundleKind, BundleSource, EmbeddedBundle};
use missionweaveprotocol::schema::SchemaCatalog as CoreCatalog;
use missionweaveprotocol_cli::DirectoryBundle;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{self, ToJsonError};
use crate::errors;

/// The bundle root argument: `None` for the embedded bundle, or a directory.
enum Source {
    Embedded(EmbeddedBundle),
    Directory(DirectoryBundle),
}

impl Source {
    fn open(py: Python<'_>, root: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let Some(root) = root.filter(|r| !r.is_none()) else {
            return Ok(Self::Embedded(EmbeddedBundle));
        };
        let path: std::path::PathBuf = root.extract().map_err(|_| {
            errors::invalid_input(
                py,
                format!(
                    "root must be a path (str or os.PathLike), not {}",
                    convert::type_name(root)
                ),
            )
        })?;
        DirectoryBundle::open(&path)
            .map(Self::Directory)
            .map_err(|message| errors::bundle_text(py, &message))
    }

    fn as_dyn(&self) -> &(dyn BundleSource + Sync) {
        match self {
            Self::Embedded(embedded) => embedded,
            Self::Directory(directory) => directory,
        }
    }
}

/// What `verify_cryptography_bundle` established.
#[pyclass(module = "missionweaveprotocol._native", frozen, get_all)]
#[derive(Debug)]
pub struct CryptographyBundleSummary {
    source_commit: String,
    profile_id: String,
    manifest_version: i64,
    artifact_digest: String,
    artifact_count: usize,
    case_count: usize,
    evaluation_count: usize,
}

/// What `verify_admission_bundle` established.
#[pyclass(module = "missionweaveprotocol._native", frozen, get_all)]
#[derive(Debug)]
pub struct AdmissionBundleSummary {
    source_commit: String,
    profile_id: String,
    manifest_version: i64,
    artifact_digest: String,
    cryptography_artifact_digest: String,
    artifact_count: usize,
    case_count: usize,
    evaluation_count: usize,
}

/// Re-verifies the cryptography bundle (embedded, or the directory `root`).
#[pyfunction]
#[pyo3(signature = (root = None))]
pub fn verify_cryptography_bundle(
    py: Python<'_>,
    root: Option<&Bound<'_, PyAny>>,
) -> PyResult<CryptographyBundleSummary> {
    let source = Source::open(py, root)?;
    let summary = py
        .detach(|| core_bundle::verify_cryptography_bundle_from(source.as_dyn()))
        .map_err(|e| errors::bundle_error(py, &e))?;
    Ok(CryptographyBundleSummary {
        source_commit: summary.source_commit,
        profile_id: summary.profile_id,
        manifest_version: summary.manifest_version,
        artifact_digest: summary.artifact_digest,
        artifact_count: summary.artifact_count,
        case_count: summary.case_count,
        evaluation_count: summary.evaluation_count,
    })
}

/// Re-verifies the admission bundle, including the cryptography bundle it pins.
#[pyfunction]
#[pyo3(signature = (root = None))]
pub fn verify_admission_bundle(
    py: Python<'_>,
    root: Option<&Bound<'_, PyAny>>,
) -> PyResult<AdmissionBundleSummary> {
    let source = Source::open(py, root)?;
    let summary = py
        .detach(|| core_bundle::verify_admission_bundle_from(source.as_dyn()))
        .map_err(|e| errors::bundle_error(py, &e))?;
    Ok(AdmissionBundleSummary {
        source_commit: summary.source_commit,
        profile_id: summary.profile_id,
        manifest_version: summary.manifest_version,
        artifact_digest: summary.artifact_digest,
        cryptography_artifact_digest: summary.cryptography_artifact_digest,
        artifact_count: summary.artifact_count,
        case_count: summary.case_count,
        evaluation_count: summary.evaluation_count,
    })
}

/// The bytes of one embedded bundle file, or `None`.
#[pyfunction]
pub fn embedded_file<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let path = convert::str_arg(py, path, "path")?;
    Ok(core_bundle::embedded_file(&path).map(|bytes| PyBytes::new(py, bytes)))
}

/// Every embedded file path (schemas first).
#[pyfunction]
pub fn embedded_paths() -> Vec<&'static str> {
    core_bundle::embedded_files()
        .map(|(path, _)| path)
        .collect()
}

/// One bundle's result.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct BundleReport {
    inner: conformance::BundleReport,
}

#[pymethods]
impl BundleReport {
    /// `structural`, `cryptography` or `admission`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind.as_str()
    }
    #[getter]
    fn total(&self) -> usize {
        self.inner.total
    }
    #[getter]
    fn passed(&self) -> usize {
        self.inner.passed
    }
    #[getter]
    fn ok(&self) -> bool {
        self.inner.ok()
    }
    /// `(id, message)` per failed evaluation or integrity problem.
    #[getter]
    fn failures(&self) -> Vec<(String, String)> {
        self.inner
            .failures
            .iter()
            .map(|f| (f.id.clone(), f.message.clone()))
            .collect()
    }
    /// `(id, actual, passed)` per evaluation; `actual` is the stage reached (`complete`, a
    /// stage name, `admission/<reason>`) or `valid`/`invalid` for structural vectors.
    #[getter]
    fn outcomes(&self) -> Vec<(String, String, bool)> {
        self.inner.outcomes.clone()
    }
    #[getter]
    fn facts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in &self.inner.facts {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }
    /// `58/58 structural vectors passed`.
    fn summary(&self) -> String {
        self.inner.summary()
    }
}

/// The results of the selected bundles.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct ConformanceReport {
    reports: Vec<Py<BundleReport>>,
    json: String,
    ok: bool,
    #[pyo3(get)]
    source: String,
}

#[pymethods]
impl ConformanceReport {
    #[getter]
    fn ok(&self) -> bool {
        self.ok
    }
    #[getter]
    fn reports(&self, py: Python<'_>) -> Vec<Py<BundleReport>> {
        self.reports.iter().map(|r| r.clone_ref(py)).collect()
    }
    /// The report as one line of RFC 8785 JSON (the CLI's `--json` output).
    fn to_json(&self) -> &str {
        &self.json
    }
}

/// Runs the named bundles (`structural`, `cryptography`, `admission`) from the embedded bundle
/// or the directory `root`, with the GIL released.
#[pyfunction]
#[pyo3(signature = (bundles, root = None))]
pub fn run_conformance(
    py: Python<'_>,
    bundles: &Bound<'_, PyAny>,
    root: Option<&Bound<'_, PyAny>>,
) -> PyResult<ConformanceReport> {
    let bundles = convert::str_list_arg(py, bundles, "bundles")?;
    let kinds = bundles
        .iter()
        .map(|name| {
            BundleKind::parse(name)
                .ok_or_else(|| errors::invalid_input(py, format!("unknown bundle {name:?}")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let source = Source::open(py, root)?;
    let (report, description) = py.detach(|| {
        (
            conformance::run(source.as_dyn(), &kinds),
            source.as_dyn().describe(),
        )
    });
    conformance_report(py, report, description)
}

/// Runs one structural manifest (a path relative to the bundle root) from the embedded bundle
/// or the directory `root`: the reference's `run_manifest(root, manifest_path)`.
#[pyfunction]
#[pyo3(signature = (manifest_path, root = None))]
pub fn run_structural_manifest(
    py: Python<'_>,
    manifest_path: &Bound<'_, PyAny>,
    root: Option<&Bound<'_, PyAny>>,
) -> PyResult<ConformanceReport> {
    let manifest_path = convert::str_arg(py, manifest_path, "manifest_path")?;
    let source = Source::open(py, root)?;
    let (report, description) = py.detach(|| {
        let report = conformance::run_structural_manifest(source.as_dyn(), &manifest_path);
        (
            conformance::ConformanceReport {
                reports: vec![report],
            },
            source.as_dyn().describe(),
        )
    });
    conformance_report(py, report, description)
}

fn conformance_report(
    py: Python<'_>,
    report: conformance::ConformanceReport,
    description: String,
) -> PyResult<ConformanceReport> {
    let json = missionweaveprotocol_cli::to_json_line(&report.to_value());
    let ok = report.ok();
    let reports = report
        .reports
        .into_iter()
        .map(|inner| Py::new(py, BundleReport { inner }))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(ConformanceReport {
        reports,
        json,
        ok,
        source: description,
    })
}

/// `*.json` files under `root`, recursively, sorted by path, each read through the confined
/// directory reader of the CLI (no symlink is walked, nothing outside `root` is read, a file over
/// 16 MiB is refused by its size).
fn schema_files(root: &std::path::Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let directory =
        DirectoryBundle::open(root).map_err(|message| format!("schema_root {message}"))?;
    let mut files = Vec::new();
    for relative in directory.files() {
        if !relative.ends_with(".json") {
            continue;
        }
        let bytes = directory
            .read(&relative)
            .map_err(|error| format!("schema_root {}: {error}", root.display()))?;
        files.push((
            root.join(&relative).to_string_lossy().into_owned(),
            bytes.into_owned(),
        ));
    }
    if files.is_empty() {
        return Err(format!(
            "schema_root {} holds no *.json schema",
            root.display()
        ));
    }
    Ok(files)
}

/// Where a catalog's schemas come from.
#[derive(Debug)]
enum Catalog {
    Embedded,
    Loaded(Box<CoreCatalog>, String),
}

impl Catalog {
    fn get(&self) -> &CoreCatalog {
        match self {
            Self::Embedded => CoreCatalog::embedded(),
            Self::Loaded(catalog, _) => catalog,
        }
    }
}

/// `SchemaCatalog(schema_root=None)`: the protocol's embedded schemas (compiled once per
/// process), or every `*.json` schema under `schema_root` compiled by the core's compiler. The
/// compiler supports exactly the keywords the protocol's schemas use; a directory it cannot
/// compile raises `BundleVerificationError` naming the file and the reason.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct SchemaCatalog {
    catalog: Catalog,
}

#[pymethods]
impl SchemaCatalog {
    #[new]
    #[pyo3(signature = (schema_root = None))]
    fn py_new(py: Python<'_>, schema_root: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let Some(root) = convert::present(schema_root) else {
            return Ok(Self {
                catalog: Catalog::Embedded,
            });
        };
        let path: std::path::PathBuf = root.extract().map_err(|_| {
            errors::invalid_input(
                py,
                format!(
                    "schema_root must be a path (str or os.PathLike), not {}",
                    convert::type_name(root)
                ),
            )
        })?;
        let compiled = py.detach(|| {
            let files = schema_files(&path)?;
            CoreCatalog::compile(
                files
                    .iter()
                    .map(|(name, bytes)| (name.as_str(), bytes.as_slice())),
            )
            .map_err(|e| format!("schema_root {}: {e}", path.display()))
        });
        let catalog = compiled.map_err(|message| errors::bundle_text(py, &message))?;
        Ok(Self {
            catalog: Catalog::Loaded(Box::new(catalog), path.to_string_lossy().into_owned()),
        })
    }

    /// The directory the schemas were loaded from, or `None` for the embedded schemas.
    #[getter]
    fn schema_root(&self) -> Option<&str> {
        match &self.catalog {
            Catalog::Embedded => None,
            Catalog::Loaded(_, root) => Some(root),
        }
    }

    /// Short schema names (`agent-card`, `command`, …), sorted.
    fn names(&self, py: Python<'_>) -> Vec<String> {
        py.detach(|| self.catalog.get().names().to_vec())
    }

    /// Validates a JSON-domain value against a schema (short name, file name or `$id`).
    fn validate(
        &self,
        py: Python<'_>,
        schema_name: &Bound<'_, PyAny>,
        instance: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let name = convert::str_arg(py, schema_name, "schema_name")?;
        let value = convert::to_value(instance).map_err(|e| match e {
            ToJsonError::Python(error) => error,
            ToJsonError::Unsupported(text) => errors::canonical_text(py, &text),
            ToJsonError::Parse(error) => errors::parse_error(py, &error),
        })?;
        py.detach(|| self.catalog.get().validate(&name, &value))
            .map_err(|issue| errors::schema_issue(py, &issue))
    }

    /// Strictly parses `raw` and validates it; returns the parsed value.
    fn validate_bytes<'py>(
        &self,
        py: Python<'py>,
        schema_name: &Bound<'py, PyAny>,
        raw: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let name = convert::str_arg(py, schema_name, "schema_name")?;
        let bytes = convert::bytes_arg(py, raw, "raw", true)?;
        let value = py
            .detach(|| {
                let value = missionweaveprotocol::json::parse(&bytes).map_err(Err)?;
                self.catalog.get().validate(&name, &value).map_err(Ok)?;
                Ok(value)
            })
            .map_err(|e: Result<_, _>| match e {
                Err(parse) => errors::parse_error(py, &parse),
                Ok(issue) => errors::schema_issue(py, &issue),
            })?;
        convert::to_python(py, &value)
    }
}
