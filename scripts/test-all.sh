#!/usr/bin/env bash
# Everything CI runs, on a fresh machine: installs what is missing, then every test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/test-rust.sh
for part in scripts/test-python.sh scripts/test-js.sh; do
  if [ -f "$part" ]; then
    bash "$part"
  fi
done
echo "all test suites passed"
