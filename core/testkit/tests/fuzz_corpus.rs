//! Replays the committed fuzz corpus (`tests/fuzz-corpus/<target>/`) and every target's seeds
//! through the same oracles as `mwp-fuzz`: no panic, typed errors with §19 codes, no forgery,
//! round trips. A finding saved by `mwp-fuzz --save-findings` fails here until it is fixed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_testkit::fuzz::runner::{minimize, run_once};
use missionweaveprotocol_testkit::fuzz::{all_targets, corpus};

#[test]
fn every_corpus_file_and_seed_passes_its_target_oracles() {
    let root = corpus::default_root();
    let mut failures = Vec::new();
    let mut replayed = 0;
    for target in all_targets() {
        let files = corpus::load(&root, target.name()).unwrap();
        assert!(
            !files.is_empty(),
            "no corpus for target {} under {}",
            target.name(),
            root.display()
        );
        for (path, input) in files {
            // Content-addressed: a file edited by hand would otherwise shadow another input.
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(
                name,
                corpus::file_name(&input),
                "{} is not named by its hash",
                path.display()
            );
            if let Err(failure) = run_once(target.as_ref(), &input) {
                failures.push(format!("{}: {failure}", path.display()));
            }
            replayed += 1;
        }
        for seed in target.seeds() {
            if let Err(failure) = run_once(target.as_ref(), &seed) {
                failures.push(format!("{} seed: {failure}", target.name()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "oracle failures:\n{}",
        failures.join("\n")
    );
    assert!(replayed > 0);
}

/// The protocol bundle is read from MWP_PROTOCOL_ROOT, never committed: no corpus file is a
/// copy of one of its files (the seeds that are bundle files are replayed from the bundle).
#[test]
fn no_corpus_file_copies_a_protocol_bundle_file() {
    for target in all_targets() {
        for (path, input) in corpus::load(&corpus::default_root(), target.name()).unwrap() {
            assert!(
                !corpus::is_bundle_file(&input),
                "{} is a copy of a protocol bundle file: delete it",
                path.display()
            );
        }
    }
    let seed = &all_targets()[0].seeds()[0];
    assert!(corpus::is_bundle_file(seed), "the check sees bundle files");
    let dir = std::env::temp_dir().join(format!("mwp-corpus-{}", std::process::id()));
    assert!(
        corpus::save(&dir, "json", seed).is_err(),
        "save refuses a bundle file"
    );
    assert!(!dir.join("json").join(corpus::file_name(seed)).exists());
}

#[test]
fn every_corpus_directory_is_a_target() {
    let names: Vec<&str> = all_targets().iter().map(|t| t.name()).collect();
    for entry in std::fs::read_dir(corpus::default_root()).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                names.contains(&name.as_str()),
                "tests/fuzz-corpus/{name} is not a target"
            );
        }
    }
}

/// Some seed of every target reaches the deepest bucket (a verify seed is accepted, a snapshot
/// seed restores): otherwise the structure-aware mutants would start from nothing valid.
#[test]
fn every_target_has_a_seed_that_reaches_the_last_bucket() {
    for target in all_targets() {
        let last = target.buckets().len() - 1;
        let reached = target
            .seeds()
            .iter()
            .filter_map(|seed| run_once(target.as_ref(), seed).ok())
            .any(|outcome| outcome.bucket == last);
        assert!(
            reached,
            "{}: no seed reaches {}",
            target.name(),
            target.buckets()[last]
        );
    }
}

/// Negative control: the oracles do fire. A verify input whose header demands acceptance of a
/// tampered document fails, and the minimizer keeps what the predicate needs.
#[test]
fn oracles_fire_on_a_violated_expectation() {
    let verify = all_targets()
        .into_iter()
        .find(|t| t.name() == "verify")
        .unwrap();
    let seed = verify
        .seeds()
        .into_iter()
        .find(|s| s.starts_with(b"command\n"))
        .unwrap();
    let mut tampered = b"command expect=ok\n".to_vec();
    let body = String::from_utf8(seed["command\n".len()..].to_vec()).unwrap();
    tampered.extend_from_slice(body.replacen("urn:", "urn:x", 2).as_bytes());
    let failure = run_once(verify.as_ref(), &tampered).unwrap_err();
    assert!(failure.0.contains("expected one of"), "{failure}");
    // And a seed with the right expectation passes.
    let mut honest = b"command expect=ok\n".to_vec();
    honest.extend_from_slice(body.as_bytes());
    assert!(run_once(verify.as_ref(), &honest).is_ok());
    assert_eq!(
        minimize(b"xxabcxx", |c| c.windows(3).any(|w| w == b"abc")),
        b"abc"
    );
}

/// Findings in code this branch does not own (`tests/fuzz-open-findings/<target>/`, see its
/// README) are kept as reproductions: each must still fail its oracle. When the owner fixes
/// one, this test fails and the file moves into `tests/fuzz-corpus/<target>/`, where the test
/// above then keeps it passing.
#[test]
fn open_findings_still_reproduce_until_moved_into_the_corpus() {
    let root = corpus::default_root().join("../fuzz-open-findings");
    for target in all_targets() {
        for (path, input) in corpus::load(&root, target.name()).unwrap() {
            assert!(
                run_once(target.as_ref(), &input).is_err(),
                "{} passes its oracles now: move it into tests/fuzz-corpus/{}/ and drop its README entry",
                path.display(),
                target.name()
            );
        }
    }
}
