//! A protocol bundle read from a directory (`--root DIR`), confined to that directory.
//!
//! Confinement is by resolution: the root is canonicalized once when it is opened, and every
//! file is canonicalized (all symlinks along the path resolved) and must lie under the
//! canonical root before it is opened. A symlink that stays inside the root is followed; one
//! anywhere along the path that leads outside (`conformance/vectors/etc -> /etc`, a symlinked
//! `schemas/`) is refused with [`BundleReadError::OutsideRoot`].
//!
//! TOCTOU caveat: the check and the open are two steps. A process that can write inside the
//! root *while* the run reads it can swap a checked directory for a symlink between the two and
//! redirect one read. The guarantee therefore covers a hostile tree that is not modified during
//! the run (a downloaded or unpacked bundle); opening component by component with
//! `openat(O_NOFOLLOW)` would close the race but needs platform calls the crate does not use.
//! The opened file is re-checked through its handle (regular file, size within the limit), so
//! a swap can never make the reader take an oversized file or a directory.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use missionweaveprotocol::conformance::{BundleReadError, BundleSource, MAX_BUNDLE_FILE_BYTES};

/// A protocol bundle root on disk. See the module documentation for the confinement rule.
#[derive(Debug, Clone)]
pub struct DirectoryBundle {
    /// The canonical root (no symlinks, absolute).
    root: PathBuf,
    /// The root as given, for messages.
    given: PathBuf,
    /// The largest file read, in bytes.
    limit: u64,
}

impl DirectoryBundle {
    /// Opens a bundle root directory, reading files of at most [`MAX_BUNDLE_FILE_BYTES`].
    pub fn open(root: impl AsRef<Path>) -> Result<Self, String> {
        Self::open_with_limit(root, MAX_BUNDLE_FILE_BYTES)
    }

    /// Opens a bundle root directory with another per-file size limit.
    pub fn open_with_limit(root: impl AsRef<Path>, limit: u64) -> Result<Self, String> {
        let root = root.as_ref();
        if !root.is_dir() {
            return Err(format!("{} is not a directory", root.display()));
        }
        let canonical = fs::canonicalize(root)
            .map_err(|error| format!("{} cannot be resolved: {error}", root.display()))?;
        Ok(Self {
            root: canonical,
            given: root.to_path_buf(),
            limit,
        })
    }

    /// Every regular file below the root, sorted. Symlinked entries are neither listed nor
    /// descended into, so a symlink loop or a link leading outside is never walked.
    pub fn files(&self) -> Vec<String> {
        let mut out = Vec::new();
        Self::walk(&self.root, "", &mut out);
        out.sort();
        out
    }

    /// Refuses paths that are not plain relative `/`-separated paths.
    fn checked(path: &str) -> Result<&str, BundleReadError> {
        let plain = !path.is_empty()
            && !path.contains(['\\', '\0'])
            && path
                .split('/')
                .all(|segment| !segment.is_empty() && segment != "." && segment != "..");
        if plain {
            Ok(path)
        } else {
            Err(BundleReadError::InvalidPath {
                path: path.to_owned(),
            })
        }
    }

    /// The canonical location of `path`, confined to the root.
    fn resolve(&self, path: &str) -> Result<PathBuf, BundleReadError> {
        let full = self.root.join(Self::checked(path)?);
        match fs::canonicalize(&full) {
            Ok(resolved) if resolved.starts_with(&self.root) => Ok(resolved),
            Ok(_) => Err(BundleReadError::OutsideRoot {
                path: path.to_owned(),
            }),
            Err(error) => Err(self.unresolvable(path, &full, &error)),
        }
    }

    /// Why `full` did not resolve: outside the root if its deepest existing ancestor is (so the
    /// answer never tells whether a file exists outside the root), missing if nothing is
    /// there, unreadable if an entry exists (a dangling symlink, a permission error).
    fn unresolvable(&self, path: &str, full: &Path, error: &io::Error) -> BundleReadError {
        let outside = full
            .ancestors()
            .skip(1)
            .find_map(|ancestor| fs::canonicalize(ancestor).ok())
            .is_some_and(|ancestor| !ancestor.starts_with(&self.root));
        if outside {
            return BundleReadError::OutsideRoot {
                path: path.to_owned(),
            };
        }
        if error.kind() == io::ErrorKind::NotFound && fs::symlink_metadata(full).is_err() {
            return BundleReadError::Missing {
                path: path.to_owned(),
            };
        }
        BundleReadError::Unreadable {
            path: path.to_owned(),
            detail: error.to_string(),
        }
    }

    /// Refuses anything but a regular file within the size limit.
    fn check_metadata(&self, path: &str, metadata: &fs::Metadata) -> Result<(), BundleReadError> {
        if !metadata.is_file() {
            return Err(BundleReadError::Unreadable {
                path: path.to_owned(),
                detail: format!("not a regular file ({})", describe_kind(metadata)),
            });
        }
        if metadata.len() > self.limit {
            return Err(BundleReadError::TooLarge {
                path: path.to_owned(),
                size: metadata.len(),
                limit: self.limit,
            });
        }
        Ok(())
    }

    /// Lists regular files below `dir`, named `relative/...` (the path the caller asked for,
    /// even when `dir` was reached through a symlink that stays inside the root).
    fn walk(dir: &Path, relative: &str, out: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            // `file_type` does not follow symlinks: a symlinked entry is never descended into
            // nor listed (a manifest may still name it; `read` then confines it).
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let file_name = entry.file_name();
            let file_name = file_name.to_string_lossy();
            let name = if relative.is_empty() {
                file_name.into_owned()
            } else {
                format!("{relative}/{file_name}")
            };
            if kind.is_dir() {
                Self::walk(&entry.path(), &name, out);
            } else if kind.is_file() {
                out.push(name);
            }
        }
    }
}

fn describe_kind(metadata: &fs::Metadata) -> &'static str {
    if metadata.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = metadata.file_type();
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    "a special file"
}

impl BundleSource for DirectoryBundle {
    fn read(&self, path: &str) -> Result<Cow<'_, [u8]>, BundleReadError> {
        let resolved = self.resolve(path)?;
        let unreadable = |error: io::Error| BundleReadError::Unreadable {
            path: path.to_owned(),
            detail: error.to_string(),
        };
        // Checked before opening: opening a FIFO for reading would block.
        self.check_metadata(path, &fs::metadata(&resolved).map_err(unreadable)?)?;
        let file = File::open(&resolved).map_err(unreadable)?;
        let metadata = file.metadata().map_err(unreadable)?;
        self.check_metadata(path, &metadata)?;
        // Never more than the limit plus one byte, even if the file grows after the check.
        let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
        file.take(self.limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() as u64 > self.limit {
            return Err(BundleReadError::TooLarge {
                path: path.to_owned(),
                size: bytes.len() as u64,
                limit: self.limit,
            });
        }
        Ok(Cow::Owned(bytes))
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, BundleReadError> {
        let relative = prefix.trim_end_matches('/');
        let mut out = Vec::new();
        match self.resolve(relative) {
            Ok(dir) => Self::walk(&dir, relative, &mut out),
            // An absent directory lists nothing; the files a manifest names are then missing.
            Err(error) if error.is_missing() => {}
            Err(error) => return Err(error),
        }
        out.sort();
        Ok(out)
    }

    fn describe(&self) -> String {
        format!("directory {}", self.given.display())
    }
}
