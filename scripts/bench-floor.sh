#!/usr/bin/env bash
# Issue 27's one benchmark: every throughput figure beside its floor, measured in one run
# (raw Ed25519 sign and verify, the floor of the 11-Command mix, Rust perform_many, Python and
# Node awaited performs one by one and 64 concurrent, Python replay beside Python's sqlite3,
# SQLite with 64 submitters beside raw SQLite, the 2-thread speed-up), each as a ratio to its
# floor. JSON lines as it goes, an aligned table at the end (docs/figures.md, "Against the
# floor"). Not run by CI.
#
#   scripts/bench-floor.sh [--quick] [--skip-node] [--skip-python]
#
# Builds what it needs in release first (one cargo call for the Rust examples; the Python
# package with `maturin develop --release` into $MWP_PY_VENV; the Node addon with
# scripts/build-js.sh unless --skip-node), then runs python/benchmarks/bench_floor.py, which
# runs the existing benchmarks and parses their JSON lines. Environment:
#   CARGO_TARGET_DIR   default <repo>/target
#   MWP_PY_VENV        the venv holding the package (default <repo>/.venv-bench)
#   MWP_BENCH_NO_BUILD=1  use what is already built
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
VENV="${MWP_PY_VENV:-$ROOT/.venv-bench}"
SKIP_NODE=0
SKIP_PYTHON=0
for arg in "$@"; do
  case "$arg" in
    --skip-node) SKIP_NODE=1 ;;
    --skip-python) SKIP_PYTHON=1 ;;
    --quick) ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

if [ "${MWP_BENCH_NO_BUILD:-0}" != 1 ]; then
  echo "== build (release)" >&2
  cargo build --release --locked -q \
    -p missionweaveprotocol --example bench_verification \
    -p missionweaveprotocol-store-sqlite --example bench_sqlite_concurrent \
    --example bench_sqlite_command_cpu
  if [ "$SKIP_PYTHON" = 0 ]; then
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
      "maturin==1.16.0" "pydantic==2.14.4"
    ( cd python && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" maturin develop --release --locked -q )
  fi
  if [ "$SKIP_NODE" = 0 ]; then
    bash "$ROOT/scripts/build-js.sh" >&2
  fi
fi

PYTHON="$VENV/bin/python"
[ -x "$PYTHON" ] || PYTHON=python3
exec "$PYTHON" "$ROOT/python/benchmarks/bench_floor.py" "$@"
