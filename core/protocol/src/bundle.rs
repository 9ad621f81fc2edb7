//! The pinned protocol bundle, embedded at build time from `MWP_PROTOCOL_ROOT` after checking
//! every byte against `protocol.pin` (§22: implementations pin a protocol commit).

mod generated {
    include!(concat!(env!("OUT_DIR"), "/bundle_files.rs"));
}

pub use generated::{PINNED_FILE_COUNT, SOURCE_COMMIT};

/// The 22 embedded schema files as `(path, bytes)`.
pub fn schema_files() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    generated::SCHEMA_FILES.iter().copied()
}

/// Every embedded file (schemas first) as `(path, bytes)`.
pub fn embedded_files() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    generated::SCHEMA_FILES
        .iter()
        .chain(generated::BUNDLE_FILES.iter())
        .copied()
}

/// The bytes of one embedded file, by its path relative to the bundle root.
pub fn embedded_file(path: &str) -> Option<&'static [u8]> {
    embedded_files()
        .find(|(p, _)| *p == path)
        .map(|(_, bytes)| bytes)
}

use core::fmt;

use crate::conformance::root_pin::{self, read_root_pin};
use crate::conformance::{BundleSource, EmbeddedBundle};
use crate::json::Value;

/// The embedded (or given) bundle failed its integrity checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleVerificationError {
    pub problems: Vec<String>,
}

impl fmt::Display for BundleVerificationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bundle verification failed: {}",
            self.problems.join("; ")
        )
    }
}

impl std::error::Error for BundleVerificationError {}

/// What [`verify_cryptography_bundle`] established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CryptographyBundleSummary {
    pub source_commit: String,
    pub profile_id: String,
    pub manifest_version: i64,
    pub artifact_digest: String,
    pub artifact_count: usize,
    pub case_count: usize,
    pub evaluation_count: usize,
}

/// What [`verify_admission_bundle`] established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionBundleSummary {
    pub source_commit: String,
    pub profile_id: String,
    pub manifest_version: i64,
    pub artifact_digest: String,
    pub cryptography_artifact_digest: String,
    pub artifact_count: usize,
    pub case_count: usize,
    pub evaluation_count: usize,
}

fn summary_value(members: &[(&str, Value)]) -> Value {
    let mut object = crate::json::Object::new();
    for (name, value) in members {
        object.insert(name, value.clone());
    }
    Value::Object(object)
}

fn count(n: usize) -> Value {
    Value::Number(crate::json::Number::from_u64(n as u64))
}

impl CryptographyBundleSummary {
    /// The summary as a JSON object with camelCase members.
    pub fn to_value(&self) -> Value {
        summary_value(&[
            ("sourceCommit", Value::string(self.source_commit.clone())),
            ("profileId", Value::string(self.profile_id.clone())),
            (
                "manifestVersion",
                Value::Number(crate::json::Number::from_i64(self.manifest_version)),
            ),
            (
                "artifactDigest",
                Value::string(self.artifact_digest.clone()),
            ),
            ("artifactCount", count(self.artifact_count)),
            ("caseCount", count(self.case_count)),
            ("evaluationCount", count(self.evaluation_count)),
        ])
    }
}

impl AdmissionBundleSummary {
    /// The summary as a JSON object with camelCase members.
    pub fn to_value(&self) -> Value {
        summary_value(&[
            ("sourceCommit", Value::string(self.source_commit.clone())),
            ("profileId", Value::string(self.profile_id.clone())),
            (
                "manifestVersion",
                Value::Number(crate::json::Number::from_i64(self.manifest_version)),
            ),
            (
                "artifactDigest",
                Value::string(self.artifact_digest.clone()),
            ),
            (
                "cryptographyArtifactDigest",
                Value::string(self.cryptography_artifact_digest.clone()),
            ),
            ("artifactCount", count(self.artifact_count)),
            ("caseCount", count(self.case_count)),
            ("evaluationCount", count(self.evaluation_count)),
        ])
    }
}

fn count_evaluations(manifest: &Value) -> (usize, usize) {
    let cases = manifest
        .get("cases")
        .and_then(Value::as_array)
        .unwrap_or_default();
    let evaluations = cases
        .iter()
        .map(|case| {
            case.get("evaluations")
                .and_then(Value::as_array)
                .map_or(0, <[Value]>::len)
        })
        .sum();
    (cases.len(), evaluations)
}

fn manifest_version(manifest: &Value) -> i64 {
    manifest
        .get("manifestVersion")
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
        .unwrap_or(0)
}

/// Re-verifies the embedded cryptography bundle: manifest schema, constants, every artifact's
/// bytes, closure, `artifactDigest` (§22), profiles and case matrix.
pub fn verify_cryptography_bundle() -> Result<CryptographyBundleSummary, BundleVerificationError> {
    verify_cryptography_bundle_from(&EmbeddedBundle)
}

/// [`verify_cryptography_bundle`] for another bundle source. A root may hold the bundle of
/// another protocol commit (the reference runtime's older one): it is accepted when it is
/// complete and self-consistent (every check above, with its own case matrix) and its pin
/// (`PROTOCOL_PIN.json` or `PIN.json`, [`crate::conformance::root_pin`]) agrees with its
/// manifest; `source_commit` is then the pin's commit. A root without a pin must be the
/// embedded bundle's manifest (same `artifactDigest`).
pub fn verify_cryptography_bundle_from(
    source: &dyn BundleSource,
) -> Result<CryptographyBundleSummary, BundleVerificationError> {
    let refuse = |problems: Vec<String>| BundleVerificationError { problems };
    let pin = read_root_pin(source).map_err(|problem| refuse(vec![problem]))?;
    let preflight = crate::conformance::cryptography::preflight(source);
    if !preflight.problems.is_empty() {
        return Err(refuse(preflight.problems));
    }
    let (case_count, evaluation_count) = count_evaluations(&preflight.manifest);
    let embedded_digest = embedded_file(crate::conformance::cryptography::MANIFEST)
        .and_then(|bytes| crate::json::parse_state(bytes).ok())
        .and_then(|m| {
            m.get("artifactDigest")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let same_as_embedded = preflight.artifact_digest == embedded_digest;
    let source_commit = match &pin {
        None if same_as_embedded => SOURCE_COMMIT.to_owned(),
        None => {
            return Err(refuse(vec![format!(
                "the root names no protocol commit ({} or {}) and its cryptography manifest \
                 is not the embedded one ({SOURCE_COMMIT})",
                root_pin::REFERENCE_PIN,
                root_pin::REPOSITORY_PIN
            )]));
        }
        Some(pin) => {
            let mut problems = root_pin::tree_problems(source, pin);
            let mut differ = |what: &str, pinned: String, actual: String| {
                if pinned != actual {
                    problems.push(format!(
                        "{} pins {what} {pinned}, the manifest has {actual}",
                        pin.file
                    ));
                }
            };
            if pin.commit == SOURCE_COMMIT {
                differ(
                    "the embedded commit, whose artifactDigest is",
                    embedded_digest.clone(),
                    preflight.artifact_digest.clone(),
                );
            }
            if let Some(version) = &pin.protocol_version {
                let actual = preflight
                    .manifest
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                differ("protocolVersion", version.clone(), actual.to_owned());
            }
            if let Some(crypto) = &pin.cryptography {
                differ(
                    "profileId",
                    crypto.profile_id.clone(),
                    crate::conformance::cryptography::PROFILE_ID.to_owned(),
                );
                differ(
                    "manifestVersion",
                    crypto.manifest_version.to_string(),
                    manifest_version(&preflight.manifest).to_string(),
                );
                differ(
                    "artifactDigest",
                    crypto.artifact_digest.clone(),
                    preflight.artifact_digest.clone(),
                );
                for (what, pinned, actual) in [
                    (
                        "artifactCount",
                        crypto.artifact_count,
                        preflight.artifact_count,
                    ),
                    ("caseCount", crypto.case_count, case_count),
                    ("evaluationCount", crypto.evaluation_count, evaluation_count),
                ] {
                    if let Some(pinned) = pinned {
                        differ(what, pinned.to_string(), actual.to_string());
                    }
                }
            }
            if !problems.is_empty() {
                return Err(refuse(problems));
            }
            pin.commit.clone()
        }
    };
    Ok(CryptographyBundleSummary {
        source_commit,
        profile_id: crate::conformance::cryptography::PROFILE_ID.to_owned(),
        manifest_version: manifest_version(&preflight.manifest),
        artifact_digest: preflight.artifact_digest,
        artifact_count: preflight.artifact_count,
        case_count,
        evaluation_count,
    })
}

/// Re-verifies the embedded admission bundle, including the whole cryptography bundle it pins.
pub fn verify_admission_bundle() -> Result<AdmissionBundleSummary, BundleVerificationError> {
    verify_admission_bundle_from(&EmbeddedBundle)
}

/// [`verify_admission_bundle`] for another bundle source.
pub fn verify_admission_bundle_from(
    source: &dyn BundleSource,
) -> Result<AdmissionBundleSummary, BundleVerificationError> {
    use crate::conformance::admission;
    let refuse = |problem: String| BundleVerificationError {
        problems: vec![problem],
    };
    let bytes = source
        .read(admission::MANIFEST)
        .map_err(|error| refuse(error.to_string()))?;
    let manifest = crate::json::parse_state(&bytes).map_err(|error| {
        refuse(format!(
            "{} is not strict JSON: {error}",
            admission::MANIFEST
        ))
    })?;
    let mut problems = Vec::new();
    let listed = admission::preflight(source, &manifest, &mut problems);
    if !problems.is_empty() {
        return Err(BundleVerificationError { problems });
    }
    let (case_count, evaluation_count) = count_evaluations(&manifest);
    let text = |pointer: &str| {
        manifest
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Ok(AdmissionBundleSummary {
        source_commit: SOURCE_COMMIT.to_owned(),
        profile_id: admission::PROFILE_ID.to_owned(),
        manifest_version: manifest_version(&manifest),
        artifact_digest: text("/artifactDigest"),
        cryptography_artifact_digest: text("/cryptography/artifactDigest"),
        artifact_count: listed.len(),
        case_count,
        evaluation_count,
    })
}
