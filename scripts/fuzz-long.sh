#!/usr/bin/env bash
# The long fuzz run (README "Fuzzing"): every mwp-fuzz target in sequence for SECONDS_PER_TARGET
# (default 600: 8 targets ≈ 80 minutes), one fresh seed printed first, findings saved into
# tests/fuzz-corpus/<target>/ (commit them once fixed), then a summary table (target, seconds,
# executions, share reaching each stage, max peak/len, findings).
#
#   scripts/fuzz-long.sh [SECONDS_PER_TARGET] [extra mwp-fuzz options, e.g. --seed S]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/setup-rust.sh
seconds=${1:-600}
shift || true
cargo build --release --locked -p missionweaveprotocol-testkit --bin mwp-fuzz
target/release/mwp-fuzz --target all --seconds "$seconds" --save-findings --table "$@"
