//! `evaluations.jsonl`: all 150 evaluations of the three pinned bundles (58 structural, 62
//! cryptography, 30 admission, §22) run natively through the Rust core. One record per
//! evaluation; inputs are named by their bundle path, never copied.
//!
//! Errors record the §19 wire code, the semantic stage and the reason slug the core has today
//! (`VerificationError::reason`, `AdmissionReason::as_str`, the failing schema keyword).

use std::cell::RefCell;

use missionweaveprotocol::admission::{
    AdmissionLog, AppendOutcome, AuthenticatedRecord, FirstAdmissionRecord, LookupOutcome,
    TrustedAcceptanceContext, admit_first, replay_historical,
};
use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Value, canonical_bytes, canonical_hash, parse_state};
use missionweaveprotocol::principal::Principal;
use missionweaveprotocol::registry::AgentRegistryKeyResolver;
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use missionweaveprotocol::signed_documents::{
    SignedDocumentCodec, SignedDocumentKind, VerificationError,
};

use super::Rec;

pub(super) fn file(path: &str) -> Vec<u8> {
    embedded_file(path).map(<[u8]>::to_vec).unwrap_or_default()
}

fn json(path: &str) -> Value {
    parse_state(&file(path)).unwrap_or(Value::Null)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn str_at<'v>(value: &'v Value, pointer: &str) -> &'v str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn items(value: &Value, name: &str) -> Vec<Value> {
    value
        .get(name)
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default()
}

/// Every evaluation, in bundle order: structural, cryptography, admission.
pub(super) fn records() -> Vec<Value> {
    let mut out = structural();
    out.extend(cryptography());
    out.extend(admission());
    out
}

fn structural() -> Vec<Value> {
    let catalog = SchemaCatalog::embedded();
    let mut out = Vec::new();
    for entry in json("conformance/manifest.json")
        .as_array()
        .unwrap_or_default()
    {
        let schema_path = str_at(entry, "/schema");
        let instance = str_at(entry, "/instance");
        let record = Rec::new()
            .str("area", "structural")
            .str("id", str_at(entry, "/name"))
            .value(
                "inputs",
                Rec::new()
                    .str("schema", schema_path)
                    .str("instance", instance)
                    .build(),
            );
        let schema = schema_path.trim_start_matches("schemas/");
        let record = match parse_state(&file(instance)) {
            Err(_) => record
                .str("verdict", "invalid")
                .str("stage", "parse")
                .str("code", "PROTOCOL_VIOLATION")
                .value("reason", Value::Null),
            Ok(value) => match catalog.validate(schema, &value) {
                Ok(()) => record
                    .str("verdict", "valid")
                    .value("stage", Value::Null)
                    .value("code", Value::Null)
                    .value("reason", Value::Null),
                Err(issue) => record
                    .str("verdict", "invalid")
                    .str("stage", "schema")
                    .str("code", "SCHEMA_VALIDATION_FAILED")
                    // The failing keyword is the schema stage's reason slug.
                    .str("reason", issue.keyword)
                    .str("instancePath", issue.instance_path),
            },
        };
        out.push(record.build());
    }
    out
}

fn rejected(record: Rec, error: &VerificationError) -> Rec {
    record
        .str("verdict", "rejected")
        .str("stage", error.stage.as_str())
        .str("code", error.wire_code().as_str())
        .str("reason", error.reason)
}

fn cryptography() -> Vec<Value> {
    let codec = SignedDocumentCodec::new();
    let mut out = Vec::new();
    for case in items(&json("cryptography/manifest.json"), "cases") {
        let case_id = str_at(&case, "/id");
        for (index, evaluation) in items(&case, "evaluations").iter().enumerate() {
            let record = Rec::new()
                .str("area", "cryptography")
                .str("id", format!("{case_id}#{index}"));
            if str_at(&case, "/kind") == "canonicalization" {
                let input = str_at(evaluation, "/input");
                let value = parse_state(&file(input)).unwrap_or(Value::Null);
                let record = record
                    .str("kind", "canonicalization")
                    .value("inputs", Rec::new().str("input", input).build())
                    .str("verdict", "complete")
                    .str(
                        "canonical",
                        text(&canonical_bytes(&value).unwrap_or_default()),
                    )
                    .str("hash", canonical_hash(&value).unwrap_or_default());
                out.push(record.build());
                continue;
            }
            let profile = str_at(evaluation, "/profileId");
            let Some(kind) = SignedDocumentKind::parse(profile) else {
                continue;
            };
            let inputs = Rec::new()
                .str("document", str_at(evaluation, "/document"))
                .str("registry", str_at(evaluation, "/registry"))
                .opt_str(
                    "signingKey",
                    evaluation
                        .get("signingKey")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                );
            let record = record
                .str("kind", "signed-document")
                .str("profileId", profile)
                .value("inputs", inputs.build());
            let document = file(str_at(evaluation, "/document"));
            let resolver = AgentRegistryKeyResolver::new(&file(str_at(evaluation, "/registry")));
            let record = match codec.verify(kind, &document, &resolver) {
                Ok(verified) => {
                    let mut record = record
                        .str("verdict", "complete")
                        .str("stage", "complete")
                        .value("code", Value::Null)
                        .value("reason", Value::Null)
                        .str("signingBytes", encode_base64url(&verified.signing_bytes))
                        .str("signingHash", verified.signing_hash.clone())
                        .str("signedDocumentHash", verified.signed_document_hash())
                        .str("keyId", verified.key_id.clone())
                        .value("principal", verified.principal.to_value())
                        .str("protectedTime", verified.protected_time.as_str())
                        .str("signature", verified.signature.clone());
                    // Re-signing the signing bytes with the fixture key reproduces the signature.
                    let key = json(str_at(evaluation, "/signingKey"));
                    let seed = decode_base64url(str_at(&key, "/seed")).unwrap_or_default();
                    if let Ok(seed) = <[u8; 32]>::try_from(seed.as_slice()) {
                        let key = SigningKey::from_seed(str_at(&key, "/keyId"), &seed);
                        let unsigned = parse_state(&verified.signing_bytes).unwrap_or(Value::Null);
                        if let Ok(signed) = codec.sign(kind, &unsigned, &key) {
                            record = record
                                .str("resignedSignature", signed.signature)
                                .str("resignedDocumentHash", signed.document_hash);
                        }
                    }
                    record
                }
                Err(error) => rejected(record, &error),
            };
            out.push(record.build());
        }
    }
    out
}

/// An Admission Log replaying the evaluation's declared outcomes and recording the call order.
struct FixtureLog<'e> {
    evaluation: &'e Value,
    calls: RefCell<Vec<&'static str>>,
}

impl FixtureLog<'_> {
    fn record(&self, outcome: &Value) -> Option<AuthenticatedRecord> {
        let path = outcome.get("record").and_then(Value::as_str)?;
        Some(AuthenticatedRecord {
            bytes: file(path),
            authenticated_service: Principal::from_value(outcome.get("authenticatedService")?)?,
        })
    }

    fn outcome(&self, name: &str) -> (&str, Option<AuthenticatedRecord>) {
        let outcome = self.evaluation.get(name).unwrap_or(&Value::Null);
        (str_at(outcome, "/status"), self.record(outcome))
    }
}

impl AdmissionLog for FixtureLog<'_> {
    fn lookup(&self, _: &str, _: &str) -> LookupOutcome {
        self.calls.borrow_mut().push("lookup");
        let (status, record) = self.outcome("lookup");
        LookupOutcome::from_status(status, record).unwrap_or(LookupOutcome::Indeterminate)
    }

    fn append(&self, _: &FirstAdmissionRecord, _: &[u8]) -> AppendOutcome {
        self.calls.borrow_mut().push("append");
        let (status, record) = self.outcome("append");
        AppendOutcome::from_status(status, record).unwrap_or(AppendOutcome::Indeterminate)
    }
}

fn admission() -> Vec<Value> {
    let codec = SignedDocumentCodec::new();
    let mut out = Vec::new();
    for case in items(&json("admission/manifest.json"), "cases") {
        for evaluation in items(&case, "evaluations") {
            let mode = str_at(&evaluation, "/mode");
            let profile = str_at(&evaluation, "/profileId");
            let log = FixtureLog {
                evaluation: &evaluation,
                calls: RefCell::default(),
            };
            let record = Rec::new()
                .str("area", "admission")
                .str("id", str_at(&evaluation, "/id"))
                .str("mode", mode)
                .str("profileId", profile)
                .value(
                    "inputs",
                    Rec::new()
                        .str("manifest", "admission/manifest.json")
                        .str("document", str_at(&evaluation, "/document"))
                        .str("registry", str_at(&evaluation, "/registry"))
                        .build(),
                );
            let Some(kind) = SignedDocumentKind::parse(profile) else {
                continue;
            };
            let resolver = AgentRegistryKeyResolver::new(&file(str_at(&evaluation, "/registry")));
            let document = file(str_at(&evaluation, "/document"));
            let record = match codec.verify(kind, &document, &resolver) {
                Err(error) => rejected(record, &error),
                Ok(verified) => {
                    let admitted = if mode == "historical-replay" {
                        replay_historical(&verified, &log)
                    } else {
                        let mut context = || {
                            log.calls.borrow_mut().push("context");
                            let c = evaluation.get("trustedContext").unwrap_or(&Value::Null);
                            TrustedAcceptanceContext {
                                admission_record_id: str_at(c, "/admissionRecordId").to_owned(),
                                trusted_accepted_at: str_at(c, "/trustedAcceptedAt").to_owned(),
                                accepted_by: c
                                    .get("acceptedBy")
                                    .and_then(Principal::from_value)
                                    .unwrap_or_else(|| {
                                        Principal::new(
                                            missionweaveprotocol::principal::PrincipalType::Service,
                                            "",
                                        )
                                    }),
                            }
                        };
                        admit_first(&verified, &log, &mut context)
                    };
                    match admitted {
                        Ok(admitted) => record
                            .str("verdict", "complete")
                            .str("stage", "complete")
                            .value("code", Value::Null)
                            .value("reason", Value::Null)
                            .str(
                                "record",
                                text(
                                    &canonical_bytes(&admitted.record.to_value())
                                        .unwrap_or_default(),
                                ),
                            )
                            .str("recordBytes", encode_base64url(&admitted.record_bytes))
                            .bool("existing", admitted.existing),
                        Err(error) => record
                            .str("verdict", "rejected")
                            .str("stage", error.stage().as_str())
                            .str("code", error.wire_code().as_str())
                            .str("reason", error.reason.as_str()),
                    }
                }
            };
            let calls = log.calls.borrow().clone();
            out.push(record.strings("calls", calls).build());
        }
    }
    out
}
