//! The structural bundle (`conformance/manifest.json`): schema validation only, with formats
//! asserted; the dummy signatures are never verified (§22).

use std::collections::HashSet;

use super::integrity::{catalog, is_safe_path, read_json};
use super::report::{BundleKind, BundleReport};
use super::source::BundleSource;
use crate::json::{Value, parse_state};

/// Number of structural vectors at the pinned commit (§22: 27 valid + 31 invalid).
pub const STRUCTURAL_VECTOR_COUNT: usize = 58;

/// The pinned structural manifest.
pub const STRUCTURAL_MANIFEST: &str = "conformance/manifest.json";

/// Runs the 58 structural vectors of the pinned manifest, with its count and closure checks.
pub fn run_structural_bundle(source: &dyn BundleSource) -> BundleReport {
    run_manifest(source, STRUCTURAL_MANIFEST, true)
}

/// Runs another structural manifest of the same shape (the reference's `run_manifest` with a
/// manifest path). The pinned count and the closure over `conformance/vectors/` are checked
/// only for the pinned manifest.
pub fn run_structural_manifest(source: &dyn BundleSource, manifest_path: &str) -> BundleReport {
    run_manifest(source, manifest_path, manifest_path == STRUCTURAL_MANIFEST)
}

fn run_manifest(source: &dyn BundleSource, manifest_path: &str, pinned: bool) -> BundleReport {
    let mut report = BundleReport::new(BundleKind::Structural);
    let mut problems = Vec::new();
    let catalog = catalog(source, &[], &mut problems);
    let manifest = match read_json(source, manifest_path) {
        Ok(manifest) => manifest,
        Err(error) => {
            report.integrity(error);
            return report;
        }
    };
    let Some(entries) = manifest.as_array() else {
        report.integrity(format!("{manifest_path} is not an array"));
        return report;
    };
    // A root pinned at another commit (the reference's older bundle: 56 vectors) is held to
    // its pin's file counts instead of this commit's vector count; the closure check stays.
    let pin = if pinned {
        super::root_pin::read_root_pin(source).unwrap_or_else(|problem| {
            problems.push(problem);
            None
        })
    } else {
        None
    };
    let other = pin
        .as_ref()
        .filter(|pin| pin.commit != crate::bundle::SOURCE_COMMIT);
    if let Some(pin) = other {
        problems.extend(super::root_pin::tree_problems(source, pin));
    }
    if let Some(pin) = &pin {
        report.facts.push(("commit".into(), pin.commit.clone()));
    }
    if pinned && other.is_none() && entries.len() != STRUCTURAL_VECTOR_COUNT {
        problems.push(format!(
            "expected {STRUCTURAL_VECTOR_COUNT} vectors, found {}",
            entries.len()
        ));
    }
    let mut names = HashSet::new();
    let mut instances = HashSet::new();
    let (mut valid_count, mut invalid_count) = (0, 0);
    for (index, entry) in entries.iter().enumerate() {
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let id = if name.is_empty() {
            format!("vector {index}")
        } else {
            name.to_owned()
        };
        let result = (|| -> Result<String, String> {
            if name.is_empty() || !names.insert(name.to_owned()) {
                return Err("name is empty or not unique".into());
            }
            let expected = entry
                .get("valid")
                .and_then(Value::as_bool)
                .ok_or("valid is not a boolean")?;
            let schema = entry
                .get("schema")
                .and_then(Value::as_str)
                .ok_or("schema is not a string")?;
            let instance = entry
                .get("instance")
                .and_then(Value::as_str)
                .ok_or("instance is not a string")?;
            if !schema.starts_with("schemas/") || !is_safe_path(schema) {
                return Err(format!("schema path {schema} is not inside schemas/"));
            }
            if !instance.starts_with("conformance/vectors/") || !is_safe_path(instance) {
                return Err(format!(
                    "instance path {instance} is not inside conformance/vectors/"
                ));
            }
            if !instances.insert(instance.to_owned()) {
                return Err(format!("instance {instance} is listed twice"));
            }
            if expected {
                valid_count += 1;
            } else {
                invalid_count += 1;
            }
            let bytes = source.read(instance).map_err(|error| error.to_string())?;
            let catalog = catalog.as_ref().ok_or("the schemas did not compile")?;
            let outcome = match parse_state(&bytes) {
                Ok(value) => catalog
                    .validate(&schema["schemas/".len()..], &value)
                    .map_err(|issue| issue.to_string()),
                Err(error) => Err(error.to_string()),
            };
            let actual = outcome.is_ok();
            if actual != expected {
                return Err(format!(
                    "expected {}, got {}{}",
                    if expected { "valid" } else { "invalid" },
                    if actual { "valid" } else { "invalid" },
                    outcome.err().map(|e| format!(": {e}")).unwrap_or_default()
                ));
            }
            Ok(if actual {
                "valid".into()
            } else {
                "invalid".into()
            })
        })();
        match result {
            Ok(actual) => report.record(&id, &actual, Ok(())),
            Err(message) => report.record(&id, "error", Err(message)),
        }
    }
    let vectors = source.list("conformance/vectors/").unwrap_or_else(|error| {
        problems.push(error.to_string());
        Vec::new()
    });
    for path in vectors {
        if pinned && path.ends_with(".json") && !instances.contains(&path) {
            problems.push(format!("{path} is not listed in the manifest"));
        }
    }
    report.facts.push(("valid".into(), valid_count.to_string()));
    report
        .facts
        .push(("invalid".into(), invalid_count.to_string()));
    for problem in problems {
        report.integrity(problem);
    }
    report
}
