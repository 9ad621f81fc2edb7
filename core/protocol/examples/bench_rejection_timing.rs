//! Mean time of a failing `verify` per failing stage (§6.4: stage 3, 4 and 6 rejections must be
//! indistinguishable on the wire, so their timing must not tell them apart either). Prints one
//! JSON line per class, then the max/min ratio of the means and of the medians (target ≤ 1.10).
//! A genuine document refused at admission (no First Admission record: the same
//! `AUTH_INVALID_SIGNATURE` on the wire) is one of the classes: verify + historical replay.
//!
//! ```text
//! cargo run --release -p missionweaveprotocol --example bench_rejection_timing [-- SECONDS_PER_FIGURE]
//! ```
//! The classes are measured in interleaved rounds (a short batch of each, in a rotating order),
//! so machine load hits all of them alike; the p10/p50/p90 of the batch means show the spread.
//! `accept.command` is measured in the same rounds for reference and is not part of the ratio.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use missionweaveprotocol::admission::{
    AdmissionLog, AppendOutcome, FirstAdmissionRecord, LookupOutcome, replay_historical,
};
use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::signed_documents::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol::{KeyRegistrySnapshot, Stage, WireCode};

const VECTORS: &str = "cryptography/vectors/signed-documents";
/// Verifies per timed batch: long enough to dwarf the clock, short enough to interleave finely.
const BATCH: usize = 40;

struct Class {
    name: &'static str,
    bytes: Vec<u8>,
    /// The stage the rejection must report; `None` for the accepted reference.
    stage: Option<Stage>,
    /// Verify, then historical replay against a log that has no First Admission record: a
    /// genuine document refused with the same wire error as the verification rejections.
    admission: bool,
    batch_means_ns: Vec<f64>,
    total: Duration,
    tries: usize,
}

fn vector(name: &str) -> Vec<u8> {
    embedded_file(&format!("{VECTORS}/{name}"))
        .unwrap_or_else(|| panic!("{name} is not in the embedded bundle"))
        .to_vec()
}

/// The golden command signed by `crypto-vector-rfc8032-1` but naming a registered key that is
/// bound to another agent: stage 4, signer mismatch. Derived here because the bundle's
/// wrong-signer vectors are other profiles, whose parse and schema work differs.
fn wrong_principal(golden: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(golden).unwrap();
    let from = "urn:missionweaveprotocol:key:crypto-vector-rfc8032-1";
    assert!(text.contains(from));
    text.replace(
        from,
        "urn:missionweaveprotocol:key:crypto-vector-developer-one",
    )
    .into_bytes()
}

/// A log that has no record for anything (authoritative absence).
struct NoRecords;

impl AdmissionLog for NoRecords {
    fn lookup(&self, _: &str, _: &str) -> LookupOutcome {
        LookupOutcome::from_reply(Some("absent"), None)
    }
    fn append(&self, _: &FirstAdmissionRecord, _: &[u8]) -> AppendOutcome {
        AppendOutcome::from_reply(None, None)
    }
}

/// One timed attempt: verification, and for the admission class historical replay after it.
/// A refusal as a `VerificationError`-like pair (stage, wire code and message).
fn attempt(
    codec: &SignedDocumentCodec,
    class: &Class,
    registry: &Arc<KeyRegistrySnapshot>,
) -> Result<(), Refusal> {
    let verified = codec
        .verify(
            SignedDocumentKind::Command,
            black_box(&class.bytes),
            registry,
        )
        .map_err(|e| Refusal {
            stage: e.stage,
            wire: (e.wire_code(), e.wire_message()),
        })?;
    if class.admission {
        let e = replay_historical(&verified, &NoRecords).unwrap_err();
        return Err(Refusal {
            stage: Stage::Admission,
            wire: (e.wire_code(), "signed document rejected"),
        });
    }
    Ok(())
}

#[derive(Debug)]
struct Refusal {
    stage: Stage,
    wire: (WireCode, &'static str),
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let codec = SignedDocumentCodec::new();
    let registry = Arc::new(
        KeyRegistrySnapshot::from_bytes(
            embedded_file("cryptography/keys/registry-valid.json").unwrap(),
        )
        .unwrap(),
    );
    let golden = vector("valid/command.json");
    let class = |name, bytes, stage| Class {
        name,
        bytes,
        stage,
        admission: false,
        batch_means_ns: Vec::new(),
        total: Duration::ZERO,
        tries: 0,
    };
    let mut classes = vec![
        class(
            "reject.stage3.malformed-envelope",
            vector("invalid/command-signature-wrong-length.json"),
            Some(Stage::SignatureEnvelope),
        ),
        class(
            "reject.stage3.small-order-r",
            vector("invalid/command-signature-r-small-order.json"),
            Some(Stage::SignatureEnvelope),
        ),
        class(
            "reject.stage4.unknown-key",
            vector("invalid/command-unknown-key.json"),
            Some(Stage::KeyResolution),
        ),
        class(
            "reject.stage4.wrong-principal",
            wrong_principal(&golden),
            Some(Stage::KeyResolution),
        ),
        class(
            "reject.stage6.bad-signature",
            vector("invalid/command-payload-tamper.json"),
            Some(Stage::Signature),
        ),
        Class {
            admission: true,
            ..class(
                "reject.admission.missing-record",
                golden.clone(),
                Some(Stage::Admission),
            )
        },
        class("accept.command", golden, None),
    ];

    // Every class fails where it claims to, and all rejections look the same on the wire.
    let mut wire = None;
    for class in &classes {
        let result = attempt(&codec, class, &registry);
        match (class.stage, result) {
            (None, Ok(_)) => {}
            (Some(stage), Err(refusal)) => {
                assert_eq!(refusal.stage, stage, "{}", class.name);
                let shown = refusal.wire;
                assert_eq!(*wire.get_or_insert(shown), shown, "{}", class.name);
            }
            (expected, result) => panic!("{}: expected {expected:?}, got {result:?}", class.name),
        }
    }

    let budget = Duration::from_secs_f64(seconds * classes.len() as f64);
    let start = Instant::now();
    let mut round = 0usize;
    while start.elapsed() < budget {
        let count = classes.len();
        for offset in 0..count {
            let class = &mut classes[(round + offset) % count];
            let begin = Instant::now();
            for _ in 0..BATCH {
                let result = attempt(&codec, class, &registry);
                // The verdict is known; only keep the compiler from dropping the call.
                black_box(result.is_ok() == class.stage.is_none());
            }
            let spent = begin.elapsed();
            class.total += spent;
            class.tries += BATCH;
            class
                .batch_means_ns
                .push(spent.as_nanos() as f64 / BATCH as f64);
        }
        round += 1;
    }

    let mut means = Vec::new();
    let mut medians = Vec::new();
    for class in &mut classes {
        class.batch_means_ns.sort_by(f64::total_cmp);
        let mean_us = class.total.as_nanos() as f64 / class.tries as f64 / 1000.0;
        let [p10, p50, p90] =
            [0.1, 0.5, 0.9].map(|p| percentile(&class.batch_means_ns, p) / 1000.0);
        let stage = class
            .stage
            .map_or("null".to_owned(), |s| format!("\"{}\"", s.as_str()));
        println!(
            "{{\"name\":\"{}\",\"stage\":{stage},\"mean_us\":{mean_us:.2},\"p10_us\":{p10:.2},\
             \"p50_us\":{p50:.2},\"p90_us\":{p90:.2},\"tries\":{}}}",
            class.name, class.tries
        );
        if class.stage.is_some() {
            means.push(mean_us);
            medians.push(p50);
        }
    }
    let ratio = |values: &[f64]| {
        values.iter().copied().fold(f64::MIN, f64::max)
            / values.iter().copied().fold(f64::MAX, f64::min)
    };
    println!(
        "{{\"name\":\"reject.max_over_min\",\"mean_ratio\":{:.3},\"median_ratio\":{:.3},\"target\":1.10,\"rounds\":{round}}}",
        ratio(&means),
        ratio(&medians)
    );
}
