//! Golden vectors: derived outputs of the Rust core that every binding checks (`tests/vectors/`).
//!
//! [`generate`] computes every file in memory, deterministically (no clock, no randomness other
//! than a fixed-seed generator, no hash-map iteration order): the `mwp-write-vectors` binary
//! writes them and `core/testkit/tests/vectors.rs` regenerates them and compares byte for byte
//! with the committed files, so a change in the core that moves any output fails CI until the
//! vectors are regenerated on purpose (`scripts/write-vectors.sh`).
//!
//! Inputs taken from the pinned protocol bundle are referenced by their bundle path, never
//! copied; inputs generated here (the canonical-JSON corpus, the scenario steps) are included.
//!
//! | file | records | what |
//! | --- | --- | --- |
//! | `evaluations.jsonl` | 150 | every bundle evaluation: verdict, stage, code, reason, signing bytes, Principal, Admission Log calls, records |
//! | `canonical.jsonl` | 500 | seeded JSON texts → RFC 8785 text and hash, or the typed error |
//! | `authority.jsonl` | one per scenario | lease, budget, delegation and scheduler steps with results or typed errors |
//! | `scheduling.jsonl` | 4 | the mixed scheduler trace, the 10,000-item dispatch digest, idempotency keys, a lease document |
//! | `two-missions.jsonl` | setup, one per Command, one log per Group, digest | two concurrent Missions through five stages, a child Mission, an execution gate and an archive, replayed by every binding (`two_missions`) |
//! | `manifest.json` | – | every file's SHA-256, byte length, record count, and the vector count per area |

mod authority;
mod canonical;
mod evaluations;
mod scheduling;
pub mod two_missions;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use missionweaveprotocol::bundle::SOURCE_COMMIT;
use missionweaveprotocol::json::{Value, canonical_bytes, sha256_prefixed, write_indented};

/// Vector records are built with the FFI layer's object builder (written in RFC 8785 form on
/// disk, so member order is irrelevant).
pub use missionweaveprotocol_ffi::Obj as Rec;

/// Where the vectors live, relative to the repository root.
pub const DIR: &str = "tests/vectors";

/// Version of the vector file layout; bump when a record's shape changes.
pub const FORMAT_VERSION: u64 = 1;

/// One vector file: its name, its bytes and how many vectors of each area it holds.
#[derive(Debug, Clone)]
pub struct VectorFile {
    /// File name inside [`DIR`].
    pub name: &'static str,
    /// The exact bytes to commit.
    pub bytes: Vec<u8>,
    /// Records (lines) in the file.
    pub records: usize,
    /// Vectors per area (a scenario line holds several step vectors).
    pub areas: BTreeMap<String, usize>,
}

/// One JSON Lines file from records, each written in RFC 8785 form.
fn jsonl(name: &'static str, records: &[Value], areas: BTreeMap<String, usize>) -> VectorFile {
    let mut bytes = Vec::new();
    for record in records {
        // Records are built here from strings and safe integers: always canonicalizable.
        bytes.extend(canonical_bytes(record).unwrap_or_default());
        bytes.push(b'\n');
    }
    VectorFile {
        name,
        bytes,
        records: records.len(),
        areas,
    }
}

fn count_by(records: &[Value], member: &str) -> BTreeMap<String, usize> {
    let mut areas = BTreeMap::new();
    for record in records {
        let area = record.get(member).and_then(Value::as_str).unwrap_or("?");
        *areas.entry(area.to_owned()).or_insert(0) += 1;
    }
    areas
}

/// Every vector file, then `manifest.json` last.
pub fn generate() -> Vec<VectorFile> {
    let evaluations = evaluations::records();
    let canonical = canonical::records();
    let (authority, authority_areas) = authority::records();
    let scheduling = scheduling::records();
    let two_missions = two_missions::records();
    let mut files = vec![
        jsonl(
            "evaluations.jsonl",
            &evaluations,
            count_by(&evaluations, "area"),
        ),
        jsonl("canonical.jsonl", &canonical, count_by(&canonical, "area")),
        jsonl("authority.jsonl", &authority, authority_areas),
        jsonl(
            "scheduling.jsonl",
            &scheduling,
            count_by(&scheduling, "area"),
        ),
        jsonl(
            "two-missions.jsonl",
            &two_missions,
            // No per-area count: the per-area checkers (test_vectors.py, vectors-check.mjs)
            // do not replay it; the two-missions tests of each binding do, whole.
            BTreeMap::new(),
        ),
    ];
    let manifest = manifest(&files);
    files.push(manifest);
    files
}

fn manifest(files: &[VectorFile]) -> VectorFile {
    let mut areas: BTreeMap<String, usize> = BTreeMap::new();
    let entries = files
        .iter()
        .map(|f| {
            for (area, n) in &f.areas {
                *areas.entry(area.clone()).or_insert(0) += n;
            }
            Rec::new()
                .str("path", f.name)
                .str("sha256", sha256_prefixed(&f.bytes))
                .num("bytes", f.bytes.len() as u64)
                .num("records", f.records as u64)
                .value("areas", counts(&f.areas))
                .build()
        })
        .collect();
    let value = Rec::new()
        .num("formatVersion", FORMAT_VERSION)
        .str("generator", "mwp-write-vectors (core/testkit)")
        .str("protocolSourceCommit", SOURCE_COMMIT)
        .value("areas", counts(&areas))
        .value("files", Value::Array(entries))
        .build();
    let mut bytes = Vec::new();
    write_indented(&value, 2, &mut bytes);
    bytes.push(b'\n');
    VectorFile {
        name: "manifest.json",
        bytes,
        records: 1,
        areas: BTreeMap::new(),
    }
}

fn counts(areas: &BTreeMap<String, usize>) -> Value {
    areas
        .iter()
        .fold(Rec::new(), |r, (area, n)| r.num(area, *n as u64))
        .build()
}

/// The repository's vector directory: `$MWP_VECTORS_DIR`, or `tests/vectors` under the
/// workspace root this crate was built from.
pub fn default_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MWP_VECTORS_DIR") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root).join(DIR)
}

/// Files under `dir` whose bytes differ from `files` (missing, changed), and files in `dir`
/// that the writer does not produce (stale).
pub fn drift(dir: &Path, files: &[VectorFile]) -> Vec<String> {
    let mut problems = Vec::new();
    for file in files {
        match std::fs::read(dir.join(file.name)) {
            Ok(bytes) if bytes == file.bytes => {}
            Ok(bytes) => problems.push(format!(
                "{}: committed {} bytes ({}), regenerated {} bytes ({})",
                file.name,
                bytes.len(),
                sha256_prefixed(&bytes),
                file.bytes.len(),
                sha256_prefixed(&file.bytes)
            )),
            Err(error) => problems.push(format!("{}: {error}", file.name)),
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut stale: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| !files.iter().any(|f| f.name == name))
            .collect();
        stale.sort();
        problems.extend(
            stale
                .into_iter()
                .map(|n| format!("{n}: not produced by the writer")),
        );
    }
    problems
}

/// Writes `files` into `dir` (created if missing) and removes files the writer no longer produces.
pub fn write(dir: &Path, files: &[VectorFile]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !files.iter().any(|f| f.name == name) && entry.path().is_file() {
            std::fs::remove_file(entry.path())?;
        }
    }
    for file in files {
        std::fs::write(dir.join(file.name), &file.bytes)?;
    }
    Ok(())
}
