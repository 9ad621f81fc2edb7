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
# (tests/fuzz-corpus, tests/fuzz-open-findings), which are arbitrary bytes by design, and the
# documentation's screenshots (docs/*.png, written by `MWP_UPDATE_SCREENSHOTS=1` from the
# approval page's browser test), which are pictures, not build products.
while IFS= read -r -d '' f; do
  case "$f" in tests/fuzz-corpus/* | tests/fuzz-open-findings/* | docs/*.png) continue ;; esac
  if [ -f "$f" ] && head -c 8192 "$f" | grep -qaP '\x00'; then
    echo "error: binary file tracked by git: $f" >&2
    exit 1
  fi
done < <(git ls-files -z)
# The pinned protocol bundle is read from MWP_PROTOCOL_ROOT (default ../shared/protocol), never
# committed: no tracked file may be a byte-for-byte copy of one of its files.
bundle="${MWP_PROTOCOL_ROOT:-../shared/protocol}"
if [ -d "$bundle" ]; then
  copies=$(python3 - "$bundle" <<'PY'
import hashlib, os, subprocess, sys
digests = set()
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        with open(os.path.join(folder, name), "rb") as f:
            digests.add(hashlib.sha256(f.read()).digest())
for path in subprocess.check_output(["git", "ls-files", "-z"]).decode().split("\0"):
    if path and os.path.isfile(path):
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).digest() in digests:
                print(path)
PY
)
  if [ -n "$copies" ]; then
    echo "error: tracked files copy the protocol bundle (read it from MWP_PROTOCOL_ROOT):" >&2
    echo "$copies" >&2
    exit 1
  fi
fi
echo "no tracked binary build product, no copy of the protocol bundle"
