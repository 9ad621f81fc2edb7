//! The committed corpus: `tests/fuzz-corpus/<target>/<sha256 prefix>` files, replayed by the
//! tests and extended by the fuzzer (`--save-findings`, `--save-interesting`).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `tests/fuzz-corpus` of the repository.
pub fn default_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fuzz-corpus")
}

/// The file name of `input`: the first 16 hex digits of its SHA-256 (content-addressed, so the
/// same input is saved once).
pub fn file_name(input: &[u8]) -> String {
    Sha256::digest(input)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every corpus file of `target` under `root`, sorted by name, with its path.
pub fn load(root: &Path, target: &str) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let dir = root.join(target);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.is_file() {
            files.push((path.clone(), std::fs::read(&path)?));
        }
    }
    files.sort();
    Ok(files)
}

/// Whether `input` is byte for byte a file of the embedded protocol bundle. Those are seeds,
/// read from the bundle (MWP_PROTOCOL_ROOT), and must never be copied into the repository.
pub fn is_bundle_file(input: &[u8]) -> bool {
    missionweaveprotocol::bundle::embedded_files().any(|(_, bytes)| bytes == input)
}

/// Saves `input` under `root/target/`, where the replay test picks it up; returns its path.
/// A copy of a protocol bundle file is refused (`AlreadyExists`): the bundle is not committed.
pub fn save(root: &Path, target: &str, input: &[u8]) -> std::io::Result<PathBuf> {
    if is_bundle_file(input) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "a protocol bundle file: replayed from the bundle, not saved",
        ));
    }
    let dir = root.join(target);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(file_name(input));
    std::fs::write(&path, input)?;
    Ok(path)
}
