//! Shared bundle-integrity checks: strict reading, artifact lists (safe, sorted, unique, exact
//! bytes), `artifactDigest` (§22: SHA-256 of the JCS of the manifest without that member), and
//! schema catalogs built from the bundle's own schema files.

use std::collections::HashSet;

use super::source::BundleSource;
use crate::json::{Value, canonical_bytes, parse_state, sha256_prefixed};
use crate::schema::{SCHEMA_ID_PREFIX, SchemaCatalog};
use crate::signed_documents::SignedDocumentKind;

/// Reads and strictly parses a JSON file.
pub(crate) fn read_json(source: &dyn BundleSource, path: &str) -> Result<Value, String> {
    let bytes = source.read(path).map_err(|error| error.to_string())?;
    parse_state(&bytes).map_err(|e| format!("{path}: {e}"))
}

/// A safe relative path: lower-case ASCII segments `^[a-z0-9][a-z0-9._-]*$`, no `.`/`..`.
pub(crate) fn is_safe_path(path: &str) -> bool {
    !path.is_empty()
        && path.split('/').all(|segment| {
            let bytes = segment.as_bytes();
            !bytes.is_empty()
                && segment != "."
                && segment != ".."
                && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
                && bytes.iter().all(|&b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
                })
        })
}

/// Checks a manifest's `artifacts` list and returns the listed paths.
pub(crate) fn check_artifacts(
    source: &dyn BundleSource,
    manifest: &Value,
    allowed_prefixes: &[&str],
    problems: &mut Vec<String>,
) -> Vec<String> {
    let Some(artifacts) = manifest.get("artifacts").and_then(Value::as_array) else {
        problems.push("manifest has no artifacts array".into());
        return Vec::new();
    };
    let mut paths = Vec::with_capacity(artifacts.len());
    let mut folded = HashSet::new();
    for artifact in artifacts {
        let Some(path) = artifact.get("path").and_then(Value::as_str) else {
            problems.push("artifact without a path".into());
            continue;
        };
        if !is_safe_path(path)
            || !allowed_prefixes
                .iter()
                .any(|prefix| path.starts_with(prefix))
        {
            problems.push(format!(
                "artifact path {path} is not a safe path under {allowed_prefixes:?}"
            ));
            continue;
        }
        if !folded.insert(path.to_lowercase()) {
            problems.push(format!(
                "artifact {path} is listed twice (after case folding)"
            ));
        }
        let length = artifact
            .get("byteLength")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64());
        let digest = artifact.get("sha256").and_then(Value::as_str);
        match source.read(path) {
            Err(error) => problems.push(format!("artifact {error}")),
            Ok(bytes) => {
                if length != Some(bytes.len() as u64) {
                    problems.push(format!(
                        "artifact {path} has {} bytes, manifest says {length:?}",
                        bytes.len()
                    ));
                }
                if digest != Some(sha256_prefixed(&bytes).as_str()) {
                    problems.push(format!("artifact {path} does not match its sha256"));
                }
            }
        }
        paths.push(path.to_owned());
    }
    let mut sorted = paths.clone();
    sorted.sort();
    sorted.dedup();
    if sorted != paths {
        problems.push("artifacts are not sorted and unique by path".into());
    }
    paths
}

/// Recomputes `artifactDigest` and compares it with the manifest's own.
pub(crate) fn check_artifact_digest(manifest: &Value, problems: &mut Vec<String>) -> String {
    let Some(object) = manifest.as_object() else {
        problems.push("manifest is not an object".into());
        return String::new();
    };
    let declared = object
        .get("artifactDigest")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut without = object.clone();
    without.remove("artifactDigest");
    match canonical_bytes(&Value::Object(without)) {
        Ok(bytes) => {
            let computed = sha256_prefixed(&bytes);
            if computed != declared {
                problems.push(format!(
                    "artifactDigest {declared} does not match the computed {computed}"
                ));
            }
        }
        Err(error) => problems.push(format!("manifest cannot be canonicalized: {error}")),
    }
    declared
}

/// The bundle's protocol schemas: exactly `expected` files (`None`: any number, for a root
/// pinned at another commit, whose pin counts them), each with the canonical `$id`.
pub(crate) fn schema_files(
    source: &dyn BundleSource,
    expected: Option<usize>,
    problems: &mut Vec<String>,
) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let listed = source.list("schemas/").unwrap_or_else(|error| {
        problems.push(error.to_string());
        Vec::new()
    });
    for path in listed {
        if !path.ends_with(".schema.json") || path.matches('/').count() != 1 {
            continue;
        }
        let bytes = match source.read(&path) {
            Ok(bytes) => bytes,
            Err(error) => {
                problems.push(error.to_string());
                continue;
            }
        };
        let file = &path["schemas/".len()..];
        let id = parse_state(&bytes)
            .ok()
            .and_then(|v| v.get("$id").and_then(Value::as_str).map(str::to_owned));
        if id.as_deref() != Some(format!("{SCHEMA_ID_PREFIX}{file}").as_str()) {
            problems.push(format!("{path} does not have $id {SCHEMA_ID_PREFIX}{file}"));
        }
        files.push((path, bytes.into_owned()));
    }
    if let Some(expected) = expected
        && files.len() != expected
    {
        problems.push(format!(
            "expected {expected} schemas, found {}",
            files.len()
        ));
    }
    files
}

/// Compiles the bundle's schemas plus extra schema files (manifest and fixture schemas).
pub(crate) fn catalog(
    source: &dyn BundleSource,
    extra: &[&str],
    problems: &mut Vec<String>,
) -> Option<SchemaCatalog> {
    let pinned_count = (!super::root_pin::names_other_commit(source)).then_some(22);
    let mut files = schema_files(source, pinned_count, problems);
    for path in extra {
        match source.read(path) {
            Ok(bytes) => files.push(((*path).to_owned(), bytes.into_owned())),
            Err(error) => problems.push(error.to_string()),
        }
    }
    match SchemaCatalog::compile(
        files
            .iter()
            .map(|(path, bytes)| (path.as_str(), bytes.as_slice())),
    ) {
        Ok(catalog) => Some(catalog),
        Err(error) => {
            problems.push(error.to_string());
            None
        }
    }
}

/// The kind, document bytes and Registry bytes a signed-document evaluation names.
pub(crate) fn evaluation_inputs(
    source: &dyn BundleSource,
    evaluation: &Value,
) -> Result<(SignedDocumentKind, Vec<u8>, Vec<u8>), String> {
    let text = |pointer: &str| evaluation.pointer(pointer).and_then(Value::as_str);
    let kind = text("/profileId")
        .and_then(SignedDocumentKind::parse)
        .ok_or("unknown profileId")?;
    let read = |pointer: &str| -> Result<Vec<u8>, String> {
        let path = text(pointer).ok_or_else(|| format!("{pointer} is not given"))?;
        source
            .read(path)
            .map(|bytes| bytes.into_owned())
            .map_err(|error| error.to_string())
    };
    Ok((kind, read("/document")?, read("/registry")?))
}
