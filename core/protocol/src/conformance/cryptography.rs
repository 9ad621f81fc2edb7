//! The cryptography bundle (`cryptography/manifest.json`): integrity preflight, then each of the
//! 62 evaluations through the six-stage verifier, checking stages, codes, signing bytes, hashes
//! and deterministic re-signing (§22).

use std::collections::{BTreeSet, HashSet};

use super::integrity::{
    catalog, check_artifact_digest, check_artifacts, evaluation_inputs, read_json,
};
use super::report::{BundleKind, BundleReport};
use super::source::BundleSource;
use crate::crypto::SigningKey;
use crate::error::Stage;
use crate::json::{Value, canonical_bytes, parse_state, sha256_prefixed};
use crate::principal::Principal;
use crate::registry::AgentRegistryKeyResolver;
use crate::schema::{SCHEMA_ID_PREFIX, SchemaCatalog};
use crate::schema_formats::decode_base64url;
use crate::signed_documents::{ExpectedSignerRule, SignedDocumentCodec, SignedDocumentKind};

pub(crate) const MANIFEST: &str = "cryptography/manifest.json";
pub(crate) const MANIFEST_SCHEMA: &str = "cryptography/manifest.schema.json";
const MANIFEST_SCHEMA_ID: &str =
    "https://missionweaveprotocol.dev/cryptography/0.1/manifest.schema.json";
const REGISTRY_SCHEMA: &str = "cryptography/registry-fixture.schema.json";
const SIGNING_KEY_SCHEMA: &str = "cryptography/signing-key-fixture.schema.json";
pub(crate) const PROFILE_ID: &str = "missionweaveprotocol.signed-document-verification.v0.1";
const STAGES: [&str; 7] = [
    "parse",
    "schema",
    "signature-envelope",
    "key-resolution",
    "canonicalization",
    "signature",
    "complete",
];
/// The failure matrices and their exact sizes and stages.
const FAILURE_MATRICES: [(&str, usize, &str); 6] = [
    (
        "reject.canonicalization.data-model-matrix",
        2,
        "canonicalization",
    ),
    ("reject.key-resolution.matrix", 19, "key-resolution"),
    ("reject.parse.byte-level-matrix", 3, "parse"),
    ("reject.schema.validation-matrix", 4, "schema"),
    (
        "reject.signature-envelope.ed25519-encoding-matrix",
        8,
        "signature-envelope",
    ),
    ("reject.signature.equation-matrix", 2, "signature"),
];

/// What the preflight establishes.
pub(crate) struct Preflight {
    pub manifest: Value,
    pub catalog: Option<SchemaCatalog>,
    pub problems: Vec<String>,
    pub artifact_digest: String,
    pub artifact_count: usize,
    pub case_count: usize,
}

fn str_at<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
}

fn expected_signer_value(kind: SignedDocumentKind) -> Value {
    let text = match kind.expected_signer_rule() {
        ExpectedSignerRule::ServicePrincipal => r#"{"rule":"service-principal"}"#.to_owned(),
        ExpectedSignerRule::PrincipalObject(pointer) => {
            format!(r#"{{"rule":"principal-object","pointer":"{pointer}"}}"#)
        }
        ExpectedSignerRule::AgentId(pointer) => {
            format!(r#"{{"rule":"agent-id","idPointer":"{pointer}"}}"#)
        }
    };
    parse_state(text.as_bytes()).unwrap_or(Value::Null)
}

/// Schema files reachable from `roots` through `$ref` (resource part only).
fn ref_closure(source: &dyn BundleSource, roots: &[String]) -> BTreeSet<String> {
    fn collect(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                for (key, member) in object.iter() {
                    if key.as_str() == Some("$ref")
                        && let Some(reference) = member.as_str()
                    {
                        let resource = reference.split('#').next().unwrap_or_default();
                        if !resource.is_empty() {
                            out.push(resource.trim_start_matches(SCHEMA_ID_PREFIX).to_owned());
                        }
                    }
                    collect(member, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
            _ => {}
        }
    }
    let mut seen = BTreeSet::new();
    let mut pending: Vec<String> = roots.to_vec();
    while let Some(path) = pending.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        if let Some(value) = source
            .read(&path)
            .ok()
            .and_then(|bytes| parse_state(&bytes).ok())
        {
            let mut refs = Vec::new();
            collect(&value, &mut refs);
            let dir = path
                .rsplit_once('/')
                .map(|(dir, _)| dir)
                .unwrap_or_default();
            pending.extend(refs.into_iter().map(|file| format!("{dir}/{file}")));
        }
    }
    seen
}

/// The integrity preflight of the reference validator, in its order.
pub(crate) fn preflight(source: &dyn BundleSource) -> Preflight {
    let mut problems = Vec::new();
    let manifest = read_json(source, MANIFEST).unwrap_or_else(|error| {
        problems.push(error);
        Value::Null
    });
    // 1. Manifest schema, fixture schemas and the protocol schemas in one catalog.
    let catalog = catalog(
        source,
        &[MANIFEST_SCHEMA, REGISTRY_SCHEMA, SIGNING_KEY_SCHEMA],
        &mut problems,
    );
    if let Some(catalog) = &catalog {
        if !catalog.contains(MANIFEST_SCHEMA_ID) {
            problems.push(format!(
                "{MANIFEST_SCHEMA} does not have $id {MANIFEST_SCHEMA_ID}"
            ));
        } else if let Err(issue) = catalog.validate(MANIFEST_SCHEMA_ID, &manifest) {
            problems.push(format!("manifest does not match its schema: {issue}"));
        }
    }
    // 2. Constants.
    if manifest
        .get("manifestVersion")
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
        != Some(1)
        || str_at(&manifest, "/protocolVersion") != Some("0.1")
        || str_at(&manifest, "/profileId") != Some(PROFILE_ID)
    {
        problems
            .push("manifest version, protocol version or profile ID is not the pinned one".into());
    }
    let stages: Vec<&str> = manifest
        .get("semanticStages")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if stages != STAGES {
        problems.push("semanticStages is not the six stages plus complete".into());
    }
    if str_at(&manifest, "/fixtureSchemas/registry") != Some(REGISTRY_SCHEMA)
        || str_at(&manifest, "/fixtureSchemas/signingKey") != Some(SIGNING_KEY_SCHEMA)
    {
        problems.push("fixtureSchemas are not the pinned paths".into());
    }
    // 3–5. Artifacts, closure, digest.
    let listed = check_artifacts(
        source,
        &manifest,
        &["cryptography/", "schemas/"],
        &mut problems,
    );
    let listed_set: BTreeSet<String> = listed.iter().cloned().collect();
    for path in source.list("cryptography/").unwrap_or_else(|error| {
        problems.push(error.to_string());
        Vec::new()
    }) {
        if path != MANIFEST && path != "cryptography/README.md" && !listed_set.contains(&path) {
            problems.push(format!("{path} is not listed in the manifest artifacts"));
        }
    }
    let artifact_digest = check_artifact_digest(&manifest, &mut problems);
    // 6. The referenced set equals the listed set.
    let empty = Vec::new();
    let cases = manifest
        .get("cases")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let profiles = manifest
        .get("profiles")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut roots: Vec<String> = vec![
        MANIFEST_SCHEMA.into(),
        REGISTRY_SCHEMA.into(),
        SIGNING_KEY_SCHEMA.into(),
    ];
    roots.extend(
        profiles
            .iter()
            .filter_map(|p| str_at(p, "/schema"))
            .map(str::to_owned),
    );
    let mut referenced = ref_closure(source, &roots);
    for case in cases {
        for evaluation in case
            .get("evaluations")
            .and_then(Value::as_array)
            .unwrap_or(&empty)
        {
            for pointer in [
                "/document",
                "/registry",
                "/signingKey",
                "/input",
                "/expectedJcs",
                "/expect/verified/signingBytes",
            ] {
                if let Some(path) = str_at(evaluation, pointer) {
                    referenced.insert(path.to_owned());
                }
            }
        }
    }
    if referenced != listed_set {
        let extra: Vec<_> = referenced.symmetric_difference(&listed_set).collect();
        problems.push(format!("referenced and listed artifacts differ: {extra:?}"));
    }
    // 7. Profiles are the nine of §6.4, and exactly those schemas require a signature.
    let expected_profiles: Vec<(String, String, String, Value)> = SignedDocumentKind::ALL
        .iter()
        .map(|k| {
            (
                k.as_str().to_owned(),
                format!("schemas/{}", k.schema_file()),
                k.protected_time_pointer().to_owned(),
                expected_signer_value(*k),
            )
        })
        .collect();
    let actual_profiles: Vec<(String, String, String, Value)> = profiles
        .iter()
        .map(|p| {
            (
                str_at(p, "/profileId").unwrap_or_default().to_owned(),
                str_at(p, "/schema").unwrap_or_default().to_owned(),
                str_at(p, "/protectedTimePointer")
                    .unwrap_or_default()
                    .to_owned(),
                p.get("expectedSigner").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    let profiles_match = expected_profiles.len() == actual_profiles.len()
        && expected_profiles
            .iter()
            .zip(&actual_profiles)
            .all(|(e, a)| e.0 == a.0 && e.1 == a.1 && e.2 == a.2 && e.3.json_eq(&a.3));
    if !profiles_match {
        problems.push("profiles are not the nine Signed Document Verification Profiles".into());
    }
    let signature_schemas: BTreeSet<String> = source
        .list("schemas/")
        .unwrap_or_else(|error| {
            problems.push(error.to_string());
            Vec::new()
        })
        .into_iter()
        .filter(|path| {
            source
                .read(path)
                .ok()
                .and_then(|bytes| parse_state(&bytes).ok())
                .and_then(|v| {
                    v.get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().any(|n| n.as_str() == Some("signature")))
                })
                .unwrap_or(false)
        })
        .collect();
    let expected_signature_schemas: BTreeSet<String> =
        expected_profiles.iter().map(|p| p.1.clone()).collect();
    if signature_schemas != expected_signature_schemas {
        problems.push(format!(
            "schemas requiring a signature are {signature_schemas:?}"
        ));
    }
    // 8. Case matrix. The registered failure-matrix sizes are this project's pinned commit's;
    // a root pinned at another commit (the reference's older bundle) is held to its own
    // manifest and pin instead (`bundle::verify_cryptography_bundle_from`).
    let other_commit = super::root_pin::names_other_commit(source);
    check_cases(cases, !other_commit, &mut problems);
    // 10. Fixtures validate against their fixture schemas.
    if let Some(catalog) = &catalog {
        for path in &listed {
            let schema = if path.starts_with("cryptography/keys/registry-") {
                "registry-fixture.schema.json"
            } else if path.starts_with("cryptography/keys/signing-") {
                "signing-key-fixture.schema.json"
            } else {
                continue;
            };
            match read_json(source, path) {
                Ok(value) => {
                    if let Err(issue) = catalog.validate(schema, &value) {
                        problems.push(format!("{path} does not match {schema}: {issue}"));
                    }
                }
                Err(error) => problems.push(error),
            }
        }
    }
    Preflight {
        artifact_count: listed.len(),
        case_count: cases.len(),
        manifest,
        catalog,
        problems,
        artifact_digest,
    }
}

fn check_cases(cases: &[Value], registered_sizes: bool, problems: &mut Vec<String>) {
    let ids: Vec<&str> = cases.iter().filter_map(|c| str_at(c, "/id")).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted != ids || ids.len() != cases.len() {
        problems.push("case IDs are not sorted and unique".into());
    }
    let mut fault_ids = HashSet::new();
    for case in cases {
        let id = str_at(case, "/id").unwrap_or_default();
        let evaluations = case
            .get("evaluations")
            .and_then(Value::as_array)
            .map(<[Value]>::to_vec)
            .unwrap_or_default();
        let complete = evaluations
            .iter()
            .filter(|e| str_at(e, "/expect/stage") == Some("complete"))
            .count();
        if complete != 0
            && complete != evaluations.len()
            && str_at(case, "/kind") != Some("canonicalization")
        {
            problems.push(format!("case {id} mixes complete and rejected evaluations"));
        }
        if str_at(case, "/kind") == Some("failure-matrix") {
            match FAILURE_MATRICES.iter().find(|(matrix, _, _)| *matrix == id) {
                None if registered_sizes => {
                    problems.push(format!("failure matrix {id} is not registered"));
                }
                None => {}
                Some((_, size, stage))
                    if (registered_sizes && evaluations.len() != *size)
                        || evaluations
                            .iter()
                            .any(|e| str_at(e, "/expect/stage") != Some(stage)) =>
                {
                    problems.push(format!(
                        "failure matrix {id} does not have {size} evaluations at {stage}"
                    ));
                }
                Some(_) => {}
            }
        }
        for evaluation in &evaluations {
            let Some(fault) = evaluation
                .get("fault")
                .filter(|f| !matches!(f, Value::Null))
            else {
                continue;
            };
            let fault_id = str_at(fault, "/id").unwrap_or_default();
            if !fault_ids.insert(fault_id.to_owned()) {
                problems.push(format!("fault {fault_id} is not unique"));
            }
            let basis_case = str_at(fault, "/basis/caseId").unwrap_or_default();
            let basis_profile = str_at(fault, "/basis/profileId").unwrap_or_default();
            let basis = cases
                .iter()
                .filter(|c| str_at(c, "/id") == Some(basis_case))
                .flat_map(|c| {
                    c.get("evaluations")
                        .and_then(Value::as_array)
                        .map(<[Value]>::to_vec)
                        .unwrap_or_default()
                })
                .find(|e| {
                    str_at(e, "/profileId") == Some(basis_profile)
                        && str_at(e, "/expect/stage") == Some("complete")
                });
            match basis {
                None => problems.push(format!(
                    "fault {fault_id} has no complete basis {basis_case}/{basis_profile}"
                )),
                Some(basis) => {
                    if str_at(evaluation, "/profileId") != Some(basis_profile) {
                        problems.push(format!("fault {fault_id} changes the profile of its basis"));
                    }
                    let changed = str_at(evaluation, "/document") != str_at(&basis, "/document")
                        || str_at(evaluation, "/registry") != str_at(&basis, "/registry");
                    if !changed {
                        problems.push(format!(
                            "fault {fault_id} changes neither the document nor the registry"
                        ));
                    }
                }
            }
        }
    }
}

fn check_complete(
    source: &dyn BundleSource,
    evaluation: &Value,
    verified: &crate::signed_documents::VerifiedSignedDocument,
    registry_key: Option<[u8; 32]>,
) -> Result<(), String> {
    let expect = evaluation
        .pointer("/expect/verified")
        .ok_or("expect.verified is missing")?;
    let key_path = str_at(evaluation, "/signingKey").ok_or("signingKey is missing")?;
    let key_fixture = read_json(source, key_path)?;
    let key_id = str_at(&key_fixture, "/keyId").unwrap_or_default();
    if key_id != verified.key_id {
        return Err(format!(
            "signing key {key_id} is not the resolved key {}",
            verified.key_id
        ));
    }
    let seed = str_at(&key_fixture, "/seed")
        .and_then(decode_base64url)
        .ok_or("seed is not base64url")?;
    let seed: [u8; 32] = seed
        .as_slice()
        .try_into()
        .map_err(|_| "seed is not 32 bytes")?;
    let key = SigningKey::from_seed(key_id, &seed);
    let fixture_public = str_at(&key_fixture, "/publicKey").and_then(decode_base64url);
    if fixture_public.as_deref() != Some(key.public_key_bytes().as_slice())
        || registry_key != Some(key.public_key_bytes())
    {
        return Err(
            "the seed's public key differs from the fixture or the Registry binding".into(),
        );
    }
    let resigned = crate::schema_formats::encode_base64url(&key.sign(&verified.signing_bytes));
    if resigned != verified.signature {
        return Err("re-signing the signing bytes does not reproduce signature.value".into());
    }
    let principal = expect.get("principal").and_then(Principal::from_value);
    if str_at(expect, "/keyId") != Some(verified.key_id.as_str())
        || principal.as_ref() != Some(&verified.principal)
    {
        return Err("verified key ID or Principal differs".into());
    }
    if str_at(expect, "/protectedTime") != Some(verified.protected_time.as_str()) {
        return Err(format!(
            "protected time {} differs",
            verified.protected_time
        ));
    }
    if str_at(expect, "/signingHash") != Some(verified.signing_hash.as_str())
        || str_at(expect, "/signature") != Some(verified.signature.as_str())
    {
        return Err("signing hash or signature text differs".into());
    }
    let bytes_path = str_at(expect, "/signingBytes").ok_or("signingBytes is missing")?;
    let expected_bytes = source.read(bytes_path).map_err(|e| e.to_string())?;
    if *expected_bytes != *verified.signing_bytes {
        return Err(format!("signing bytes differ from {bytes_path}"));
    }
    if str_at(expect, "/signedDocumentHash") != Some(verified.signed_document_hash().as_str()) {
        return Err("signed document hash differs".into());
    }
    Ok(())
}

fn evaluate(
    source: &dyn BundleSource,
    codec: &SignedDocumentCodec<'_>,
    evaluation: &Value,
) -> (String, Result<(), String>) {
    if let Some(input) = str_at(evaluation, "/input") {
        let result = (|| {
            let value = read_json(source, input)?;
            let jcs = canonical_bytes(&value).map_err(|e| e.to_string())?;
            let expected_path =
                str_at(evaluation, "/expectedJcs").ok_or("expectedJcs is missing")?;
            let expected = source.read(expected_path).map_err(|e| e.to_string())?;
            if *expected != *jcs {
                return Err(format!("canonical bytes differ from {expected_path}"));
            }
            if str_at(evaluation, "/sha256") != Some(sha256_prefixed(&jcs).as_str()) {
                return Err("canonical hash differs".into());
            }
            Ok(())
        })();
        return ("complete".into(), result);
    }
    let (kind, document, registry) = match evaluation_inputs(source, evaluation) {
        Ok(inputs) => inputs,
        Err(message) => return ("error".into(), Err(message)),
    };
    let resolver = AgentRegistryKeyResolver::new(&registry);
    let expected_stage = str_at(evaluation, "/expect/stage").unwrap_or_default();
    let expected_code = str_at(evaluation, "/expect/wireCode");
    match codec.verify(kind, &document, &resolver) {
        Ok(verified) => {
            if expected_stage != "complete" {
                return (
                    "complete".into(),
                    Err(format!("expected {expected_stage}, got complete")),
                );
            }
            let registry_key = resolver
                .snapshot()
                .ok()
                .and_then(|s| s.binding(&verified.key_id))
                .map(|b| *b.public_key.as_bytes());
            (
                "complete".into(),
                check_complete(source, evaluation, &verified, registry_key),
            )
        }
        Err(error) => {
            let actual = error.stage.as_str();
            let result = if Stage::parse(expected_stage) != Some(error.stage) {
                Err(format!(
                    "expected {expected_stage}, got {actual} ({})",
                    error.protected()
                ))
            } else if expected_code != Some(error.wire_code().as_str()) {
                Err(format!(
                    "expected wire code {expected_code:?}, got {}",
                    error.wire_code()
                ))
            } else {
                Ok(())
            };
            (actual.to_owned(), result)
        }
    }
}

/// Runs the cryptography bundle: preflight, then every evaluation.
pub fn run_cryptography_bundle(source: &dyn BundleSource) -> BundleReport {
    let mut report = BundleReport::new(BundleKind::Cryptography);
    let preflight = preflight(source);
    report
        .facts
        .push(("artifactDigest".into(), preflight.artifact_digest.clone()));
    report.facts.push(("profileId".into(), PROFILE_ID.into()));
    report
        .facts
        .push(("artifacts".into(), preflight.artifact_count.to_string()));
    report
        .facts
        .push(("cases".into(), preflight.case_count.to_string()));
    let Some(catalog) = &preflight.catalog else {
        for problem in preflight.problems {
            report.integrity(problem);
        }
        return report;
    };
    let codec = SignedDocumentCodec::with_catalog(catalog);
    let empty = Vec::new();
    for case in preflight
        .manifest
        .get("cases")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
    {
        let case_id = str_at(case, "/id").unwrap_or_default();
        let evaluations = case
            .get("evaluations")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        for (index, evaluation) in evaluations.iter().enumerate() {
            let label =
                str_at(evaluation, "/fault/id").or_else(|| str_at(evaluation, "/profileId"));
            let id = match (evaluations.len(), label) {
                (1, _) => case_id.to_owned(),
                (_, Some(label)) => format!("{case_id}/{label}"),
                _ => format!("{case_id}/{index}"),
            };
            let (actual, result) = evaluate(source, &codec, evaluation);
            report.record(&id, &actual, result);
        }
    }
    for problem in preflight.problems {
        report.integrity(problem);
    }
    report
}
