#!/usr/bin/env bash
# The three clients against the Rust server, one after the other in one run (issue 24: Commands/s
# and p50/p99 Command -> Event through the Rust, Python and Node clients, same machine, same
# moment). Each starts its own `missionweaveprotocol-server --dev` over a fresh SQLite store on
# loopback, sends N Commands one at a time, then N with 16 in flight, and stops by itself.
#
#   ./scripts/bench-clients.sh [N]        (default 1000)
#
# Needs what the test scripts build: the Python wheel installed in .venv-ci
# (scripts/test-python.sh; MWP_PY_VENV overrides) and the Node addon in js/dist
# (scripts/test-js.sh). A benchmark, not a test: it asserts nothing about time.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
N="${1:-1000}"
VENV="${MWP_PY_VENV:-$ROOT/.venv-ci}"
export CARGO_INCREMENTAL=0
cargo build --release --locked -q -p missionweaveprotocol-server \
  --bin missionweaveprotocol-server --example load
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"

echo "== Rust client (missionweaveprotocol-client) =="
"$TARGET/release/examples/load" --connections 2 --groups 2 --per-connection 1 \
  --seconds 1 --rate 10 --window 1 --client-commands "$N" | grep "Rust client"
echo "== Python client (missionweaveprotocol.client.AgentClient) =="
"$VENV/bin/python" python/benchmarks/bench_client.py "$N"
echo "== Node client (AgentClient of the npm package) =="
MWP_SERVER_BIN="$TARGET/release/missionweaveprotocol-server" \
  node js/bench/client-bench.mjs --commands "$N"
