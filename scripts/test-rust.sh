#!/usr/bin/env bash
# Rust checks and tests: format, lints, every crate's tests, a short fuzz run, the benchmarks
# built (not timed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/setup-rust.sh
cargo fmt --all -- --check
cargo clippy --locked --workspace --all-targets -- -D warnings
cargo test --locked --workspace
# The sans-IO core builds for browsers and edge runtimes (no threads there).
cargo check --locked -p missionweaveprotocol --target wasm32-unknown-unknown --no-default-features --features conformance-bundle
cargo build --release --locked -p missionweaveprotocol --examples
target/release/examples/fuzz_verify 10
