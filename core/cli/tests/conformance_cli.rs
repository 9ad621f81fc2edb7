#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The `missionweaveprotocol-conformance` binary as a real process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use missionweaveprotocol::json::{Value, parse};

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_missionweaveprotocol-conformance"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mwp-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn protocol_root() -> PathBuf {
    match std::env::var_os("MWP_PROTOCOL_ROOT") {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/protocol"),
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
            std::fs::copy(entry.path(), &target).unwrap();
            let mut permissions = std::fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            permissions.set_readonly(false);
            std::fs::set_permissions(&target, permissions).unwrap();
        }
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn passes_all_bundles_from_any_directory() {
    let cwd = scratch("cwd");
    let output = binary().current_dir(&cwd).output().unwrap();
    assert!(output.status.success(), "{}", stdout(&output));
    let text = stdout(&output);
    let tail: Vec<&str> = text.lines().rev().take(3).collect();
    assert_eq!(
        tail,
        [
            "30/30 admission evaluations passed",
            "62/62 cryptography evaluations passed",
            "58/58 structural vectors passed"
        ]
    );
}

#[test]
fn json_output_has_counts_per_bundle() {
    let output = binary().arg("--json").output().unwrap();
    assert!(output.status.success());
    let report = parse(&output.stdout).unwrap();
    assert_eq!(report.get("ok"), Some(&Value::Bool(true)));
    for (bundle, total) in [("structural", 58), ("cryptography", 62), ("admission", 30)] {
        let passed = report
            .pointer(&format!("/bundles/{bundle}/passed"))
            .unwrap()
            .as_number()
            .unwrap()
            .as_i64();
        let count = report
            .pointer(&format!("/bundles/{bundle}/total"))
            .unwrap()
            .as_number()
            .unwrap()
            .as_i64();
        assert_eq!((passed, count), (Some(total), Some(total)), "{bundle}");
    }
}

#[test]
fn selects_one_bundle_and_reads_another_root() {
    let output = binary().args(["--bundle", "structural"]).output().unwrap();
    assert!(output.status.success());
    assert_eq!(
        stdout(&output).lines().last(),
        Some("58/58 structural vectors passed")
    );
    let root = protocol_root();
    let output = binary()
        .arg("--root")
        .arg(&root)
        .args(["--bundle=cryptography"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stdout(&output));
    assert!(stdout(&output).contains("directory"));
}

#[test]
fn a_tampered_root_fails_with_the_reasons() {
    let copy = scratch("tampered");
    copy_tree(&protocol_root(), &copy);
    let fixture = copy.join("cryptography/keys/registry-valid.json");
    let mut bytes = std::fs::read(&fixture).unwrap();
    bytes.extend_from_slice(b"\n");
    std::fs::write(&fixture, bytes).unwrap();
    let output = binary().arg("--root").arg(&copy).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("FAIL [cryptography] integrity") && text.contains("registry-valid.json"),
        "{text}"
    );
    // A vector whose verdict flips is reported by name.
    let vector = copy.join("conformance/vectors/invalid/command-missing-signature.json");
    std::fs::write(
        &vector,
        std::fs::read(copy.join("conformance/vectors/valid/command.json")).unwrap(),
    )
    .unwrap();
    let output = binary()
        .arg("--root")
        .arg(&copy)
        .args(["--bundle", "structural"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("57/58 structural vectors passed"),
        "{}",
        stdout(&output)
    );
    std::fs::remove_dir_all(&copy).unwrap();
}

#[test]
fn bad_arguments_exit_with_usage() {
    for args in [
        &["--bundle", "nope"][..],
        &["--frobnicate"],
        &["--root"],
        &["--root", "/definitely/not/here"],
    ] {
        let output = binary().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!output.stderr.is_empty());
    }
    assert!(binary().arg("--help").output().unwrap().status.success());
}
