#!/usr/bin/env bash
# Rust checks and tests: format, lints, every crate's tests (with the golden-vector drift check),
# a short fuzz run, the benchmarks built (not timed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/setup-rust.sh
bash scripts/check-tracked-binaries.sh
cargo fmt --all -- --check
cargo clippy --locked --workspace --all-targets -- -D warnings
# Includes the golden-vector drift check (core/testkit/tests/vectors.rs): tests/vectors/ must
# equal a fresh regeneration byte for byte (scripts/write-vectors.sh rewrites it).
cargo test --locked --workspace
# The sans-IO crates build for browsers and edge runtimes (no threads there); never the whole
# workspace (pyo3 does not build for wasm32).
cargo check --locked -p missionweaveprotocol -p missionweaveprotocol-authority -p missionweaveprotocol-ffi \
  --target wasm32-unknown-unknown --no-default-features --features missionweaveprotocol/conformance-bundle
cargo build --release --locked -p missionweaveprotocol -p missionweaveprotocol-authority --examples
target/release/examples/fuzz_verify 10
