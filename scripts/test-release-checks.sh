#!/usr/bin/env bash
# The release checks themselves, cheaply, in CI (no cross build): each rule with a passing and
# a failing case.
#
#   scripts/test-release-checks.sh WHEEL    WHEEL: the x86_64 wheel scripts/test-python.sh built
#
# check-version.sh: the repository passes; a copy whose js/package.json, pyproject version or
# CHANGELOG differs fails, naming the file. check_wheel.py: the wheel passes; copies with a tag
# claiming an older glibc than the extension needs, a musllinux tag on a glibc extension, a
# missing py.typed, a missing console script, or WHEEL Tag lines that differ from the file name
# fail, each with its own reason; a linux_<arch> tag (a wheel pip built from the sdist) passes
# with --local only, and not for another machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WHEEL="$1"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

expect_failure() {  # REASON_PATTERN COMMAND...
  local pattern="$1"; shift
  if "$@" > "$WORK/out" 2>&1; then
    echo "error: expected a failure matching '$pattern': $*" >&2; cat "$WORK/out" >&2; exit 1
  fi
  if ! grep -q -- "$pattern" "$WORK/out"; then
    echo "error: the failure does not say '$pattern': $*" >&2; cat "$WORK/out" >&2; exit 1
  fi
  echo "refused as expected ($pattern)"
}

echo "== check-version.sh"
bash "$ROOT/scripts/check-version.sh"
copy_repo() {  # the manifests check-version.sh reads, in a fresh directory
  local dest="$WORK/repo-$1"
  mkdir -p "$dest"
  ( cd "$ROOT" && git ls-files -- Cargo.toml '*/Cargo.toml' python/pyproject.toml 'js/*package.json' \
      js/package-lock.json CHANGELOG.md | grep -v node_modules | xargs cp --parents -t "$dest" )
  echo "$dest"
}
repo="$(copy_repo js)"
sed -i 's/"version": "[^"]*"/"version": "9.9.9"/' "$repo/js/package.json"
expect_failure "js/package.json: version 9.9.9" bash "$ROOT/scripts/check-version.sh" "$repo"
repo="$(copy_repo pyproject)"
sed -i 's/^dynamic = \["version"\]$/version = "0.1.0"/' "$repo/python/pyproject.toml"
expect_failure "python/pyproject.toml: the version must be dynamic" bash "$ROOT/scripts/check-version.sh" "$repo"
repo="$(copy_repo changelog)"
sed -i 's/^## \[[0-9].*\]$/## [0.0.0]/' "$repo/CHANGELOG.md"
expect_failure "CHANGELOG.md: no section" bash "$ROOT/scripts/check-version.sh" "$repo"

echo "== check_wheel.py"
python3 "$ROOT/scripts/check_wheel.py" "$WHEEL"
# Mutated copies of the wheel: MUTATION is applied by scripts/check_wheel_mutate.py.
mutate() { python3 "$ROOT/scripts/check_wheel_mutate.py" "$WHEEL" "$WORK/mut-$1" "$@"; }
expect_failure "needs GLIBC_" python3 "$ROOT/scripts/check_wheel.py" "$(mutate older-glibc)"
expect_failure "needs glibc" python3 "$ROOT/scripts/check_wheel.py" "$(mutate musllinux)"
expect_failure "missing missionweaveprotocol/py.typed" python3 "$ROOT/scripts/check_wheel.py" "$(mutate drop-py-typed)"
expect_failure "console script missionweaveprotocol-demo" python3 "$ROOT/scripts/check_wheel.py" "$(mutate drop-demo-script)"
expect_failure "WHEEL Tag lines" python3 "$ROOT/scripts/check_wheel.py" "$(mutate rename-only)"
# A wheel pip builds from the sdist is tagged linux_<arch>: accepted with --local only, and
# only for the extension's own machine.
local_wheel="$(mutate linux-local)"
python3 "$ROOT/scripts/check_wheel.py" --local "$local_wheel"
expect_failure "not a manylinux/musllinux tag" python3 "$ROOT/scripts/check_wheel.py" "$local_wheel"
expect_failure "the extension is built for" python3 "$ROOT/scripts/check_wheel.py" --local "$(mutate linux-other-arch)"
echo "release checks: every rule passed its positive and its negative case"
