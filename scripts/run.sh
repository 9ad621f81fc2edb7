#!/usr/bin/env bash
# The main job on the embedded default: builds the conformance runner with the pinned, embedded
# protocol bundle and runs all 150 evaluations, then the engine's behavior evidence matrix
# (`--bundle behavior`, docs/behavior.md). Arguments, if any, go to the runner instead (one run).
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
exit "$status"
