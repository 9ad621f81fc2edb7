#!/usr/bin/env bash
# The main job on the embedded default: builds the conformance runner with the pinned, embedded
# protocol bundle and runs all 150 evaluations. Extra arguments go to the runner.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/setup-rust.sh
cargo build --release --locked -p missionweaveprotocol-cli
exec target/release/missionweaveprotocol-conformance "$@"
