//! One verification figure run a fixed number of times, untimed, for instruction counts that do
//! not depend on the machine's load (`bench_verification` gives the rates):
//!
//! ```text
//! cargo build --release -p missionweaveprotocol --example count_verification
//! valgrind --tool=callgrind target/release/examples/count_verification FIGURE 0
//! valgrind --tool=callgrind target/release/examples/count_verification FIGURE 1000
//! ```
//! FIGURE is `parse.command`, `schema.command`, `canonicalize.command`, `ed25519.raw_verify`,
//! `verify.command` or `verify.command.canonical` (the same operations as `bench_verification`); the difference of the two totals divided by
//! the iterations is the cost of one operation, set-up excluded.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;

use missionweaveprotocol::KeyRegistrySnapshot;
use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::crypto::raw_verify;
use missionweaveprotocol::json::{canonical_bytes, parse};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::signed_documents::{SignedDocumentCodec, SignedDocumentKind};

fn main() {
    let mut args = std::env::args().skip(1);
    let figure = args.next().expect("FIGURE");
    let iterations: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .expect("ITERATIONS");
    let document =
        embedded_file("cryptography/vectors/signed-documents/valid/command.json").unwrap();
    let registry_bytes = embedded_file("cryptography/keys/registry-valid.json").unwrap();
    let codec = SignedDocumentCodec::new();
    let catalog = SchemaCatalog::embedded();
    let value = parse(document).unwrap();
    let registry: Arc<KeyRegistrySnapshot> =
        Arc::new(KeyRegistrySnapshot::from_bytes(registry_bytes).unwrap());
    let verified = codec
        .verify(SignedDocumentKind::Command, document, &registry)
        .unwrap();
    let public_key = *registry
        .binding(&verified.key_id)
        .unwrap()
        .public_key
        .as_bytes();
    let signature: [u8; 64] = decode_base64url(&verified.signature)
        .unwrap()
        .try_into()
        .unwrap();
    // The same Command as its signer sends it: its RFC 8785 bytes (the vector is indented).
    let canonical_document = canonical_bytes(&value).unwrap();
    for _ in 0..iterations {
        match figure.as_str() {
            "parse.command" => {
                black_box(parse(black_box(document)).unwrap());
            }
            "schema.command" => {
                catalog.validate("command", black_box(&value)).unwrap();
            }
            "canonicalize.command" => {
                black_box(canonical_bytes(black_box(&value)).unwrap());
            }
            "ed25519.raw_verify" => {
                assert!(raw_verify(
                    &public_key,
                    black_box(&verified.signing_bytes),
                    &signature
                ));
            }
            "verify.command" => {
                black_box(
                    codec
                        .verify(SignedDocumentKind::Command, black_box(document), &registry)
                        .unwrap(),
                );
            }
            "verify.command.canonical" => {
                black_box(
                    codec
                        .verify(
                            SignedDocumentKind::Command,
                            black_box(&canonical_document),
                            &registry,
                        )
                        .unwrap(),
                );
            }
            other => panic!("unknown figure {other}"),
        }
    }
}
