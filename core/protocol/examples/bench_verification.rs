//! Verification benchmarks: prints one JSON line per figure, `{"name": …, "ops_per_sec": …}`.
//!
//! ```text
//! cargo run --release -p missionweaveprotocol --example bench_verification [-- SECONDS_PER_FIGURE [NAME_PREFIX]]
//! ```
//! `ed25519.raw_verify` is measured in the same run, so `ratio_to_raw` compares like with like.
//! With `MWP_BENCH_CLOCK=cpu` (Linux), each single-thread figure is timed by the thread's own
//! time on a CPU (`/proc/thread-self/schedstat`) rather than by the wall clock, so that a loaded
//! machine's waits do not enter the rates; the `verify_many` figures, which measure what threads
//! add, always use the wall clock.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::conformance::{self, BundleKind, EmbeddedBundle};
use missionweaveprotocol::crypto::{SigningKey, raw_verify};
use missionweaveprotocol::json::{Value, canonical_bytes, parse};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use missionweaveprotocol::signed_documents::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol::{KeyRegistrySnapshot, KeyResolver};

fn measure(seconds: f64, mut operation: impl FnMut() -> usize) -> f64 {
    // Warm up, then run whole batches until the time is spent.
    operation();
    let budget = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let cpu_start = cpu_clock();
    let mut count = 0usize;
    while start.elapsed() < budget {
        count += operation();
    }
    match (cpu_start, cpu_clock()) {
        (Some(from), Some(to)) if to > from => count as f64 / (to - from).as_secs_f64(),
        _ => count as f64 / start.elapsed().as_secs_f64(),
    }
}

/// This thread's time on a CPU, when `MWP_BENCH_CLOCK=cpu` asks for it and Linux tells it.
fn cpu_clock() -> Option<Duration> {
    if std::env::var("MWP_BENCH_CLOCK").ok()? != "cpu" || WALL_CLOCK.with(|wall| wall.get()) {
        return None;
    }
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

thread_local! {
    /// Set while a figure that spreads work over threads is measured.
    static WALL_CLOCK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a figure is selected by the optional NAME_PREFIX argument.
fn selected(name: &str) -> bool {
    std::env::args()
        .nth(2)
        .is_none_or(|prefix| name.starts_with(&prefix) || prefix.starts_with(name))
}

fn line(name: &str, ops: f64, extra: &str) {
    println!("{{\"name\":\"{name}\",\"ops_per_sec\":{ops:.1}{extra}}}");
}

/// The 7-key Registry plus generated bindings up to `total` keys.
fn large_registry(total: usize) -> Vec<u8> {
    let base = parse(embedded_file("cryptography/keys/registry-valid.json").unwrap()).unwrap();
    let canonical = String::from_utf8(canonical_bytes(&base).unwrap()).unwrap();
    // JCS orders `bindings` before `organizationId`: append inside the bindings array.
    let split = canonical.find("],\"organizationId\"").unwrap();
    let (mut text, tail) = (canonical[..split].to_owned(), canonical[split..].to_owned());
    let existing = base.get("bindings").unwrap().as_array().unwrap().len();
    for index in existing..total {
        let mut seed = [7u8; 32];
        seed[..8].copy_from_slice(&(index as u64).to_le_bytes());
        let key = SigningKey::from_seed("", &seed);
        text.push_str(&format!(
            ",{{\"keyId\":\"urn:example:key:{index}\",\"principal\":{{\"type\":\"agent\",\"id\":\"urn:example:agent:{index}\"}},\
             \"algorithm\":\"Ed25519\",\"publicKey\":\"{}\",\"validFrom\":\"2026-01-01T00:00:00Z\",\
             \"validityHistory\":[{{\"sequence\":1,\"recordedAt\":\"2026-01-01T00:00:00Z\"}}]}}",
            encode_base64url(&key.public_key_bytes())
        ));
    }
    text.push_str(&tail);
    text.into_bytes()
}

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let document =
        embedded_file("cryptography/vectors/signed-documents/valid/command.json").unwrap();
    let registry_bytes = embedded_file("cryptography/keys/registry-valid.json").unwrap();
    let codec = SignedDocumentCodec::new();
    let catalog = SchemaCatalog::embedded();
    let value = parse(document).unwrap();
    let registry: Arc<KeyRegistrySnapshot> =
        Arc::new(KeyRegistrySnapshot::from_bytes(registry_bytes).unwrap());
    let registry200: Arc<KeyRegistrySnapshot> =
        Arc::new(KeyRegistrySnapshot::from_bytes(&large_registry(200)).unwrap());
    assert_eq!(registry200.len(), 200);
    let verified = codec
        .verify(SignedDocumentKind::Command, document, &registry)
        .unwrap();

    let run =
        |name: &str, op: &mut dyn FnMut() -> usize| selected(name).then(|| measure(seconds, op));
    let report = |name: &str, ops: Option<f64>, extra: String| {
        if let Some(ops) = ops {
            line(name, ops, &extra);
        }
    };
    let ratio = |label: &str, a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!(",\"{label}\":{:.3}", a / b),
        _ => String::new(),
    };

    let parse_ops = run("parse.command", &mut || {
        black_box(parse(black_box(document)).unwrap());
        1
    });
    report("parse.command", parse_ops, String::new());
    let schema_ops = run("schema.command", &mut || {
        catalog.validate("command", black_box(&value)).unwrap();
        1
    });
    report("schema.command", schema_ops, String::new());
    let canonical_ops = run("canonicalize.command", &mut || {
        black_box(canonical_bytes(black_box(&value)).unwrap());
        1
    });
    report("canonicalize.command", canonical_ops, String::new());

    let public_key = *registry
        .binding(&verified.key_id)
        .unwrap()
        .public_key
        .as_bytes();
    let signature: [u8; 64] = decode_base64url(&verified.signature)
        .unwrap()
        .try_into()
        .unwrap();
    let raw = run("ed25519.raw_verify", &mut || {
        assert!(raw_verify(
            &public_key,
            black_box(&verified.signing_bytes),
            &signature
        ));
        1
    });
    report("ed25519.raw_verify", raw, String::new());

    let verify_with = |name: &str, resolver: &dyn KeyResolver| {
        run(name, &mut || {
            black_box(
                codec
                    .verify(SignedDocumentKind::Command, black_box(document), resolver)
                    .unwrap(),
            );
            1
        })
    };
    let verify7 = verify_with("verify.command", &registry);
    report(
        "verify.command",
        verify7,
        ratio("ratio_to_raw", verify7, raw),
    );
    // The same Command as its signer sends it: its RFC 8785 bytes (the vector is indented).
    let canonical_document = canonical_bytes(&value).unwrap();
    let verify_canonical = run("verify.command.canonical", &mut || {
        black_box(
            codec
                .verify(
                    SignedDocumentKind::Command,
                    black_box(&canonical_document),
                    &registry,
                )
                .unwrap(),
        );
        1
    });
    report(
        "verify.command.canonical",
        verify_canonical,
        ratio("ratio_to_raw", verify_canonical, raw),
    );
    let verify200 = selected("verify.command.registry200")
        .then(|| {
            let registry200: Arc<KeyRegistrySnapshot> =
                Arc::new(KeyRegistrySnapshot::from_bytes(&large_registry(200)).unwrap());
            assert_eq!(registry200.len(), 200);
            verify_with("verify.command.registry200", &registry200)
        })
        .flatten();
    report(
        "verify.command.registry200",
        verify200,
        ratio("ratio_to_7_keys", verify200, verify7),
    );

    let batch: Vec<(SignedDocumentKind, &[u8])> = (0..256)
        .map(|_| (SignedDocumentKind::Command, document))
        .collect();
    let mut one_thread = None;
    WALL_CLOCK.with(|wall| wall.set(true));
    for threads in [1usize, 2] {
        let name = format!("verify_many.command.threads{threads}");
        let ops = run(&name, &mut || {
            let results = codec.verify_many(&batch, &registry, threads);
            assert!(results.iter().all(Result::is_ok));
            batch.len()
        });
        let extra = if threads == 1 {
            String::new()
        } else {
            ratio("ratio_to_1_thread", ops, one_thread)
        };
        report(&name, ops, extra);
        one_thread = one_thread.or(ops);
    }
    WALL_CLOCK.with(|wall| wall.set(false));

    let seed: [u8; 32] = decode_base64url("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A")
        .unwrap()
        .try_into()
        .unwrap();
    let key = SigningKey::from_seed(
        "urn:missionweaveprotocol:key:crypto-vector-rfc8032-1",
        &seed,
    );
    let Value::Object(mut unsigned) = value.clone() else {
        panic!("not an object")
    };
    unsigned.remove("signature");
    let unsigned = Value::Object(unsigned);
    let sign_ops = run("sign.command", &mut || {
        black_box(
            codec
                .sign(SignedDocumentKind::Command, black_box(&unsigned), &key)
                .unwrap(),
        );
        1
    });
    report("sign.command", sign_ops, String::new());
    // The Ed25519 signature alone over the same signing bytes: the floor of signing an Event
    // (`scripts/bench-floor.sh` sets each figure beside it).
    let raw_sign = run("ed25519.raw_sign", &mut || {
        black_box(key.sign(black_box(&verified.signing_bytes)));
        1
    });
    report("ed25519.raw_sign", raw_sign, String::new());

    let conformance_ops = run("conformance.all.in_process", &mut || {
        assert!(conformance::run(&EmbeddedBundle, &BundleKind::ALL).ok());
        1
    });
    report(
        "conformance.all.in_process",
        conformance_ops,
        ",\"evaluations\":150".into(),
    );
}
