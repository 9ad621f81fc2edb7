#!/usr/bin/env bash
# The main job on the embedded default: builds the conformance runner with the pinned, embedded
# protocol bundle and runs all 150 evaluations, then the engine's behavior evidence matrix
# (`--bundle behavior`, docs/behavior.md: its last line reads `N/M rows with positive and
# negative evidence; R/T rules with negative evidence (F failing, U not covered; …)` and it
# exits 1 unless every row and every rule has its evidence), then an end-to-end scenario on a
# SQLite file, then the §22 proof of concept over wss (`missionweaveprotocol-demo`, docs/poc.md).
# Arguments, if any, go to the runner instead (one run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/setup-rust.sh
cargo build --release --locked -p missionweaveprotocol-cli
runner=target/release/missionweaveprotocol-conformance
if [ "$#" -gt 0 ]; then
    exec "$runner" "$@"
fi
status=0
"$runner" || status=$?
behavior=0
"$runner" --bundle behavior || behavior=$?
# The first non-zero status is the verdict.
if [ "$status" -eq 0 ]; then
    status=$behavior
fi
# A small end-to-end scenario on the embedded durable default, a SQLite file under a temp dir
# (issue 11): Mission, members, WorkItem through publish/submit/accept, approval; then the
# store is reopened and the Group replayed and verified (docs/store.md, "Crash and race tests").
cargo build --release --locked -p missionweaveprotocol-store-harness --bin mwp-store-worker
scenario_dir=$(mktemp -d)
trap 'rm -rf "$scenario_dir"' EXIT
scenario=0
target/release/mwp-store-worker scenario --store "sqlite:$scenario_dir/authority.sqlite" || scenario=$?
if [ "$status" -eq 0 ]; then
    status=$scenario
fi
# The §22 proof of concept (docs/poc.md): missionweaveprotocol-demo from the Python package's
# release wheel, in a venv made here (as scripts/test-python.sh makes its own), against a
# missionweaveprotocol-server process it starts; one line of canonical JSON, exit 0 only when
# every check passed. Idempotent: the venv is reused, cargo rebuilds only what changed.
demo_venv="${MWP_DEMO_VENV:-$root/.venv-demo}"
[ -x "$demo_venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$demo_venv"
"$demo_venv/bin/python" -m pip install -q --disable-pip-version-check \
    "maturin==1.16.0" "pydantic==2.14.4" "websockets==17.4"
rm -rf target/wheels-demo
( cd python && "$demo_venv/bin/maturin" build --release --locked -q --out ../target/wheels-demo )
"$demo_venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
    target/wheels-demo/missionweaveprotocol-*.whl
demo=0
"$demo_venv/bin/missionweaveprotocol-demo" || demo=$?
if [ "$status" -eq 0 ]; then
    status=$demo
fi
exit "$status"
