#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The `missionweaveprotocol-conformance` binary as a real process.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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
        &["--bundle"],
        &["--json=yes"],
        &["positional"],
    ] {
        let output = binary().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = String::from_utf8(output.stderr).unwrap();
        assert!(error.starts_with("error: "), "{error}");
        assert!(
            error.contains("usage: missionweaveprotocol-conformance"),
            "{error}"
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn help_lists_every_option_and_exit_status() {
    for flag in ["--help", "-h"] {
        let output = binary().arg(flag).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert!(output.stderr.is_empty());
        let help = stdout(&output);
        for needle in [
            "--root DIR",
            "--bundle NAME",
            "structural, cryptography, admission, or all",
            "or behavior",
            "--json",
            "--version",
            "0  every selected evaluation passed",
            "1  some evaluation failed",
            "2  usage error",
            "3  a selected bundle is missing or empty",
            "4  the report could not be written",
            missionweaveprotocol::bundle::SOURCE_COMMIT,
        ] {
            assert!(help.contains(needle), "{needle:?} not in:\n{help}");
        }
    }
}

#[test]
fn version_names_the_crate_and_the_pinned_commit() {
    for flag in ["--version", "-V"] {
        let output = binary().arg(flag).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(
            stdout(&output),
            format!(
                "missionweaveprotocol-conformance {} (MissionWeaveProtocol 0.1, protocol commit {})\n",
                env!("CARGO_PKG_VERSION"),
                missionweaveprotocol::bundle::SOURCE_COMMIT
            )
        );
    }
}

fn assert_quiet(stderr: &[u8]) {
    let text = String::from_utf8_lossy(stderr);
    assert!(!text.contains("panicked"), "{text}");
    assert!(text.is_empty(), "{text}");
}

#[test]
fn a_reader_that_closes_after_one_line_ends_output_quietly() {
    let mut child = binary()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(first.starts_with("bundle: embedded bundle at "), "{first}");
    // The header is written before the bundles run, so the summaries meet a closed pipe.
    drop(reader);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_quiet(&output.stderr);
}

#[test]
fn a_pipe_without_a_reader_is_a_quiet_exit_with_the_verdict() {
    for (args, code) in [
        (&["--bundle", "structural"][..], 0),
        (&["--json", "--bundle", "admission"], 0),
        (&["--help"], 0),
        (&["--version"], 0),
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = binary()
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(code), "{args:?}");
        assert_quiet(&output.stderr);
    }
    // The verdict survives a closed pipe: a failing root still exits 1.
    let copy = scratch("pipe-failing");
    copy_tree(&protocol_root(), &copy);
    std::fs::write(
        copy.join("conformance/vectors/invalid/command-missing-signature.json"),
        std::fs::read(copy.join("conformance/vectors/valid/command.json")).unwrap(),
    )
    .unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = binary()
        .arg("--root")
        .arg(&copy)
        .args(["--bundle", "structural"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_quiet(&output.stderr);
    std::fs::remove_dir_all(&copy).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn an_output_that_cannot_be_written_is_exit_4() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = binary()
        .args(["--bundle", "structural"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(4));
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(
        error.starts_with("error: cannot write the report: "),
        "{error}"
    );
}

#[test]
fn a_root_without_the_bundle_is_exit_3_naming_what_is_missing() {
    let empty = scratch("no-bundle");
    for json in [false, true] {
        let mut command = binary();
        command.arg("--root").arg(&empty);
        if json {
            command.arg("--json");
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(3));
        assert!(output.stdout.is_empty(), "{}", stdout(&output));
        let error = String::from_utf8(output.stderr).unwrap();
        for (bundle, manifest) in [
            ("structural", "conformance/manifest.json"),
            ("cryptography", "cryptography/manifest.json"),
            ("admission", "admission/manifest.json"),
        ] {
            let line = format!(
                "error: the {bundle} bundle is missing: no {manifest} in directory {}",
                empty.display()
            );
            assert!(
                error.lines().any(|l| l == line),
                "{line:?} not in:\n{error}"
            );
        }
    }
    let output = binary()
        .args(["--root", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: bundle root /definitely/not/here is not a directory\n"
    );
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn only_the_selected_bundles_must_be_present() {
    let copy = scratch("partial");
    copy_tree(&protocol_root(), &copy);
    std::fs::remove_dir_all(copy.join("admission")).unwrap();
    let output = binary()
        .arg("--root")
        .arg(&copy)
        .args(["--bundle", "cryptography"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let output = binary().arg("--root").arg(&copy).output().unwrap();
    assert_eq!(output.status.code(), Some(3));
    let error = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        error,
        format!(
            "error: the admission bundle is missing: no admission/manifest.json in directory {}\n",
            copy.display()
        )
    );
    std::fs::remove_dir_all(&copy).unwrap();
}

#[test]
fn an_empty_manifest_is_exit_3() {
    let copy = scratch("empty-manifest");
    copy_tree(&protocol_root(), &copy);
    std::fs::write(copy.join("conformance/manifest.json"), "[]").unwrap();
    let output = binary()
        .arg("--root")
        .arg(&copy)
        .args(["--bundle", "structural"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    // The report still says why (the pinned count), and stderr names the empty bundle.
    let text = stdout(&output);
    assert!(text.contains("expected 58 vectors, found 0"), "{text}");
    assert_eq!(text.lines().last(), Some("0/0 structural vectors passed"));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: the structural bundle in directory {} is empty: no evaluation could run from conformance/manifest.json\n",
            copy.display()
        )
    );
    // The same root with a manifest that is not JSON is just as unusable.
    std::fs::write(copy.join("cryptography/manifest.json"), "{").unwrap();
    let output = binary()
        .arg("--root")
        .arg(&copy)
        .args(["--bundle", "cryptography", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let report = parse(&output.stdout).unwrap();
    assert_eq!(report.get("ok"), Some(&Value::Bool(false)));
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("the cryptography bundle in directory")
    );
    std::fs::remove_dir_all(&copy).unwrap();
}

#[cfg(unix)]
#[test]
fn a_symlinked_directory_mid_path_is_refused_and_nothing_outside_is_echoed() {
    // Issue 9, item 3: with `conformance/vectors/etc -> /etc` and a manifest naming
    // `conformance/vectors/etc/passwd`, the runner opened /etc/passwd.
    let copy = scratch("mid-path-symlink");
    copy_tree(&protocol_root(), &copy);
    std::os::unix::fs::symlink("/etc", copy.join("conformance/vectors/etc")).unwrap();
    let manifest = copy.join("conformance/manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let entry = r#"{"name": "outside", "schema": "schemas/command.schema.json", "instance": "conformance/vectors/etc/passwd", "valid": false},"#;
    std::fs::write(&manifest, text.replacen('[', &format!("[{entry}"), 1)).unwrap();
    for json in [false, true] {
        let mut command = binary();
        command
            .arg("--root")
            .arg(&copy)
            .args(["--bundle", "structural"]);
        if json {
            command.arg("--json");
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(1));
        let text = stdout(&output);
        assert!(
            text.contains("conformance/vectors/etc/passwd resolves outside the bundle root"),
            "{text}"
        );
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        let first_line = passwd.lines().next().unwrap_or("root:x:0:0");
        assert!(!text.contains(first_line), "{text}");
        assert!(!text.contains("unexpected-character"), "{text}");
    }
    // Without the manifest entry the symlink is simply not part of the bundle.
    std::fs::write(&manifest, text).unwrap();
    let output = binary()
        .arg("--root")
        .arg(&copy)
        .args(["--bundle", "structural"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    std::fs::remove_dir_all(&copy).unwrap();
}

#[cfg(unix)]
#[test]
fn a_manifest_outside_the_root_is_exit_3_and_not_called_missing() {
    let copy = scratch("manifest-outside");
    copy_tree(&protocol_root(), &copy);
    let outside = scratch("manifest-outside-target");
    let manifest = copy.join("conformance/manifest.json");
    std::fs::rename(&manifest, outside.join("manifest.json")).unwrap();
    std::os::unix::fs::symlink(outside.join("manifest.json"), &manifest).unwrap();
    let output = binary()
        .arg("--root")
        .arg(&copy)
        .args(["--bundle", "structural"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: the structural bundle cannot be read: conformance/manifest.json resolves \
             outside the bundle root in directory {}\n",
            copy.display()
        )
    );
    std::fs::remove_dir_all(&copy).unwrap();
    std::fs::remove_dir_all(&outside).unwrap();
}
