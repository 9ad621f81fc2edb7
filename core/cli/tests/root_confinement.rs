#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A bundle read from a directory stays inside it (issue 9, item 3): symlinks anywhere along a
//! path are resolved and confined to the root, an unreadable entry is not "missing", and a file
//! larger than the limit is refused by its size before it is read.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use missionweaveprotocol::bundle::{verify_admission_bundle_from, verify_cryptography_bundle_from};
use missionweaveprotocol::conformance::{
    self, BundleKind, BundleReadError, BundleSource, MAX_BUNDLE_FILE_BYTES,
};
use missionweaveprotocol::{DescribeError, ErrorClass, FieldValue, WireCode};
use missionweaveprotocol_cli::DirectoryBundle;

fn protocol_root() -> PathBuf {
    match std::env::var_os("MWP_PROTOCOL_ROOT") {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/protocol"),
    }
}

/// A scratch directory holding `root/` (a writable copy of the bundle) and `outside/`.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mwp-confine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        copy_tree(&protocol_root(), &dir.join("root"));
        Self(dir)
    }
    fn root(&self) -> PathBuf {
        self.0.join("root")
    }
    fn outside(&self) -> PathBuf {
        self.0.join("outside")
    }
    fn bundle(&self) -> DirectoryBundle {
        DirectoryBundle::open(self.root()).unwrap()
    }
    /// Moves `relative` out of the root and leaves a symlink to it in its place.
    fn move_out_and_link(&self, relative: &str) {
        let inside = self.root().join(relative);
        let outside = self.outside().join(relative.replace('/', "_"));
        std::fs::rename(&inside, &outside).unwrap();
        symlink(&outside, &inside).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

fn read_error(bundle: &DirectoryBundle, path: &str) -> BundleReadError {
    match bundle.read(path) {
        Ok(bytes) => panic!("{path} was read ({} bytes)", bytes.len()),
        Err(error) => error,
    }
}

fn outside(path: &str) -> BundleReadError {
    BundleReadError::OutsideRoot {
        path: path.to_owned(),
    }
}

#[test]
fn an_untouched_copy_passes_everything() {
    let scratch = Scratch::new("untouched");
    let bundle = scratch.bundle();
    let report = conformance::run(
        &bundle,
        &[
            BundleKind::Structural,
            BundleKind::Cryptography,
            BundleKind::Admission,
        ],
    );
    assert!(report.ok(), "{report:?}");
    assert!(verify_cryptography_bundle_from(&bundle).is_ok());
    assert!(verify_admission_bundle_from(&bundle).is_ok());
}

#[test]
fn a_symlinked_directory_mid_path_pointing_outside_is_refused() {
    let scratch = Scratch::new("mid-path");
    symlink("/etc", scratch.root().join("conformance/vectors/etc")).unwrap();
    let bundle = scratch.bundle();
    let error = read_error(&bundle, "conformance/vectors/etc/passwd");
    assert_eq!(error, outside("conformance/vectors/etc/passwd"));
    // Whether a file exists outside is not revealed: a name that does not exist there is
    // refused the same way, not reported missing.
    assert_eq!(
        read_error(&bundle, "conformance/vectors/etc/no-such-file-mwp"),
        outside("conformance/vectors/etc/no-such-file-mwp")
    );
    assert_eq!(
        error.to_string(),
        "conformance/vectors/etc/passwd resolves outside the bundle root"
    );
    assert_eq!(error.class(), ErrorClass::Bundle);
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert_eq!(error.reason(), "bundle-file-outside-root");
    assert_eq!(
        error.fields().get("path"),
        Some(&FieldValue::Text("conformance/vectors/etc/passwd".into()))
    );
    // The listing does not descend into it.
    let listed = bundle.list("conformance/vectors/").unwrap();
    assert!(listed.iter().all(|p| !p.contains("/etc/")), "{listed:?}");

    // A directory the cryptography manifest names, moved out and linked back: every artifact
    // under it is refused by name, although its bytes are the pinned ones.
    scratch.move_out_and_link("cryptography/keys");
    let problems = verify_cryptography_bundle_from(&bundle)
        .unwrap_err()
        .problems;
    assert!(
        problems.contains(
            &"artifact cryptography/keys/registry-valid.json resolves outside the bundle root"
                .to_owned()
        ),
        "{problems:?}"
    );
    assert!(verify_admission_bundle_from(&bundle).is_err());
}

#[test]
fn a_symlink_that_stays_inside_the_root_is_followed() {
    let scratch = Scratch::new("inside");
    symlink("vectors", scratch.root().join("conformance/alias")).unwrap();
    let bundle = scratch.bundle();
    assert_eq!(
        bundle.read("conformance/alias/valid/command.json").unwrap(),
        std::fs::read(
            scratch
                .root()
                .join("conformance/vectors/valid/command.json")
        )
        .unwrap()
    );
}

#[test]
fn a_symlinked_schemas_directory_is_refused() {
    let scratch = Scratch::new("schemas");
    scratch.move_out_and_link("schemas");
    let bundle = scratch.bundle();
    assert_eq!(
        read_error(&bundle, "schemas/command.schema.json"),
        outside("schemas/command.schema.json")
    );
    assert_eq!(bundle.list("schemas/").unwrap_err(), outside("schemas"));
    let report = conformance::run(&bundle, &[BundleKind::Structural]);
    assert!(!report.ok());
    let text = format!("{report:?}");
    assert!(
        text.contains("schemas resolves outside the bundle root"),
        "{text}"
    );
    let problems = verify_cryptography_bundle_from(&bundle)
        .unwrap_err()
        .problems;
    assert!(
        problems.contains(&"schemas resolves outside the bundle root".to_owned()),
        "{problems:?}"
    );
}

#[test]
fn unreadable_entries_are_not_missing() {
    // Tests run as root, where permission bits do not stop reads: the unreadable entries are a
    // FIFO, a dangling symlink and a directory where a file is expected.
    let scratch = Scratch::new("unreadable");
    let root = scratch.root();
    let fifo = "conformance/vectors/valid/command.json";
    std::fs::remove_file(root.join(fifo)).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(root.join(fifo))
        .status()
        .unwrap();
    assert!(status.success());
    let dangling = "cryptography/keys/registry-valid.json";
    std::fs::remove_file(root.join(dangling)).unwrap();
    symlink("no-such-target.json", root.join(dangling)).unwrap();
    let directory = "admission/manifest.json";
    std::fs::remove_file(root.join(directory)).unwrap();
    std::fs::create_dir(root.join(directory)).unwrap();

    let bundle = scratch.bundle();
    for (path, detail) in [
        (fifo, "not a regular file (a FIFO)"),
        (directory, "not a regular file (a directory)"),
    ] {
        let error = read_error(&bundle, path);
        assert_eq!(
            error,
            BundleReadError::Unreadable {
                path: path.into(),
                detail: detail.into()
            }
        );
        assert_eq!(error.reason(), "bundle-file-unreadable");
        assert!(!error.is_missing());
    }
    let error = read_error(&bundle, dangling);
    assert!(
        matches!(&error, BundleReadError::Unreadable { path, .. } if path == dangling),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with(&format!("{dangling} is unreadable: "))
    );
    // A path with nothing at it is missing, and only that.
    let missing = read_error(&bundle, "conformance/vectors/valid/nothing.json");
    assert!(missing.is_missing());
    assert_eq!(missing.reason(), "bundle-file-missing");
    assert_eq!(
        missing.to_string(),
        "conformance/vectors/valid/nothing.json is missing"
    );
    // The runners report the unreadable entry as such.
    let problems = verify_cryptography_bundle_from(&bundle)
        .unwrap_err()
        .problems;
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(&format!("artifact {dangling} is unreadable"))),
        "{problems:?}"
    );
    let report = format!("{:?}", conformance::run(&bundle, &[BundleKind::Structural]));
    assert!(
        report.contains(
            "conformance/vectors/valid/command.json is unreadable: not a regular file (a FIFO)"
        ),
        "{report}"
    );
}

#[test]
fn an_oversized_file_is_refused_by_its_size() {
    let scratch = Scratch::new("oversized");
    let path = "cryptography/manifest.json";
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(scratch.root().join(path))
        .unwrap();
    // Sparse: no byte of it is written, and none is read.
    file.set_len(MAX_BUNDLE_FILE_BYTES + 1).unwrap();
    let bundle = scratch.bundle();
    let error = read_error(&bundle, path);
    assert_eq!(
        error,
        BundleReadError::TooLarge {
            path: path.into(),
            size: MAX_BUNDLE_FILE_BYTES + 1,
            limit: MAX_BUNDLE_FILE_BYTES
        }
    );
    assert_eq!(error.reason(), "bundle-file-too-large");
    assert_eq!(
        error.fields().get("limit"),
        Some(&FieldValue::Integer(16 * 1024 * 1024))
    );
    let problems = verify_cryptography_bundle_from(&bundle)
        .unwrap_err()
        .problems;
    assert_eq!(
        problems[0],
        (format!(
            "{path} is too large: {} bytes, the limit is {MAX_BUNDLE_FILE_BYTES} bytes",
            MAX_BUNDLE_FILE_BYTES + 1
        ))
    );
}

#[test]
fn the_limit_is_inclusive_and_every_pinned_file_fits() {
    let scratch = Scratch::new("limit");
    let path = "cryptography/manifest.json";
    let size = std::fs::metadata(scratch.root().join(path)).unwrap().len();
    let exact = DirectoryBundle::open_with_limit(scratch.root(), size).unwrap();
    assert_eq!(exact.read(path).unwrap().len() as u64, size);
    let under = DirectoryBundle::open_with_limit(scratch.root(), size - 1).unwrap();
    assert!(matches!(
        read_error(&under, path),
        BundleReadError::TooLarge { size: s, .. } if s == size
    ));
    let largest = missionweaveprotocol::bundle::embedded_files()
        .map(|(_, bytes)| bytes.len() as u64)
        .max()
        .unwrap();
    assert!(largest * 64 < MAX_BUNDLE_FILE_BYTES, "{largest}");
}

#[test]
fn unsafe_paths_are_refused_before_any_lookup() {
    let scratch = Scratch::new("paths");
    let bundle = scratch.bundle();
    for path in [
        "",
        "../root/PIN.json",
        "/etc/passwd",
        "schemas//command.schema.json",
        "./PIN.json",
        "schemas\\command.schema.json",
        "PIN.json\0",
    ] {
        let error = read_error(&bundle, path);
        assert_eq!(error, BundleReadError::InvalidPath { path: path.into() });
        assert_eq!(error.reason(), "bundle-path-invalid");
    }
    assert!(bundle.read("PIN.json").is_ok());
}
