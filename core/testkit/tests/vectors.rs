//! The drift check: the committed `tests/vectors/` files equal, byte for byte, what the writer
//! produces from the current core. A change that moves any output fails here until the vectors
//! are regenerated on purpose (`scripts/write-vectors.sh`) and the diff reviewed.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use missionweaveprotocol::json::{Value, canonical_bytes, parse, sha256_prefixed};
use missionweaveprotocol_testkit::vectors::{default_dir, drift, generate, write};

fn lines(name: &str) -> Vec<Value> {
    let file = generate().into_iter().find(|f| f.name == name).unwrap();
    file.bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| parse(l).expect("each line is strict JSON"))
        .collect()
}

fn str_at<'v>(v: &'v Value, pointer: &str) -> Option<&'v str> {
    v.pointer(pointer).and_then(Value::as_str)
}

#[test]
fn committed_vectors_equal_a_fresh_regeneration() {
    let problems = drift(&default_dir(), &generate());
    assert!(
        problems.is_empty(),
        "tests/vectors drifted from the core (run scripts/write-vectors.sh and review the diff):\n{}",
        problems.join("\n")
    );
}

#[test]
fn drift_is_detected_byte_for_byte() {
    let dir = std::env::temp_dir().join(format!("mwp-vectors-{}", std::process::id()));
    let files = generate();
    write(&dir, &files).unwrap();
    assert!(drift(&dir, &files).is_empty());
    // One changed byte, a missing file and a stray file are each reported.
    let path = dir.join("canonical.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    std::fs::remove_file(dir.join("scheduling.jsonl")).unwrap();
    std::fs::write(dir.join("stray.json"), b"{}").unwrap();
    let problems = drift(&dir, &files);
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].starts_with("canonical.jsonl: committed"));
    assert!(problems[1].starts_with("scheduling.jsonl: "));
    assert!(problems[2].starts_with("stray.json: not produced"));
    // Writing again repairs everything and removes the stray file.
    write(&dir, &files).unwrap();
    assert!(drift(&dir, &files).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn generation_is_deterministic_and_small() {
    let a = generate();
    let b = generate();
    let total: usize = a.iter().map(|f| f.bytes.len()).sum();
    assert!(total < 5 << 20, "vectors are {total} bytes");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.bytes, y.bytes, "{} differs between two runs", x.name);
    }
}

#[test]
fn manifest_lists_every_file_with_hash_and_counts() {
    let files = generate();
    let manifest = parse(&files.last().unwrap().bytes).unwrap();
    let listed = manifest.get("files").and_then(Value::as_array).unwrap();
    assert_eq!(listed.len(), files.len() - 1);
    for (entry, file) in listed.iter().zip(&files) {
        assert_eq!(str_at(entry, "/path"), Some(file.name));
        assert_eq!(
            str_at(entry, "/sha256"),
            Some(sha256_prefixed(&file.bytes).as_str())
        );
    }
    let area = |name: &str| {
        manifest
            .pointer(&format!("/areas/{name}"))
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
    };
    assert_eq!(area("structural"), Some(58));
    assert_eq!(area("cryptography"), Some(62));
    assert_eq!(area("admission"), Some(30));
    assert_eq!(area("canonical"), Some(500));
    assert_eq!(area("scheduling"), Some(4));
    for name in ["lease", "budget", "delegation", "retry", "scheduler"] {
        assert!(area(name).is_some_and(|n| n >= 20), "{name}");
    }
}

#[test]
fn evaluations_agree_with_the_bundle_expectations() {
    let records = lines("evaluations.jsonl");
    assert_eq!(records.len(), 150);
    let verdicts = |v: &str| {
        records
            .iter()
            .filter(|r| str_at(r, "/verdict") == Some(v))
            .count()
    };
    assert_eq!(
        (
            verdicts("valid"),
            verdicts("invalid"),
            verdicts("complete"),
            verdicts("rejected")
        ),
        (27, 31, 24, 68)
    );
    // Every rejection carries a wire code, a stage and a reason slug.
    for r in &records {
        if str_at(r, "/verdict") == Some("rejected") {
            assert!(str_at(r, "/code").is_some() && str_at(r, "/stage").is_some());
            assert!(str_at(r, "/reason").is_some(), "{:?}", str_at(r, "/id"));
        }
    }
    // Admission: some evaluations ran the whole flow (lookup, context, append), some found an
    // existing record.
    let admission: Vec<&Value> = records
        .iter()
        .filter(|r| str_at(r, "/area") == Some("admission"))
        .collect();
    assert!(
        admission
            .iter()
            .any(|r| { r.get("calls").and_then(Value::as_array).map(<[Value]>::len) == Some(3) })
    );
    assert!(
        admission
            .iter()
            .any(|r| r.get("existing").and_then(Value::as_bool) == Some(true))
    );
}

#[test]
fn canonical_corpus_covers_outputs_and_both_error_stages() {
    let records = lines("canonical.jsonl");
    assert_eq!(records.len(), 500);
    let stage = |s: &str| {
        records
            .iter()
            .filter(|r| str_at(r, "/error/stage") == Some(s))
            .count()
    };
    assert!(stage("parse") >= 10 && stage("canonicalization") >= 5);
    let ok: Vec<&Value> = records
        .iter()
        .filter(|r| r.get("canonical").is_some())
        .collect();
    assert!(ok.len() >= 400);
    // Canonical output is a fixed point.
    for r in ok {
        let c = str_at(r, "/canonical").unwrap();
        let again = canonical_bytes(&parse(c.as_bytes()).unwrap()).unwrap();
        assert_eq!(again, c.as_bytes());
    }
}

#[test]
fn scenario_steps_are_vectors_not_argument_errors() {
    // Argument errors belong to a binding's conversions, not to the core's behaviour: a step that
    // produced one would be a broken scenario, not a vector.
    let records = lines("authority.jsonl");
    let mut errors = 0;
    for r in &records {
        for step in r.get("steps").and_then(Value::as_array).unwrap() {
            assert_ne!(
                str_at(step, "/error/reason"),
                Some("invalid-argument"),
                "{step:?}"
            );
            assert!(step.get("ok").is_some() != step.get("error").is_some());
            errors += usize::from(step.get("error").is_some());
        }
    }
    assert!(errors >= 60, "{errors} error steps");
}
