#!/usr/bin/env bash
# Builds and tests the JavaScript package (js/): the napi addon, the WebAssembly build, the
# node --test suites (every golden vector of tests/vectors/ on every backend: the 150 bundle
# evaluations, the canonical-JSON corpus, the authority and scheduler scenarios; API and errors,
# exports, npm pack + install, leases/budget/delegation/retries/Scheduler), and the verifier page,
# the vectors and the browser AgentClient (against the release server binary) in headless Chromium.
#
#   scripts/test-js.sh            install what is missing, build, lint, test
#   scripts/test-js.sh --bench    ... then js/bench/bench.mjs, scheduling.mjs, rejection-timing.mjs, core.mjs
#                                 and client-bench.mjs (the Node client against the Rust server)
#
# Idempotent: installs only what is missing (scripts/build-js.sh: wasm32 target, wasm-bindgen-cli
# 0.2.129, the npm packages of js/package-lock.json, `ws` among them; here: Debian chromium). One target dir: $CARGO_TARGET_DIR, by
# default <repo>/target. The protocol bundle: $MWP_PROTOCOL_ROOT, default <repo>/../shared/protocol.
# Chromium runs with --no-sandbox (CI runs as root). js/test/one-server.test.mjs also runs the
# Python client: the venv scripts/test-python.sh leaves with the wheel installed ($MWP_PYTHON,
# default <repo>/.venv-ci/bin/python; scripts/test-all.sh runs the Python suite first).
# The store tests need PostgreSQL:
# $MWP_POSTGRES_URL, or the private cluster (scripts/pg-cluster.sh) started here and stopped on
# exit (scripts/pg-env.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export MWP_PROTOCOL_ROOT="${MWP_PROTOCOL_ROOT:-$ROOT/../shared/protocol}"
BENCH=0
for arg in "$@"; do
  case "$arg" in
    --bench) BENCH=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

step() { printf '\n== %s\n' "$*"; }
# shellcheck source=scripts/pg-env.sh
. "$ROOT/scripts/pg-env.sh"
trap mwp_pg_cleanup EXIT
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

step "the npm package (scripts/build-js.sh: tools, the napi addon, both WebAssembly builds, js/dist/)"
bash "$ROOT/scripts/build-js.sh"
source "$ROOT/scripts/setup-rust.sh"
CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM_PATH" ]; then
  # apt-get update only when the package lists cannot provide chromium.
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium \
    || { as_root apt-get update && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
fi
export CHROMIUM_PATH

step "build: the server binary (release: the Node client's tests and bench run against it)"
cargo build --release --locked -p missionweaveprotocol-server --bin missionweaveprotocol-server
step "build: the Rust participant of the one-server test (js/test/one-server.test.mjs)"
cargo build --release --locked -p missionweaveprotocol-client --example participant

step "PostgreSQL server for the store tests"
mwp_pg_env

step "lint"
node "$ROOT/js/scripts/lint.mjs"

step "test: node --test (conformance, api, keys, authority, scheduling, exports, package + platform package, browser entry free of Node imports, Vite app and script page in Chromium, native loader, browser, page, approval page against the server, verify build, examples)"
(cd "$ROOT/js" && node --test test/*.test.mjs)
echo "screenshots: $CARGO_TARGET_DIR/js-artifacts/"

step "sizes (WebAssembly modules, gzip level 9 by Node zlib)"
node "$ROOT/js/scripts/sizes.mjs"

if [ "$BENCH" = 1 ]; then
  step "bench"
  # The native figures: a Rust process with no language boundary (dev-only testkit).
  cargo build --release --locked -p missionweaveprotocol-testkit --bin mwp-native-baselines
  node "$ROOT/js/bench/bench.mjs"
  node "$ROOT/js/bench/scheduling.mjs"
  node "$ROOT/js/bench/rejection-timing.mjs"
  node "$ROOT/js/bench/core.mjs"
  node "$ROOT/js/bench/client-bench.mjs"
fi
