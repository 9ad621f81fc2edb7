#!/usr/bin/env bash
# Everything CI runs, on a fresh machine: installs what is missing, then every test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# A one-shot build (CI builds a fresh clone): incremental caches only cost time and tens of GB
# of disk on this shared machine.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
# One PostgreSQL cluster for every suite (each script would otherwise start and stop its own).
source scripts/pg-env.sh
mwp_pg_env
trap mwp_pg_cleanup EXIT
bash scripts/test-rust.sh
for part in scripts/test-python.sh scripts/test-js.sh; do
  if [ -f "$part" ]; then
    bash "$part"
  fi
done
echo "all test suites passed"
