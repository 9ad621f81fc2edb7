#!/usr/bin/env bash
# Fails when git tracks a binary build product (a compiled extension, addon, wasm module or
# wheel): those are built by the scripts, never committed (issue "one source of truth", item 1).
set -euo pipefail
cd "$(dirname "$0")/.."
tracked=$(git ls-files -- '*.so' '*.pyd' '*.dylib' '*.dll' '*.node' '*.wasm' '*.whl' '*.a' '*.o' '*.rlib')
if [ -n "$tracked" ]; then
  echo "error: binary build products are tracked by git:" >&2
  echo "$tracked" >&2
  exit 1
fi
# Any other tracked file with a NUL byte in its first 8 KiB is binary too, except fuzz inputs
# (tests/fuzz-corpus, tests/fuzz-open-findings), which are arbitrary bytes by design.
while IFS= read -r -d '' f; do
  case "$f" in tests/fuzz-corpus/* | tests/fuzz-open-findings/*) continue ;; esac
  if [ -f "$f" ] && head -c 8192 "$f" | grep -qaP '\x00'; then
    echo "error: binary file tracked by git: $f" >&2
    exit 1
  fi
done < <(git ls-files -z)
echo "no tracked binary build product"
