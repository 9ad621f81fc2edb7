//! Target `manifest`: the conformance runners (the CLI `missionweaveprotocol-conformance`) reading
//! a hostile bundle manifest. The input is a header line naming the manifest
//! (`conformance/manifest.json`, `cryptography/manifest.json` or `admission/manifest.json`),
//! then its bytes; every other file comes from the embedded bundle.
//!
//! Oracles: no panic; the report is consistent (`passed <= total`, one outcome per evaluation)
//! and serializes; a manifest that is not strict JSON never yields a passing report; the
//! unmodified manifest passes.

use std::borrow::Cow;

use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::conformance::{
    BundleReadError, BundleReport, BundleSource, EmbeddedBundle, run_admission_bundle,
    run_cryptography_bundle, run_structural_bundle,
};
use missionweaveprotocol::json::{canonical_bytes, parse_state};

use super::super::{OracleFailure, Outcome, Rng, Target, Verdict, mutate_bytes};
use super::mutate_json_or_bytes;

const MANIFESTS: &[&str] = &[
    "conformance/manifest.json",
    "cryptography/manifest.json",
    "admission/manifest.json",
];

/// The manifest target.
#[derive(Debug, Clone, Copy, Default)]
pub struct ManifestTarget;

/// The embedded bundle with one manifest replaced.
struct Overlay<'a> {
    path: &'a str,
    bytes: &'a [u8],
}

impl BundleSource for Overlay<'_> {
    fn read(&self, path: &str) -> Result<Cow<'_, [u8]>, BundleReadError> {
        if path == self.path {
            return Ok(Cow::Borrowed(self.bytes));
        }
        EmbeddedBundle.read(path)
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, BundleReadError> {
        EmbeddedBundle.list(prefix)
    }
    fn describe(&self) -> String {
        format!("embedded bundle with a fuzzed {}", self.path)
    }
}

fn split(input: &[u8]) -> Option<(&'static str, &[u8])> {
    let newline = input.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&input[..newline]).ok()?;
    let path = MANIFESTS.iter().find(|m| **m == header)?;
    Some((path, &input[newline + 1..]))
}

fn join(path: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = path.as_bytes().to_vec();
    out.push(b'\n');
    out.extend_from_slice(bytes);
    out
}

impl Target for ManifestTarget {
    fn name(&self) -> &'static str {
        "manifest"
    }

    fn buckets(&self) -> &'static [&'static str] {
        &["1-unreadable", "2-evaluations-failed", "passed"]
    }

    fn seeds(&self) -> Vec<Vec<u8>> {
        MANIFESTS
            .iter()
            .filter_map(|path| embedded_file(path).map(|bytes| join(path, bytes)))
            .collect()
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        match split(base) {
            Some((path, bytes)) => join(path, &mutate_json_or_bytes(rng, bytes, 85)),
            None => mutate_bytes::mutate(rng, base),
        }
    }

    fn memory_bounded(&self) -> bool {
        false
    }

    fn execute(&self, input: &[u8]) -> Verdict {
        let Some((path, bytes)) = split(input) else {
            return Ok(Outcome {
                bucket: 0,
                signal: "no-header".into(),
            });
        };
        let source = Overlay { path, bytes };
        let report: BundleReport = match path {
            "conformance/manifest.json" => run_structural_bundle(&source),
            "cryptography/manifest.json" => run_cryptography_bundle(&source),
            _ => run_admission_bundle(&source),
        };
        if report.passed > report.total || report.outcomes.len() != report.total {
            return Err(OracleFailure(format!(
                "inconsistent report: {} passed of {} with {} outcomes",
                report.passed,
                report.total,
                report.outcomes.len()
            )));
        }
        canonical_bytes(&report.to_value())
            .map_err(|e| OracleFailure(format!("the report does not serialize: {e}")))?;
        if report.ok() && parse_state(bytes).is_err() {
            return Err(OracleFailure(
                "a manifest that is not strict JSON passed".into(),
            ));
        }
        if embedded_file(path) == Some(bytes) && !report.ok() {
            return Err(OracleFailure(
                "the unmodified manifest does not pass".into(),
            ));
        }
        let bucket = if report.ok() {
            2
        } else {
            usize::from(report.total > 0)
        };
        let integrity = report.failures.iter().any(|f| f.id == "integrity");
        let failed = report.failures.len().min(3);
        Ok(Outcome {
            bucket,
            signal: format!("{path}:{bucket}:{integrity}:{failed}"),
        })
    }
}
