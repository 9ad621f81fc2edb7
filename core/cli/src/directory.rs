//! A protocol bundle read from a directory (`--root DIR`).

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

use missionweaveprotocol::conformance::BundleSource;

/// A protocol bundle root on disk. Symlinks and non-regular files are treated as absent.
#[derive(Debug, Clone)]
pub struct DirectoryBundle {
    root: PathBuf,
}

impl DirectoryBundle {
    /// Opens a bundle root directory.
    pub fn open(root: impl AsRef<Path>) -> Result<Self, String> {
        let root = root.as_ref();
        if !root.is_dir() {
            return Err(format!("{} is not a directory", root.display()));
        }
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    fn walk(&self, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                self.walk(&path, out);
            } else if kind.is_file()
                && let Ok(relative) = path.strip_prefix(&self.root)
            {
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
}

impl BundleSource for DirectoryBundle {
    fn read(&self, path: &str) -> Option<Cow<'_, [u8]>> {
        if path
            .split('/')
            .any(|segment| segment == ".." || segment.is_empty())
        {
            return None;
        }
        let full = self.root.join(path);
        let metadata = fs::symlink_metadata(&full).ok()?;
        if !metadata.file_type().is_file() {
            return None;
        }
        fs::read(full).ok().map(Cow::Owned)
    }

    fn list(&self, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(&self.root.join(prefix.trim_end_matches('/')), &mut out);
        out.sort();
        out
    }

    fn describe(&self) -> String {
        format!("directory {}", self.root.display())
    }
}
