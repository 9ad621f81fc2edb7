//! `missionweaveprotocol._native`: the PyO3 binding of the MissionWeaveProtocol core.
//! Conversions, error mapping (`errors`) and registration only; the Python API lives in
//! `python/src/missionweaveprotocol/`.

mod admission;
mod agent;
mod artifacts;
mod auth;
mod budget;
mod bundle;
mod cli;
mod client_session;
mod codec;
mod context;
mod control;
mod convert;
mod core;
mod delegation;
mod errors;
mod execution;
mod gateway;
mod instant;
mod keys;
mod lease;
mod limits;
mod local_store;
mod offline;
mod policy;
mod presence;
mod registry;
mod registry_builder;
mod replay;
mod resources;
mod scheduler;
mod server;
mod signer;
mod values;
mod wire;

use missionweaveprotocol::json::{self, canonical_bytes as core_canonical_bytes, sha256_prefixed};
use missionweaveprotocol::schema_formats::{self, Timestamp};
use missionweaveprotocol::{Stage, WireCode};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use convert::ToJsonError;

/// A JSON-domain Python value as a core value (non-JSON values: `CanonicalizationError`).
pub(crate) fn canonical_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<json::Value> {
    convert::to_value(value).map_err(|e| match e {
        ToJsonError::Python(error) => error,
        ToJsonError::Unsupported(text) => errors::canonical_text(py, &text),
        ToJsonError::Parse(error) => errors::canonical_text(py, &error.to_string()),
    })
}

fn canonical_of(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let value = canonical_value(py, value)?;
    core_canonical_bytes(&value).map_err(|e| errors::canonical_error(py, &e))
}

/// RFC 8785 canonical bytes of a JSON-domain Python value.
#[pyfunction]
fn canonical_bytes<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &canonical_of(py, value)?))
}

/// `sha256:` + hex SHA-256 of the canonical bytes.
#[pyfunction]
fn canonical_hash(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(sha256_prefixed(&canonical_of(py, value)?))
}

/// Strictly parses raw JSON bytes (lossless numbers) and returns their canonical bytes.
#[pyfunction]
#[pyo3(signature = (raw, *, limits = None))]
fn canonicalize_json<'py>(
    py: Python<'py>,
    raw: &Bound<'py, PyAny>,
    limits: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    // An input may come from outside: the `DOCUMENT` limits unless the caller chooses others.
    let limits = limits::limits_arg(py, limits, json::ParseLimits::DOCUMENT)?;
    let bytes = convert::bytes_arg(py, raw, "raw", true)?;
    let document =
        json::Document::parse(&bytes, &limits).map_err(|e| errors::parse_error(py, &e))?;
    let mut canonical = Vec::with_capacity(bytes.len());
    json::write_view(document.root(), &mut canonical)
        .map_err(|e| errors::canonical_error(py, &e))?;
    Ok(PyBytes::new(py, &canonical))
}

/// Strictly parses raw JSON bytes into plain Python values.
#[pyfunction]
#[pyo3(signature = (raw, *, limits = None))]
fn parse_json<'py>(
    py: Python<'py>,
    raw: &Bound<'py, PyAny>,
    limits: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    // An input may come from outside: the `DOCUMENT` limits unless the caller chooses others.
    let limits = limits::limits_arg(py, limits, json::ParseLimits::DOCUMENT)?;
    let bytes = convert::bytes_arg(py, raw, "raw", true)?;
    let document =
        json::Document::parse(&bytes, &limits).map_err(|e| errors::parse_error(py, &e))?;
    convert::view_to_python(py, document.root())
}

/// `sha256:` + hex SHA-256 of bytes.
#[pyfunction]
fn sha256_prefixed_hex(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(sha256_prefixed(&convert::bytes_arg(
        py, data, "data", false,
    )?))
}

/// Whether `text` is a protocol identifier (absolute URI under the protocol's profile).
#[pyfunction]
fn is_protocol_uri(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(schema_formats::is_protocol_uri(&convert::str_arg(
        py, text, "text",
    )?))
}

/// Canonical unpadded base64url decoding; `None` if `text` is not canonical.
#[pyfunction]
fn decode_base64url<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let text = convert::str_arg(py, text, "text")?;
    Ok(schema_formats::decode_base64url(&text).map(|bytes| PyBytes::new(py, &bytes)))
}

/// Unpadded base64url encoding.
#[pyfunction]
fn encode_base64url(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(schema_formats::encode_base64url(&convert::bytes_arg(
        py, data, "data", false,
    )?))
}

/// Parses an RFC 3339 timestamp under the protocol's profile.
#[pyfunction]
fn parse_timestamp(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<values::ProtectedTime> {
    let text = convert::str_arg(py, text, "text")?;
    Timestamp::parse(&text)
        .map(|t| values::ProtectedTime::from_core(&t))
        .map_err(|e| errors::timestamp_error(py, &e))
}

/// The wire code of a failure at a verification stage (§6.4).
#[pyfunction]
fn stage_wire_code(py: Python<'_>, stage: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    let stage = convert::str_arg(py, stage, "stage")?;
    Stage::parse(&stage)
        .map(|s| s.wire_code().as_str())
        .ok_or_else(|| errors::invalid_input(py, format!("{stage:?} is not a verification stage")))
}

/// Whether an unchanged retry can succeed for this wire code (§19).
#[pyfunction]
fn wire_code_retryable(py: Python<'_>, code: &Bound<'_, PyAny>) -> PyResult<bool> {
    let code = convert::str_arg(py, code, "code")?;
    WireCode::parse(&code)
        .map(WireCode::retryable)
        .ok_or_else(|| errors::invalid_input(py, format!("{code:?} is not a wire code")))
}

/// The payload members the engine defines for a Command kind, as `(name, required)` pairs in
/// the engine's table order (`input::payload_members`, §21 closed member sets); `None` for a
/// kind the engine does not implement. The compact → wire conversion names a missing
/// required member from this table instead of deciding again which members a kind needs.
#[pyfunction]
fn payload_members(
    py: Python<'_>,
    kind: &Bound<'_, PyAny>,
) -> PyResult<Option<Vec<(&'static str, bool)>>> {
    let kind = convert::str_arg(py, kind, "kind")?;
    Ok(missionweaveprotocol_engine::input::payload_members(&kind)
        .map(|shape| shape.members.iter().map(|m| (m.name, m.required)).collect()))
}

/// Every wire vocabulary of the core, by name: the spelling lists this package's enums are
/// tested against.
#[pyfunction]
fn vocabularies(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let out = pyo3::types::PyDict::new(py);
    for (name, values) in missionweaveprotocol_engine::vocabularies() {
        out.set_item(name, pyo3::types::PyTuple::new(py, values)?)?;
    }
    Ok(out)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SOURCE_COMMIT", missionweaveprotocol::bundle::SOURCE_COMMIT)?;
    m.add("PROTOCOL_VERSION", missionweaveprotocol::PROTOCOL_VERSION)?;
    m.add(
        "WIRE_CODES",
        WireCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
    )?;
    m.add(
        "SIGNED_DOCUMENT_KINDS",
        missionweaveprotocol::SignedDocumentKind::ALL
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>(),
    )?;
    // The Event kind of a revoked Execution Lease (§11.3), as the engine writes it.
    m.add(
        "EXECUTION_LEASE_REVOKED_EVENT",
        missionweaveprotocol_engine::work::transitions::session::LEASE_REVOKED_EVENT,
    )?;
    m.add(
        "WIRE_MESSAGE",
        missionweaveprotocol::signed_documents::WIRE_MESSAGE,
    )?;
    // canonical / schema_formats / errors
    m.add_function(wrap_pyfunction!(canonical_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_hash, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalize_json, m)?)?;
    m.add_function(wrap_pyfunction!(parse_json, m)?)?;
    m.add_function(wrap_pyfunction!(sha256_prefixed_hex, m)?)?;
    m.add_function(wrap_pyfunction!(is_protocol_uri, m)?)?;
    m.add_function(wrap_pyfunction!(decode_base64url, m)?)?;
    m.add_function(wrap_pyfunction!(encode_base64url, m)?)?;
    m.add_function(wrap_pyfunction!(parse_timestamp, m)?)?;
    m.add_function(wrap_pyfunction!(instant::render_instant, m)?)?;
    m.add_function(wrap_pyfunction!(stage_wire_code, m)?)?;
    m.add_function(wrap_pyfunction!(wire_code_retryable, m)?)?;
    m.add_function(wrap_pyfunction!(vocabularies, m)?)?;
    m.add_function(wrap_pyfunction!(payload_members, m)?)?;
    // evidence values
    m.add_class::<values::PrincipalEvidence>()?;
    m.add_class::<values::ProtectedInstant>()?;
    m.add_class::<values::ProtectedTime>()?;
    m.add_class::<values::SignatureMaterial>()?;
    m.add_class::<values::KeyValidityEvidence>()?;
    m.add_class::<values::ResolvedKeyEvidence>()?;
    // registry
    m.add_class::<registry::KeyRegistrySnapshot>()?;
    m.add_function(wrap_pyfunction!(registry::set_registry_cache_budget, m)?)?;
    m.add_function(wrap_pyfunction!(registry::registry_cache_stats, m)?)?;
    m.add_class::<registry::AgentRegistryKeyResolver>()?;
    m.add_class::<registry::ExpectedSignerEvidence>()?;
    m.add_class::<registry::KeyResolutionRequest>()?;
    m.add_class::<registry_builder::RegistryBuilder>()?;
    m.add_class::<registry_builder::ValidityRecord>()?;
    // signed documents / crypto
    m.add_class::<codec::SignedDocumentCodec>()?;
    m.add_function(wrap_pyfunction!(codec::expected_signer, m)?)?;
    m.add_class::<limits::ParseLimits>()?;
    m.add_class::<codec::VerifiedSignedDocument>()?;
    m.add_class::<codec::SignedDocument>()?;
    m.add_class::<keys::SigningKey>()?;
    m.add_function(wrap_pyfunction!(keys::key_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(keys::verify_detached, m)?)?;
    // admission
    m.add_class::<admission::AuthenticatedRecord>()?;
    m.add_class::<admission::LookupOutcome>()?;
    m.add_class::<admission::AppendOutcome>()?;
    m.add_class::<admission::TrustedAcceptanceContext>()?;
    m.add_class::<admission::FirstAdmissionRecord>()?;
    m.add_class::<admission::AdmittedDocument>()?;
    m.add_class::<admission::InMemoryAdmissionLog>()?;
    m.add_function(wrap_pyfunction!(admission::admit_first, m)?)?;
    m.add_function(wrap_pyfunction!(admission::replay_historical, m)?)?;
    m.add_function(wrap_pyfunction!(admission::validate_record, m)?)?;
    // bundle / conformance
    m.add_class::<bundle::CryptographyBundleSummary>()?;
    m.add_class::<bundle::AdmissionBundleSummary>()?;
    m.add_class::<bundle::BundleReport>()?;
    m.add_class::<bundle::ConformanceReport>()?;
    m.add_class::<bundle::SchemaCatalog>()?;
    m.add_function(wrap_pyfunction!(bundle::verify_cryptography_bundle, m)?)?;
    m.add_function(wrap_pyfunction!(bundle::verify_admission_bundle, m)?)?;
    m.add_function(wrap_pyfunction!(bundle::embedded_file, m)?)?;
    m.add_function(wrap_pyfunction!(bundle::embedded_paths, m)?)?;
    m.add_function(wrap_pyfunction!(bundle::run_conformance, m)?)?;
    m.add_function(wrap_pyfunction!(bundle::run_structural_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(cli::run_cli, m)?)?;
    // the server console script and `missionweaveprotocol.cli`
    m.add_function(wrap_pyfunction!(server::run_server, m)?)?;
    m.add_function(wrap_pyfunction!(server::load_agent_cards, m)?)?;
    m.add_function(wrap_pyfunction!(server::register_agent_cards, m)?)?;
    m.add_function(wrap_pyfunction!(server::authority_principal, m)?)?;
    // wire
    m.add_class::<wire::Frame>()?;
    m.add_class::<wire::ReceivedCommandFrame>()?;
    m.add_function(wrap_pyfunction!(wire::parse_frame, m)?)?;
    m.add_function(wrap_pyfunction!(wire::parse_received_frame, m)?)?;
    m.add_function(wrap_pyfunction!(wire::encode_frame, m)?)?;
    m.add_function(wrap_pyfunction!(wire::error_frame, m)?)?;
    // bounded authority: resources, lease, budget, delegation, execution
    m.add_class::<resources::ResourceUsage>()?;
    m.add_class::<resources::DelegationBudget>()?;
    m.add_class::<resources::CapabilityRef>()?;
    m.add_function(wrap_pyfunction!(resources::budget_from_wire, m)?)?;
    m.add_function(wrap_pyfunction!(resources::budget_to_wire, m)?)?;
    m.add_function(wrap_pyfunction!(
        resources::capability_reference_version,
        m
    )?)?;
    m.add_class::<lease::ExecutionLease>()?;
    m.add_function(wrap_pyfunction!(lease::lease_closure_reason, m)?)?;
    m.add_class::<budget::BudgetLedger>()?;
    m.add_class::<budget::BudgetLedgerSnapshot>()?;
    m.add_class::<delegation::DelegationGrant>()?;
    m.add_class::<delegation::MembershipView>()?;
    m.add_class::<delegation::DelegationContext>()?;
    m.add_class::<delegation::WorkItemTree>()?;
    m.add_class::<delegation::DelegatedWork>()?;
    m.add_class::<delegation::DelegationAuthority>()?;
    delegation::register(m)?;
    m.add_class::<execution::RetryPolicy>()?;
    m.add_class::<execution::Attempt>()?;
    m.add_class::<execution::RetrySchedule>()?;
    m.add_class::<execution::RetryController>()?;
    m.add_function(wrap_pyfunction!(execution::idempotency_key, m)?)?;
    m.add_function(wrap_pyfunction!(execution::derived_attempt_key, m)?)?;
    m.add_function(wrap_pyfunction!(execution::parse_duration_ms, m)?)?;
    m.add_class::<policy::MembershipTokenCore>()?;
    m.add_class::<policy::AuthorizationCore>()?;
    m.add_class::<policy::BudgetMeterCore>()?;
    m.add_class::<policy::PolicyGuardCore>()?;
    m.add_function(wrap_pyfunction!(policy::policy_high_risk_prefixes, m)?)?;
    policy::register(m)?;
    // Agent runtime and bounded offline execution (agent.py, offline.py)
    m.add_class::<agent::NativeAgentSessions>()?;
    offline::register(m)?;
    presence::register(m)?;
    context::register(m)?;
    // The human control interface (control.py)
    control::register(m)?;
    // scheduler
    m.add_class::<scheduler::GroupSchedulingPolicy>()?;
    m.add_class::<scheduler::SchedulerPolicy>()?;
    m.add_class::<scheduler::WorkOffer>()?;
    m.add_class::<scheduler::CheckpointRef>()?;
    m.add_class::<scheduler::AdmissionDecision>()?;
    m.add_class::<scheduler::Dispatch>()?;
    m.add_class::<scheduler::Preempt>()?;
    m.add_class::<scheduler::WorkTransition>()?;
    m.add_class::<scheduler::ScheduleDisclosure>()?;
    m.add_class::<scheduler::SchedulerSnapshot>()?;
    m.add_class::<scheduler::Scheduler>()?;
    scheduler::register_reference(m)?;
    m.add_class::<local_store::AgentStore>()?;
    m.add_class::<replay::GroupReplay>()?;
    // the authoritative core (missionweaveprotocol.core / store)
    m.add_class::<core::NativeStore>()?;
    m.add_class::<core::NativeSqlStore>()?;
    m.add_class::<core::NativeCore>()?;
    m.add_function(wrap_pyfunction!(core::error_family, m)?)?;
    m.add_function(wrap_pyfunction!(core::wire_code_families, m)?)?;
    // Agent authentication (missionweaveprotocol.auth)
    m.add_class::<auth::NativeAgentKeyRegistry>()?;
    m.add_class::<auth::NativeSessionAuthority>()?;
    m.add_function(wrap_pyfunction!(auth::auth_default_agent_key_id, m)?)?;
    m.add_function(wrap_pyfunction!(auth::auth_challenge_signing_bytes, m)?)?;
    m.add(
        "AUTH_CHALLENGE_TTL_MS",
        auth::session_defaults().challenge_ttl_ms,
    )?;
    m.add(
        "AUTH_SESSION_TTL_MS",
        auth::session_defaults().session_ttl_ms,
    )?;
    // the sans-IO network machines (missionweaveprotocol.gateway / client)
    m.add_class::<gateway::NativeGateway>()?;
    m.add_class::<gateway::NativeConnection>()?;
    m.add_class::<client_session::NativeClientSession>()?;
    // content-addressed Artifact bytes (missionweaveprotocol.artifacts)
    m.add_class::<artifacts::NativeArtifactStore>()?;
    m.add_function(wrap_pyfunction!(artifacts::artifact_content_hash, m)?)?;
    m.add_function(wrap_pyfunction!(artifacts::artifact_check_content, m)?)?;
    m.add_function(wrap_pyfunction!(artifacts::verify_artifact_manifest, m)?)?;
    Ok(())
}
