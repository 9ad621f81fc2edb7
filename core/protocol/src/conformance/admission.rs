//! The admission bundle (`admission/manifest.json`): the whole cryptography bundle first, the
//! pinned digest, the admission artifacts and record fixtures, then 30 evaluations driving the
//! admission flows through a fixture Admission Log that replays the declared adapter outcomes
//! and counts calls (§22).

use std::cell::Cell;
use std::collections::BTreeSet;

use super::cryptography::{self, MANIFEST as CRYPTO_MANIFEST};
use super::integrity::{check_artifact_digest, check_artifacts, evaluation_inputs, read_json};
use super::report::{BundleKind, BundleReport};
use super::source::BundleSource;
use crate::admission::{
    AdmissionLog, AppendOutcome, AuthenticatedRecord, FirstAdmissionRecord, LookupOutcome,
    TrustedAcceptanceContext, admit_first, replay_historical,
};
use crate::json::{Value, parse_state};
use crate::principal::{Principal, PrincipalType};
use crate::registry::AgentRegistryKeyResolver;
use crate::schema_formats::Timestamp;
use crate::signed_documents::SignedDocumentCodec;

pub(crate) const MANIFEST: &str = "admission/manifest.json";
const MANIFEST_SCHEMA_ID: &str =
    "https://missionweaveprotocol.dev/admission/0.1/manifest.schema.json";
pub(crate) const PROFILE_ID: &str = "missionweaveprotocol.first-admission-historical-trust.v0.1";
/// The cryptography bundle digest this admission bundle is pinned to.
const PINNED_CRYPTOGRAPHY_DIGEST: &str =
    "sha256:5eade516e4bc5dcf04477727ebcccd11f33348b2d9135fb6fe0365c6e6cc2ea3";
const ARTIFACT_COUNT: usize = 19;
const REQUIRED_EVALUATIONS: [&str; 5] = [
    "first-admission.command",
    "trusted-time-equal-valid-until",
    "key-id-mismatch",
    "historical-replay.later-revocation",
    "admission-log-indeterminate",
];
/// Each invalid record fixture and the one field in which it differs from `valid/command.json`.
const INVALID_RECORDS: [(&str, &str); 6] = [
    ("accepted-by-non-service", "acceptedBy"),
    ("document-kind-mismatch", "documentKind"),
    ("key-id-mismatch", "keyId"),
    ("organization-mismatch", "organizationId"),
    ("principal-mismatch", "principal"),
    ("signing-hash-mismatch", "signingHash"),
];

fn str_at<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// A fixture Admission Log: returns the evaluation's declared outcomes and counts calls.
struct FixtureLog<'a> {
    source: &'a dyn BundleSource,
    lookup: &'a Value,
    append: &'a Value,
    lookups: Cell<u32>,
    appends: Cell<u32>,
    harness_error: Cell<Option<&'static str>>,
}

impl FixtureLog<'_> {
    fn record(&self, outcome: &Value) -> Option<AuthenticatedRecord> {
        let bytes = str_at(outcome, "/record").and_then(|path| self.source.read(path).ok())?;
        let service = outcome
            .get("authenticatedService")
            .and_then(Principal::from_value)?;
        Some(AuthenticatedRecord {
            bytes: bytes.into_owned(),
            authenticated_service: service,
        })
    }
}

impl AdmissionLog for FixtureLog<'_> {
    fn lookup(&self, _: &str, _: &str) -> LookupOutcome {
        self.lookups.set(self.lookups.get() + 1);
        let status = str_at(self.lookup, "/status").unwrap_or_default();
        let record = (status == "found")
            .then(|| self.record(self.lookup))
            .flatten();
        LookupOutcome::from_status(status, record).unwrap_or_else(|| {
            self.harness_error.set(Some(
                "lookup outcome without a known status or a readable record",
            ));
            LookupOutcome::Indeterminate
        })
    }

    fn append(&self, _: &FirstAdmissionRecord, candidate_bytes: &[u8]) -> AppendOutcome {
        self.appends.set(self.appends.get() + 1);
        if matches!(self.append, Value::Null) {
            self.harness_error
                .set(Some("append called although the evaluation declares none"));
            return AppendOutcome::Indeterminate;
        }
        let status = str_at(self.append, "/status").unwrap_or_default();
        let record = matches!(status, "committed" | "existing")
            .then(|| self.record(self.append))
            .flatten();
        if status == "committed" && record.as_ref().is_some_and(|r| r.bytes != candidate_bytes) {
            self.harness_error
                .set(Some("committed record bytes differ from the candidate"));
        }
        AppendOutcome::from_status(status, record).unwrap_or_else(|| {
            self.harness_error.set(Some(
                "append outcome without a known status or a readable record",
            ));
            AppendOutcome::Indeterminate
        })
    }
}

pub(crate) fn preflight(
    source: &dyn BundleSource,
    manifest: &Value,
    problems: &mut Vec<String>,
) -> Vec<String> {
    // 1–2. The whole cryptography bundle, and the pinned digest.
    let crypto = cryptography::preflight(source);
    problems.extend(
        crypto
            .problems
            .iter()
            .map(|p| format!("cryptography bundle: {p}")),
    );
    if str_at(manifest, "/cryptography/artifactDigest") != Some(PINNED_CRYPTOGRAPHY_DIGEST)
        || crypto.artifact_digest != PINNED_CRYPTOGRAPHY_DIGEST
    {
        problems.push("the cryptography bundle is not the pinned one".into());
    }
    if str_at(manifest, "/cryptography/manifest") != Some(CRYPTO_MANIFEST) {
        problems.push("cryptography.manifest is not cryptography/manifest.json".into());
    }
    // 3. Artifacts and digest.
    let listed = check_artifacts(source, manifest, &["admission/", "schemas/"], problems);
    if listed.len() != ARTIFACT_COUNT {
        problems.push(format!(
            "expected {ARTIFACT_COUNT} admission artifacts, found {}",
            listed.len()
        ));
    }
    check_artifact_digest(manifest, problems);
    // 4. The manifest's own schema, and the constants.
    let catalog = super::integrity::catalog(
        source,
        &[
            "admission/manifest.schema.json",
            "cryptography/registry-fixture.schema.json",
        ],
        problems,
    );
    match &catalog {
        Some(catalog) if catalog.contains(MANIFEST_SCHEMA_ID) => {
            if let Err(issue) = catalog.validate(MANIFEST_SCHEMA_ID, manifest) {
                problems.push(format!(
                    "admission manifest does not match its schema: {issue}"
                ));
            }
        }
        _ => problems.push("the admission manifest schema is missing or does not compile".into()),
    }
    if str_at(manifest, "/profileId") != Some(PROFILE_ID)
        || str_at(manifest, "/semanticStage") != Some("admission")
        || str_at(manifest, "/wireCode") != Some("AUTH_INVALID_SIGNATURE")
    {
        problems.push("admission manifest constants are not the pinned ones".into());
    }
    // 5. Record fixtures.
    let record_schema = "first-admission-record.schema.json";
    let base = read_json(source, "admission/records/valid/command.json").unwrap_or(Value::Null);
    let valid: Vec<String> = listed
        .iter()
        .filter(|p| p.starts_with("admission/records/valid/"))
        .cloned()
        .collect();
    let invalid: Vec<String> = listed
        .iter()
        .filter(|p| p.starts_with("admission/records/invalid/"))
        .cloned()
        .collect();
    if valid.len() != 9 || invalid.len() != INVALID_RECORDS.len() {
        problems.push("record fixtures are not 9 valid and 6 invalid".into());
    }
    if let Some(catalog) = &catalog {
        for path in &valid {
            let kind = path
                .trim_start_matches("admission/records/valid/")
                .trim_end_matches(".json");
            match read_json(source, path) {
                Ok(record) => {
                    let trusted_ok = str_at(&record, "/trustedAcceptedAt")
                        .is_some_and(|t| Timestamp::parse(t).is_ok());
                    if !catalog.is_valid(record_schema, &record)
                        || str_at(&record, "/documentKind") != Some(kind)
                        || !trusted_ok
                    {
                        problems.push(format!("{path} is not a valid {kind} record"));
                    }
                }
                Err(error) => problems.push(error),
            }
        }
        for (name, field) in INVALID_RECORDS {
            let path = format!("admission/records/invalid/{name}.json");
            let Ok(record) = read_json(source, &path) else {
                problems.push(format!("{path} is missing"));
                continue;
            };
            let differing: Vec<&str> = [
                "protocolVersion",
                "admissionRecordId",
                "organizationId",
                "documentKind",
                "signingHash",
                "keyId",
                "principal",
                "trustedAcceptedAt",
                "acceptedBy",
            ]
            .into_iter()
            .filter(|f| !matches!((record.get(f), base.get(f)), (Some(a), Some(b)) if a.json_eq(b)))
            .collect();
            if differing != [field] {
                problems.push(format!(
                    "{path} differs from valid/command.json in {differing:?}, not only {field}"
                ));
            }
            let schema_valid = catalog.is_valid(record_schema, &record);
            if schema_valid == (name == "accepted-by-non-service") {
                problems.push(format!("{path} has the wrong schema validity"));
            }
        }
    }
    listed
}

fn evaluate(
    source: &dyn BundleSource,
    codec: &SignedDocumentCodec<'_>,
    evaluation: &Value,
) -> (String, Result<(), String>) {
    let (kind, document, registry) = match evaluation_inputs(source, evaluation) {
        Ok(inputs) => inputs,
        Err(message) => return ("error".into(), Err(message)),
    };
    let verified = match codec.verify(kind, &document, &AgentRegistryKeyResolver::new(&registry)) {
        Ok(verified) => verified,
        Err(error) => {
            return (
                "error".into(),
                Err(format!(
                    "bundle error: the document does not verify ({})",
                    error.protected()
                )),
            );
        }
    };
    let null = Value::Null;
    let log = FixtureLog {
        source,
        lookup: evaluation.get("lookup").unwrap_or(&null),
        append: evaluation.get("append").unwrap_or(&null),
        lookups: Cell::new(0),
        appends: Cell::new(0),
        harness_error: Cell::new(None),
    };
    let contexts = Cell::new(0u32);
    let context_value = evaluation
        .get("trustedContext")
        .filter(|v| !matches!(v, Value::Null));
    let mut context = || {
        contexts.set(contexts.get() + 1);
        let text = |pointer| {
            context_value
                .and_then(|v| str_at(v, pointer))
                .unwrap_or_default()
                .to_owned()
        };
        TrustedAcceptanceContext {
            admission_record_id: text("/admissionRecordId"),
            trusted_accepted_at: text("/trustedAcceptedAt"),
            accepted_by: context_value
                .and_then(|v| v.get("acceptedBy"))
                .and_then(Principal::from_value)
                .unwrap_or_else(|| Principal::new(PrincipalType::Service, "")),
        }
    };
    let mode = str_at(evaluation, "/mode").unwrap_or_default();
    let outcome = match mode {
        "first-admission" => admit_first(&verified, &log, &mut context),
        "historical-replay" => replay_historical(&verified, &log),
        other => return ("error".into(), Err(format!("unknown mode {other}"))),
    };
    let lookup_absent = str_at(evaluation, "/lookup/status") == Some("authoritative-absence");
    let expected_calls = if mode == "first-admission" && lookup_absent {
        (1, 1, u32::from(!matches!(log.append, Value::Null)))
    } else {
        (1, 0, 0)
    };
    let calls = (log.lookups.get(), contexts.get(), log.appends.get());
    let actual = match &outcome {
        Ok(_) => "complete".to_owned(),
        Err(error) => format!("admission/{}", error.reason.as_str()),
    };
    let result = (|| {
        if let Some(problem) = log.harness_error.get() {
            return Err(format!("harness: {problem}"));
        }
        if context_value.is_none() && contexts.get() > 0 {
            return Err("trusted context requested although the evaluation declares none".into());
        }
        if calls != expected_calls {
            return Err(format!(
                "adapter calls (lookup, context, append) were {calls:?}, expected {expected_calls:?}"
            ));
        }
        match (str_at(evaluation, "/expect/stage"), &outcome) {
            (Some("complete"), Ok(admitted)) => {
                let expected = str_at(evaluation, "/expect/record")
                    .and_then(|p| source.read(p).ok())
                    .and_then(|b| parse_state(&b).ok());
                let returned = parse_state(&admitted.record_bytes).ok();
                match (expected, returned) {
                    (Some(expected), Some(returned)) if expected.json_eq(&returned) => Ok(()),
                    _ => Err("the admitted record differs from expect.record".into()),
                }
            }
            (Some("admission"), Err(error)) => {
                if str_at(evaluation, "/expect/reason") != Some(error.reason.as_str()) {
                    Err(format!(
                        "expected reason {:?}, got {}",
                        str_at(evaluation, "/expect/reason"),
                        error.protected()
                    ))
                } else if str_at(evaluation, "/expect/wireCode") != Some(error.wire_code().as_str())
                {
                    Err("wire code differs".into())
                } else {
                    Ok(())
                }
            }
            (expected, _) => Err(format!("expected {expected:?}, got {actual}")),
        }
    })();
    (actual, result)
}

/// Runs the admission bundle.
pub fn run_admission_bundle(source: &dyn BundleSource) -> BundleReport {
    let mut report = BundleReport::new(BundleKind::Admission);
    let manifest = match read_json(source, MANIFEST) {
        Ok(manifest) => manifest,
        Err(error) => {
            report.integrity(error);
            return report;
        }
    };
    let mut problems = Vec::new();
    let listed: BTreeSet<String> = preflight(source, &manifest, &mut problems)
        .into_iter()
        .collect();
    let crypto_listed: BTreeSet<String> = source
        .read(CRYPTO_MANIFEST)
        .ok()
        .and_then(|bytes| parse_state(&bytes).ok())
        .and_then(|m| {
            m.get("artifacts").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|x| str_at(x, "/path").map(str::to_owned))
                    .collect()
            })
        })
        .unwrap_or_default();
    let catalog = super::integrity::catalog(source, &[], &mut problems);
    report.facts.push((
        "artifactDigest".into(),
        str_at(&manifest, "/artifactDigest")
            .unwrap_or_default()
            .to_owned(),
    ));
    report.facts.push(("profileId".into(), PROFILE_ID.into()));
    let Some(catalog) = catalog else {
        for problem in problems {
            report.integrity(problem);
        }
        return report;
    };
    let codec = SignedDocumentCodec::with_catalog(&catalog);
    let empty = Vec::new();
    let mut seen = BTreeSet::new();
    for case in manifest
        .get("cases")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
    {
        for evaluation in case
            .get("evaluations")
            .and_then(Value::as_array)
            .unwrap_or(&empty)
        {
            let id = str_at(evaluation, "/id").unwrap_or_default().to_owned();
            if !seen.insert(id.clone()) {
                problems.push(format!("evaluation {id} is not unique"));
            }
            // 6. Every referenced path is a declared artifact.
            for pointer in [
                "/document",
                "/registry",
                "/lookup/record",
                "/append/record",
                "/expect/record",
            ] {
                if let Some(path) = str_at(evaluation, pointer)
                    && !listed.contains(path)
                    && !crypto_listed.contains(path)
                    && path != CRYPTO_MANIFEST
                {
                    problems.push(format!("{id} references undeclared {path}"));
                }
            }
            let (actual, result) = evaluate(source, &codec, evaluation);
            report.record(&id, &actual, result);
        }
    }
    for required in REQUIRED_EVALUATIONS {
        if !seen.contains(required) {
            problems.push(format!("required evaluation {required} is missing"));
        }
    }
    for problem in problems {
        report.integrity(problem);
    }
    report
}
