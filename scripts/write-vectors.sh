#!/usr/bin/env bash
# Regenerates the golden vectors (tests/vectors/) from the Rust core: every bundle evaluation,
# the seeded canonical-JSON corpus, the authority and scheduler scenarios, the two-Missions Event
# log every binding's Core replays (two-missions.jsonl), and manifest.json.
# Review the diff before committing: every changed byte is a change in observable behaviour.
#
#   scripts/write-vectors.sh            write tests/vectors/
#   scripts/write-vectors.sh --check    exit 1 if the committed files differ (what CI checks
#                                       through `cargo test --workspace`)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/setup-rust.sh
cargo run --locked -q -p missionweaveprotocol-testkit --bin mwp-write-vectors -- "$@" "$root/tests/vectors"
