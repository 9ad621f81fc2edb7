//! [`LocalArtifactStore`]: Artifact bytes on a local filesystem, keyed by SHA-256 (§13.1
//! "Binary content MUST be stored outside the Group Event log"), with the signed manifest of
//! [`content`](missionweaveprotocol_engine::artifact::content). The one implementation every binding wraps; std::fs only, not on wasm32.
//!
//! Layout: `<root>/<hex[:2]>/<hex[2:]>` (the reference's). A put writes a temporary file in the
//! object's directory, fsyncs it, then links it into place without replacing anything (a hard
//! link fails if the name exists; where links are unsupported, a rename), and fsyncs the
//! directory: a reader never sees a partial object. An object already there with the same
//! bytes is kept (idempotent put); with other bytes it is [`ArtifactError::Conflict`] and
//! nothing is overwritten. A get re-hashes the bytes and checks their size against the
//! manifest.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::signed_documents::SignedDocument;

use missionweaveprotocol_engine::artifact::content::{
    check_content, content_hash, manifest_claims, object_path, sign_manifest,
};
use missionweaveprotocol_engine::artifact::error::ArtifactError;

/// Distinguishes concurrent temporary files of one process.
static TEMPORARY: AtomicU64 = AtomicU64::new(0);

/// A content-addressed store under one root directory.
#[derive(Debug, Clone)]
pub struct LocalArtifactStore {
    root: PathBuf,
}

fn io(operation: &'static str, path: &Path, error: &std::io::Error) -> ArtifactError {
    ArtifactError::Io {
        operation,
        path: path.display().to_string(),
        detail: error.to_string(),
    }
}

impl LocalArtifactStore {
    /// A store under `root` (created on the first put).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the bytes of `content_hash` live: `<root>/<hex[:2]>/<hex[2:]>`.
    pub fn path_of(&self, content_hash: &str) -> Result<PathBuf, ArtifactError> {
        let (directory, file) = object_path(content_hash)?;
        Ok(self.root.join(directory).join(file))
    }

    /// Signs the manifest of `content` (see [`unsigned_manifest`](missionweaveprotocol_engine::artifact::content::unsigned_manifest) for
    /// `metadata`) with the producer's `signer`, then stores the bytes. The manifest is signed
    /// first, so refused metadata stores nothing.
    pub fn put(
        &self,
        content: &[u8],
        metadata: &Value,
        signer: &dyn Signer,
    ) -> Result<SignedDocument, ArtifactError> {
        let signed = sign_manifest(content, metadata, signer)?;
        self.put_bytes(content)?;
        Ok(signed)
    }

    /// Stores `content` under its hash and returns the hash.
    pub fn put_bytes(&self, content: &[u8]) -> Result<String, ArtifactError> {
        let hash = content_hash(content);
        let path = self.path_of(&hash)?;
        let directory = path.parent().unwrap_or(&self.root).to_path_buf();
        if self.matches_existing(&path, &hash, content)? {
            return Ok(hash);
        }
        fs::create_dir_all(&directory).map_err(|e| io("create", &directory, &e))?;
        let temporary = directory.join(format!(
            ".{}.tmp-{}-{}",
            path.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("object"),
            std::process::id(),
            TEMPORARY.fetch_add(1, Ordering::Relaxed)
        ));
        let written = write_synced(&temporary, content).and_then(|()| {
            match fs::hard_link(&temporary, &path) {
                Ok(()) => Ok(false),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(true),
                // No hard links here (some network and FAT filesystems): a rename, which may
                // replace an object written meanwhile by another put of the same bytes.
                Err(_) => fs::rename(&temporary, &path)
                    .map(|()| false)
                    .map_err(|e| io("rename", &path, &e)),
            }
        });
        // The temporary name is gone after a rename; otherwise remove it.
        let _ = fs::remove_file(&temporary);
        let raced = written?;
        if raced && !self.matches_existing(&path, &hash, content)? {
            return Err(ArtifactError::Conflict { content_hash: hash });
        }
        sync_directory(&directory)?;
        Ok(hash)
    }

    /// Whether `path` already holds exactly `content`: `Ok(false)` when absent,
    /// [`ArtifactError::Conflict`] when it holds other bytes.
    fn matches_existing(
        &self,
        path: &Path,
        hash: &str,
        content: &[u8],
    ) -> Result<bool, ArtifactError> {
        match fs::read(path) {
            Ok(existing) if existing == content => Ok(true),
            Ok(_) => Err(ArtifactError::Conflict {
                content_hash: hash.to_owned(),
            }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io("read", path, &e)),
        }
    }

    /// The bytes of a manifest's content, re-hashed and size-checked against it
    /// (`contentHash`, `sizeBytes`). Reads at most `sizeBytes + 1` bytes, so an oversized
    /// object costs no more than the manifest allows.
    pub fn get(&self, manifest: &Value) -> Result<Vec<u8>, ArtifactError> {
        let (hash, size) = manifest_claims(manifest)?;
        let path = self.path_of(hash)?;
        let file = File::open(&path).map_err(|e| match e.kind() {
            ErrorKind::NotFound => ArtifactError::Missing {
                content_hash: hash.to_owned(),
            },
            _ => io("open", &path, &e),
        })?;
        let stored = file.metadata().map_err(|e| io("stat", &path, &e))?.len();
        if stored != size {
            return Err(ArtifactError::SizeMismatch {
                content_hash: hash.to_owned(),
                expected: size,
                actual: stored,
            });
        }
        let mut content = Vec::new();
        file.take(size.saturating_add(1))
            .read_to_end(&mut content)
            .map_err(|e| io("read", &path, &e))?;
        check_content(manifest, &content)?;
        Ok(content)
    }
}

fn write_synced(path: &Path, content: &[u8]) -> Result<(), ArtifactError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io("create", path, &e))?;
    file.write_all(content)
        .and_then(|()| file.sync_all())
        .map_err(|e| io("write", path, &e))
}

/// Makes the new directory entry durable (POSIX: fsync of the directory). Not possible on
/// Windows, where opening a directory as a file fails; the rename is durable there.
fn sync_directory(directory: &Path) -> Result<(), ArtifactError> {
    #[cfg(unix)]
    {
        File::open(directory)
            .and_then(|d| d.sync_all())
            .map_err(|e| io("sync", directory, &e))?;
    }
    #[cfg(not(unix))]
    let _ = directory;
    Ok(())
}
