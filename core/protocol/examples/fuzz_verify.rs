//! A long-running mutation fuzzer for the parser, the Registry and the six-stage verifier:
//! any input must give a typed result, never a panic (a panic aborts with the input printed).
//!
//! ```text
//! cargo run --release -p missionweaveprotocol --example fuzz_verify -- [SECONDS] [SEED]
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use missionweaveprotocol::bundle::embedded_files;
use missionweaveprotocol::signed_documents::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol::{AgentRegistryKeyResolver, KeyRegistrySnapshot};

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\u",
    b"\\ud800",
    b"1e400",
    b",",
    b":",
    b"\xEF\xBB\xBF",
    b"\x80",
    b"-0",
    b"null",
    b"0.1e-9999",
];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(4) {
            0 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] ^= 1 << rng.below(8);
            }
            1 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                out.splice(at..at, token.iter().copied());
            }
            2 => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                if at < end {
                    out.drain(at..end);
                }
            }
            _ => out.truncate(at),
        }
    }
    out
}

fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let seed: u64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED);
    let mut rng = Rng(seed | 1);
    let documents: Vec<(&str, &[u8])> = embedded_files()
        .filter(|(p, _)| p.starts_with("cryptography/vectors/signed-documents/"))
        .collect();
    let registries: Vec<&[u8]> = embedded_files()
        .filter(|(p, _)| p.starts_with("cryptography/keys/registry-"))
        .map(|(_, b)| b)
        .collect();
    let valid = Arc::new(
        KeyRegistrySnapshot::from_bytes(
            missionweaveprotocol::bundle::embedded_file("cryptography/keys/registry-valid.json")
                .unwrap(),
        )
        .unwrap(),
    );
    let codec = SignedDocumentCodec::new();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut runs = 0u64;
    let mut stages = [0u64; 8];
    while Instant::now() < deadline {
        let (_, document) = documents[rng.below(documents.len())];
        let kind = SignedDocumentKind::ALL[rng.below(9)];
        let input = mutate(&mut rng, document);
        let outcome = std::panic::catch_unwind(|| match codec.verify(kind, &input, &valid) {
            Ok(_) => 0usize,
            Err(error) => usize::from(error.stage.number()),
        });
        match outcome {
            Ok(stage) => stages[stage] += 1,
            Err(_) => panic!("panic on input {:?}", String::from_utf8_lossy(&input)),
        }
        if runs.is_multiple_of(8) {
            let pick = rng.below(registries.len());
            let registry = mutate(&mut rng, registries[pick]);
            let resolver = AgentRegistryKeyResolver::new(&registry);
            let _ = codec.verify(SignedDocumentKind::Command, document, &resolver);
        }
        runs += 1;
    }
    println!(
        "{{\"runs\":{runs},\"complete\":{},\"by_stage\":{:?}}}",
        stages[0],
        &stages[1..7]
    );
}
