#!/usr/bin/env bash
# Rust checks and tests: format, lints, every crate's tests (with the golden-vector drift check),
# a short fuzz run, the benchmarks built (not timed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/setup-rust.sh
# The PostgreSQL store's tests (core/store-postgres, core/store-open, core/store-harness) run on a
# private cluster: installed from Debian's packages when missing, started here, stopped on exit.
source scripts/pg-env.sh
mwp_pg_env
trap mwp_pg_cleanup EXIT
bash scripts/check-tracked-binaries.sh
# One version for the crates, the wheel and the npm packages (CHANGELOG.md names it too).
bash scripts/check-version.sh
cargo fmt --all -- --check
cargo clippy --locked --workspace --all-targets -- -D warnings
# Includes the golden-vector drift check (core/testkit/tests/vectors.rs): tests/vectors/ must
# equal a fresh regeneration byte for byte (scripts/write-vectors.sh rewrites it).
cargo test --locked --workspace --no-fail-fast
# The sans-IO crates build for browsers and edge runtimes (no threads there); never the whole
# workspace (pyo3 does not build for wasm32).
cargo check --locked -p missionweaveprotocol -p missionweaveprotocol-kernel -p missionweaveprotocol-engine \
  -p missionweaveprotocol-agent -p missionweaveprotocol-gateway -p missionweaveprotocol-ffi \
  --target wasm32-unknown-unknown --no-default-features --features missionweaveprotocol/conformance-bundle
cargo build --release --locked -p missionweaveprotocol -p missionweaveprotocol-kernel \
  -p missionweaveprotocol-engine --examples
# The rejection-timing figure in every build (§6.4: stage 3, 4, 6 and admission refusals share
# one wire error, so their cost must not tell them apart): printed, not asserted (a timed check
# would be flaky on a shared machine; the structural work-count tests assert the property).
cargo build --release --locked -q -p missionweaveprotocol --example bench_rejection_timing
target/release/examples/bench_rejection_timing 0.3 | tail -n 1
# Short fuzz run of every target (README "Fuzzing"): a fresh seed each run, printed first, so a
# failure is reproduced with `--seed`; 4 s per target (7 targets, ~30 s). Exits 1 on a finding.
cargo build --release --locked -p missionweaveprotocol-testkit --bin mwp-fuzz
target/release/mwp-fuzz --target all --seconds 4
# The programs a new user copies (examples/rust): each must exit 0; the signing flow's and the
# authority scenario's outputs are fixed (fixed seed, time as an argument).
cargo build --release --locked -p missionweaveprotocol-examples
cargo run --release --locked -q -p missionweaveprotocol-examples --bin verify_many
signing=$(cargo run --release --locked -q -p missionweaveprotocol-examples --bin sign_and_verify)
echo "$signing"
expected='signed by urn:missionweaveprotocol:agent:planner at 2026-07-15T09:30:00Z
wire: AUTH_INVALID_SIGNATURE signed document rejected
protected: signature/signature-mismatch'
[ "$signing" = "$expected" ] || { echo "sign_and_verify: unexpected output" >&2; exit 1; }
authority=$(cargo run --release --locked -q -p missionweaveprotocol-examples --bin lease_budget_scheduler)
echo "$authority"
[ "$(printf '%s\n' "$authority" | tail -n 1)" = "mission: 8000 tokens and 16 tool calls used, 2000 tokens left" ] \
  || { echo "lease_budget_scheduler: unexpected output" >&2; exit 1; }
