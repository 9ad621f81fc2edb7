//! The pin a bundle root carries: which protocol commit the bundle is (§22: implementations pin
//! a protocol commit) and what its manifests must then say.
//!
//! Two layouts are read, in this order:
//!
//! - `PROTOCOL_PIN.json`, the reference runtime's: `commit`, `protocolVersion`, optional
//!   `artifacts.<tree>.files` (how many `*.json` files lie under `schemas/`, `conformance/`) and
//!   a `cryptography` object (`profileId`, `manifestVersion`, `artifactDigest`,
//!   `artifactCount`, `caseCount`, `evaluationCount`) that the cryptography manifest must
//!   agree with;
//! - `PIN.json`, the protocol repository's: `commit`, `protocolVersion`.
//!
//! A root with neither names no commit; the embedded bundle is pinned at build time
//! (`protocol.pin`). Reading is strict JSON (duplicate members, `NaN` refused) and bounded by
//! the source's per-file limit.

use super::integrity::read_json;
use super::read_error::BundleReadError;
use super::source::BundleSource;
use crate::json::Value;

/// The reference runtime's pin file.
pub const REFERENCE_PIN: &str = "PROTOCOL_PIN.json";
/// The protocol repository's pin file.
pub const REPOSITORY_PIN: &str = "PIN.json";

/// What the cryptography manifest must say under a `PROTOCOL_PIN.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CryptographyPin {
    pub profile_id: String,
    pub manifest_version: i64,
    pub artifact_digest: String,
    pub artifact_count: Option<usize>,
    pub case_count: Option<usize>,
    pub evaluation_count: Option<usize>,
}

/// A bundle root's pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootPin {
    /// The file it was read from.
    pub file: &'static str,
    /// The protocol commit (40 lowercase hex digits).
    pub commit: String,
    /// `protocolVersion`, when given.
    pub protocol_version: Option<String>,
    /// `(tree, files)`: how many `*.json` files lie under `schemas/` or `conformance/`.
    pub tree_files: Vec<(String, usize)>,
    /// The cryptography manifest's pinned summary (reference layout only).
    pub cryptography: Option<CryptographyPin>,
}

fn text(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn count(value: &Value, pointer: &str) -> Option<usize> {
    value
        .pointer(pointer)
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .and_then(|n| usize::try_from(n).ok())
}

fn is_commit(text: &str) -> bool {
    text.len() == 40
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn parse(file: &'static str, value: &Value) -> Result<RootPin, String> {
    if value.as_object().is_none() {
        return Err(format!("{file} is not a JSON object"));
    }
    let commit = text(value, "/commit")
        .filter(|c| is_commit(c))
        .ok_or_else(|| format!("{file}: commit is not 40 lowercase hex digits"))?;
    let mut tree_files = Vec::new();
    for tree in ["schemas", "conformance"] {
        if value.pointer(&format!("/artifacts/{tree}")).is_some() {
            let files = count(value, &format!("/artifacts/{tree}/files"))
                .ok_or_else(|| format!("{file}: artifacts.{tree}.files is not a count"))?;
            tree_files.push((tree.to_owned(), files));
        }
    }
    let cryptography = match value.get("cryptography") {
        None => None,
        Some(pin) => Some(CryptographyPin {
            profile_id: text(pin, "/profileId")
                .ok_or_else(|| format!("{file}: cryptography.profileId is not a string"))?,
            manifest_version: pin
                .get("manifestVersion")
                .and_then(Value::as_number)
                .and_then(|n| n.as_i64())
                .ok_or_else(|| format!("{file}: cryptography.manifestVersion is not an integer"))?,
            artifact_digest: text(pin, "/artifactDigest")
                .ok_or_else(|| format!("{file}: cryptography.artifactDigest is not a string"))?,
            artifact_count: count(pin, "/artifactCount"),
            case_count: count(pin, "/caseCount"),
            evaluation_count: count(pin, "/evaluationCount"),
        }),
    };
    Ok(RootPin {
        file,
        commit,
        protocol_version: text(value, "/protocolVersion"),
        tree_files,
        cryptography,
    })
}

/// The root's pin: `Ok(None)` when it has neither pin file; an error when a pin file cannot
/// be read or is malformed, or when both name different commits.
pub fn read_root_pin(source: &dyn BundleSource) -> Result<Option<RootPin>, String> {
    let mut found = Vec::new();
    for file in [REFERENCE_PIN, REPOSITORY_PIN] {
        match source.read(file) {
            Err(BundleReadError::Missing { .. }) => {}
            Err(error) => return Err(error.to_string()),
            Ok(_) => found.push(parse(file, &read_json(source, file)?)?),
        }
    }
    if let [first, second] = found.as_slice()
        && first.commit != second.commit
    {
        return Err(format!(
            "{} names commit {} but {} names {}",
            first.file, first.commit, second.file, second.commit
        ));
    }
    Ok(found.into_iter().next())
}

/// The number of `*.json` files below `tree/` (the reference pin's `files`).
pub(crate) fn json_files(source: &dyn BundleSource, tree: &str) -> Result<usize, String> {
    source
        .list(&format!("{tree}/"))
        .map(|paths| paths.iter().filter(|p| p.ends_with(".json")).count())
        .map_err(|error| error.to_string())
}

/// Problems where the root's `*.json` trees disagree with the pin's file counts.
pub(crate) fn tree_problems(source: &dyn BundleSource, pin: &RootPin) -> Vec<String> {
    let mut problems = Vec::new();
    for (tree, files) in &pin.tree_files {
        match json_files(source, tree) {
            Ok(found) if found == *files => {}
            Ok(found) => problems.push(format!(
                "{} pins {files} JSON files under {tree}/, the root has {found}",
                pin.file
            )),
            Err(error) => problems.push(error),
        }
    }
    problems
}

/// Whether the root's pin names a commit other than the embedded one (a malformed pin counts
/// as not: the checks for this project's commit then apply, and the pin is refused where it is
/// read for a summary).
pub(crate) fn names_other_commit(source: &dyn BundleSource) -> bool {
    matches!(read_root_pin(source), Ok(Some(pin)) if pin.commit != crate::bundle::SOURCE_COMMIT)
}
