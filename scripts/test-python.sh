#!/usr/bin/env bash
# Builds and tests the Python package `missionweaveprotocol` (python/, bindings/python/).
#
#   scripts/test-python.sh [extra pytest arguments]
#
# Idempotent; needs python3 (>= 3.9, with venv) and cargo. Environment:
#   MWP_PY_VENV  the venv to create/reuse (default: <repo>/.venv-ci)
#   PYTHON       the interpreter that creates the venv (default: python3)
#   MWP_POSTGRES_URL  a PostgreSQL server for the store tests; unset: the private cluster
#                (scripts/pg-cluster.sh) is started here and stopped on exit (scripts/pg-env.sh)
# Steps: venv + pinned tools; the Rust conformance binary (reference for the console script);
# the release wheel (`maturin build --release`, CARGO_TARGET_DIR=<repo>/target); install it;
# run the installed console script from an empty directory; stubtest + mypy --strict (the
# package, a user file importing every root name, the examples); the examples against the
# installed wheel (exit status 0, stdout equal to examples/python/<name>.out); pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="$ROOT/target"
VENV="${MWP_PY_VENV:-$ROOT/.venv-ci}"
WHEELS="$CARGO_TARGET_DIR/wheels-python"
step() { printf '\n=== python: %s (%ss)\n' "$1" "$SECONDS"; }
# shellcheck source=scripts/pg-env.sh
. "$ROOT/scripts/pg-env.sh"
EMPTY=""
cleanup() {
  [ -z "$EMPTY" ] || rm -rf "$EMPTY"
  mwp_pg_cleanup
}
trap cleanup EXIT

step "PostgreSQL server for the store tests"
mwp_pg_env

step "venv and tools"
[ -x "$VENV/bin/python" ] || "${PYTHON:-python3}" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
  "maturin==1.16.0" "pytest==9.2.0" "mypy==2.4.1" "pydantic==2.14.4" \
  "fastapi==0.165.0" "uvicorn==0.54.0" "websockets==17.4" "httpx==0.28.1" \
  "jsonschema==4.25.1"  # test_reference_mismatches: SchemaValidationError is also jsonschema's

step "Rust conformance binary (reference output for the console script)"
cargo build --release --locked -q -p missionweaveprotocol-cli
RUST_BIN="$CARGO_TARGET_DIR/release/missionweaveprotocol-conformance"

step "release wheel"
rm -rf "$WHEELS"
( cd python && "$VENV/bin/maturin" build --release --locked -q --out "$WHEELS" )
WHEEL="$(ls "$WHEELS"/missionweaveprotocol-*.whl)"
echo "$WHEEL"

step "install the wheel"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$WHEEL"

EMPTY="$(mktemp -d)"

step "the wheel alone in a fresh venv: console script from an empty directory"
"${PYTHON:-python3}" -m venv "$EMPTY/fresh"
# pydantic (the one runtime dependency) comes from the index; the package itself from the wheel.
"$EMPTY/fresh/bin/python" -m pip install -q --disable-pip-version-check "$WHEEL"
( cd "$EMPTY" && "$EMPTY/fresh/bin/missionweaveprotocol-conformance" \
    && "$EMPTY/fresh/bin/python" -c "import missionweaveprotocol as m; print(m.verify_cryptography_bundle().evaluation_count, 'cryptography evaluations pinned')" )

step "release checks on this wheel (tag and contents, version; scripts/test-release-checks.sh)"
bash "$ROOT/scripts/test-release-checks.sh" "$WHEEL"

step "typing: stubtest (_native.pyi against the built module) and mypy --strict"
( cd "$EMPTY" && "$VENV/bin/python" -m mypy.stubtest missionweaveprotocol._native \
    && "$VENV/bin/python" -m mypy --strict --no-incremental -p missionweaveprotocol \
    && "$VENV/bin/python" -m mypy --strict --no-incremental \
         "$ROOT/python/tests/typing" "$ROOT/examples/python" \
    && "$VENV/bin/python" -m mypy --strict --no-incremental "$ROOT/scripts/check_wheel.py" \
         "$ROOT/scripts/check_wheel_mutate.py" "$ROOT/scripts/release-sdist.py" )

step "examples/python against the installed wheel"
for example in "$ROOT"/examples/python/*.py; do
  name="$(basename "$example" .py)"
  ( cd "$EMPTY" && "$VENV/bin/python" "$example" ) > "$EMPTY/$name.out"
  if ! diff -u "$ROOT/examples/python/$name.out" "$EMPTY/$name.out"; then
    echo "examples/python/$name.py: unexpected output" >&2
    exit 1
  fi
  echo "examples/python/$name.py: ok"
done

step "pytest"
( cd python && MWP_CONFORMANCE_BIN="$RUST_BIN" "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests "$@" )

step "done"
