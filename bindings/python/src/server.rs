//! The `missionweaveprotocol-server` console script and the pieces of
//! `missionweaveprotocol.cli` that are the server's: the Rust server
//! (`missionweaveprotocol_server::run::run_with_args`) runs in-process with the GIL released,
//! writing its messages to Python text streams, so the script and the binary share flags,
//! environment variables, messages and exit codes; the Agent Card file checks and the card
//! bootstrap are the server's `cards` module.

use std::path::PathBuf;
use std::sync::Arc;

use missionweaveprotocol::json;
use missionweaveprotocol_host::{SystemClock, random_token_id};
use missionweaveprotocol_server::{app, cards, cli, run};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::cli::{PyStream, os_args};
use crate::core::{NativeCore, registry_arg};
use crate::errors;

/// Runs `missionweaveprotocol-server` with `args` (without the program name), writing the
/// "listening on" line (and usage or start-up errors) to the text streams `stdout` and
/// `stderr`; log lines go to the process's standard error. Returns the exit code: 0 after a
/// graceful shutdown, 1 when start-up fails, 2 for a flag problem.
///
/// The server stops gracefully when a Python signal handler raises (the default SIGINT handler
/// raises `KeyboardInterrupt`; the console script installs one for SIGTERM): the signals are
/// checked every 100 ms from the thread that called this, which must then be Python's main
/// thread (only there do Python signal handlers run). The exception is consumed.
#[pyfunction]
pub fn run_server(
    py: Python<'_>,
    args: &Bound<'_, PyAny>,
    stdout: Py<PyAny>,
    stderr: Py<PyAny>,
) -> PyResult<i32> {
    let args = os_args(py, args)?;
    let (mut out, mut err) = (PyStream::new(stdout), PyStream::new(stderr));
    Ok(py.detach(|| {
        run::run_with_args(args, &mut out, &mut err, || {
            // Polled by the runtime's `block_on` on this (the calling) thread.
            run::poll_stop(|| Python::attach(|py| py.check_signals().is_err()))
        })
    }))
}

fn organization_key(text: Option<&str>) -> PyResult<Option<[u8; 32]>> {
    text.map(|text| {
        cli::key_bytes(text).ok_or_else(|| {
            PyValueError::new_err(
                "organization_public_key is not base64url of a 32-byte Ed25519 public key",
            )
        })
    })
    .transpose()
}

/// The Agent Card file at `path` checked as the server checks `--registry` (a list of signed
/// cards or `{"agentCards": [...]}`, each verified against `registry`, and signed by
/// `organization_public_key` when given): each card's canonical bytes. `ValueError` with the
/// server's message otherwise.
#[pyfunction]
#[pyo3(signature = (path, registry, organization_public_key=None))]
pub fn load_agent_cards<'py>(
    py: Python<'py>,
    path: PathBuf,
    registry: &Bound<'py, PyAny>,
    organization_public_key: Option<&str>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let registry = registry_arg(py, registry)?;
    let trusted = organization_key(organization_public_key)?;
    let loaded = py
        .detach(|| cards::load(&path, &registry, trusted.as_ref()))
        .map_err(|e| PyValueError::new_err(e.0))?;
    canonical_cards(py, &loaded)
}

fn canonical_cards<'py>(
    py: Python<'py>,
    loaded: &[cards::AgentCard],
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    loaded
        .iter()
        .map(|card| {
            json::canonical_bytes(&card.document)
                .map(|bytes| PyBytes::new(py, &bytes))
                .map_err(|e| errors::canonical_text(py, &e.to_string()))
        })
        .collect()
}

/// Registers `agent_cards` (signed card documents, checked as [`load_agent_cards`] checks a
/// file's) in `core` through the Organization Command `…registry.agent_card_register` signed
/// by its Group Authority, as the server does at start: `(registered, unchanged)`.
/// `ValueError` for a card that fails the checks, `RuntimeError` for one the Core refuses (a
/// version not newer than the registered card's).
#[pyfunction]
#[pyo3(signature = (core, agent_cards, registry, organization_public_key=None))]
pub fn register_agent_cards(
    py: Python<'_>,
    core: &Bound<'_, NativeCore>,
    agent_cards: &Bound<'_, PyAny>,
    registry: &Bound<'_, PyAny>,
    organization_public_key: Option<&str>,
) -> PyResult<(usize, usize)> {
    let registry = registry_arg(py, registry)?;
    let trusted = organization_key(organization_public_key)?;
    let root = crate::canonical_value(py, agent_cards)?;
    let checked =
        cards::check(&root, &registry, trusted.as_ref()).map_err(|e| PyValueError::new_err(e.0))?;
    let core = Arc::clone(&core.get().inner);
    py.detach(|| {
        let (mut new, mut unchanged) = (0, 0);
        for card in &checked {
            let action = random_token_id().ok_or_else(|| {
                PyRuntimeError::new_err("the operating system's random source failed")
            })?;
            match cards::register(&core, card, &action, SystemClock.now())
                .map_err(|e| PyRuntimeError::new_err(e.0))?
            {
                cards::Registered::New => new += 1,
                cards::Registered::Unchanged => unchanged += 1,
            }
        }
        Ok((new, unchanged))
    })
}

/// The Principal (`(type, id)`) the Registry binds the Event-signing key `key_id` to, as the
/// server finds its Group Authority; `ValueError` with the server's message when none.
#[pyfunction]
pub fn authority_principal(
    py: Python<'_>,
    registry: &Bound<'_, PyAny>,
    key_id: &str,
) -> PyResult<(String, String)> {
    let registry = registry_arg(py, registry)?;
    app::authority_principal(&registry, key_id)
        .map(|p| (p.kind.as_str().to_owned(), p.id.as_str().to_owned()))
        .map_err(|e| PyValueError::new_err(e.message))
}
