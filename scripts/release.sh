#!/usr/bin/env bash
# Release build (issue 28): writes dist/ with everything a user installs, then smoke-tests it.
#
#   scripts/release.sh            idempotent; installs what is missing (see "tools")
#
# dist/python/  abi3 wheels: manylinux2014 (= manylinux_2_17) x86_64 and aarch64, musllinux_1_2
#               x86_64 and aarch64 (maturin --zig: zig links against old glibc / musl), and the
#               sdist, which carries the pinned protocol bundle (scripts/release-sdist.py)
# dist/bin/     static musl missionweaveprotocol-server and -conformance, x86_64 and aarch64
# dist/npm/     scripts/release-npm.sh's output, when that script exists
# dist/sbom/    CycloneDX 1.5 SBOMs of the shipped artifacts (cargo-cyclonedx)
# dist/SHA256SUMS      every file above
# Every wheel is checked (scripts/check_wheel.py: contents and platform tag, plus `auditwheel
# show`); scripts/release-smoke.sh runs the artifacts (docs/release.md has its output).
#
# Environment: CARGO_TARGET_DIR (default <repo>/target; the builds use it and directories
# under it, see "target directories"), MWP_PROTOCOL_ROOT (default ../shared/protocol),
# MWP_RELEASE_VENV (default <repo>/.venv-release), MWP_RELEASE_SKIP_SMOKE=1 to build and check
# only, MWP_RELEASE_SKIP_SDIST_BUILD=1 to leave out the smoke test that builds the sdist (the
# longest part of a warm run, see docs/release.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_INCREMENTAL=0
# Not exported when unset: build.rs reruns (and every crate above it rebuilds) when the
# variable changes, so the builds see exactly what a plain `cargo build` sees.
PROTOCOL_ROOT="${MWP_PROTOCOL_ROOT:-$ROOT/../shared/protocol}"
VENV="${MWP_RELEASE_VENV:-$ROOT/.venv-release}"
DIST="$ROOT/dist"
WHEEL_TARGETS=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
BIN_TARGETS=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
BINS=(missionweaveprotocol-server missionweaveprotocol-conformance)
step() { printf '\n=== release: %s (%ss)\n' "$1" "$SECONDS"; }

# Target directories: one per way of linking, so that a second run rebuilds nothing. Cargo
# fingerprints each unit's linker, and the linker configured for the host triple also links
# the build scripts and proc-macros. `maturin --zig` (its built-in cargo-zigbuild 0.24.0
# wrappers) and the cargo-zigbuild 0.24.1 command write different linker paths, and only a
# build for x86_64-unknown-linux-gnu sets one for the host units: sharing one directory, each
# build found the previous one's units stale and rebuilt them (and everything above them).
T="$CARGO_TARGET_DIR"
WHEEL_HOST_DIR="$T"                     # maturin --zig, x86_64 gnu: host units linked by zig
WHEEL_CROSS_DIR="$T/release-cross-wheels"  # maturin --zig, the other three: host units plain
BIN_DIR="$T/release-static-bins"        # cargo-zigbuild, musl
NPM_DIR="$T/release-npm"                # scripts/build-js.sh: plain cargo (host addon, wasm)
NPM_CROSS_DIR="$T/release-npm-cross"    # scripts/release-npm.sh: cargo-zigbuild, four triples

step "tools"
installed_targets="$(rustup target list --installed)"
for target in "${WHEEL_TARGETS[@]}"; do
  grep -qx "$target" <<<"$installed_targets" || rustup target add "$target"
done
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# ziglang: the linker for old-glibc and musl targets (maturin --zig, cargo-zigbuild);
# auditwheel: `auditwheel show`, the tag report beside scripts/check_wheel.py.
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
  "maturin==1.16.0" "ziglang==0.17.1" "auditwheel==6.8.2"
export PATH="$VENV/bin:$HOME/.cargo/bin:$PATH"
command -v cargo-zigbuild >/dev/null || cargo install --locked cargo-zigbuild --version 0.24.1
command -v cargo-cyclonedx >/dev/null || cargo install --locked cargo-cyclonedx --version 0.5.9
if ! command -v qemu-aarch64-static >/dev/null; then
  apt-get update -qq && apt-get install -y -qq qemu-user-static
fi

step "one version"
bash scripts/check-version.sh
VERSION="$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml","rb"))["workspace"]["package"]["version"])')"

rm -rf "$DIST"
mkdir -p "$DIST/python" "$DIST/bin"

build_wheel() {  # TARGET: manylinux2014 for glibc, musllinux_1_2 for musl
  local target="$1" compat dir="$WHEEL_CROSS_DIR"
  [ "$target" = x86_64-unknown-linux-gnu ] && dir="$WHEEL_HOST_DIR"
  case "$target" in
    *-gnu) compat=manylinux2014 ;;
    *-musl) compat=musllinux_1_2 ;;
  esac
  step "wheel $target ($compat)"
  ( cd python && CARGO_TARGET_DIR="$dir" maturin build --release --locked --zig --compatibility "$compat" \
      --target "$target" --out "$DIST/python" )
}
# The four wheels, the sdist and their checks first, then the static binaries and the npm
# package (the order only matters for a cold cache: what only this script builds comes first).
build_wheel x86_64-unknown-linux-gnu
build_wheel aarch64-unknown-linux-gnu
build_wheel aarch64-unknown-linux-musl
build_wheel x86_64-unknown-linux-musl

step "sdist (with the pinned protocol bundle)"
( cd python && maturin sdist --out "$DIST/python" )
python3 scripts/release-sdist.py "$DIST"/python/missionweaveprotocol-"$VERSION".tar.gz "$PROTOCOL_ROOT"

step "wheel contents and platform tags"
python3 scripts/check_wheel.py "$DIST"/python/*.whl
for wheel in "$DIST"/python/*.whl; do
  # auditwheel 6.8.2 fails with "ELFError: Magic number does not match" on the musllinux
  # wheels on this glibc host; check_wheel.py above is the check, this is the second opinion.
  # On failure only its last line (the error) is kept, not the traceback.
  if report="$(auditwheel show "$wheel" 2>&1)"; then
    sed 's/^/  /' <<<"$report"
  else
    echo "  auditwheel show failed on $(basename "$wheel"): $(tail -n 1 <<<"$report")"
  fi
done

step "SBOM (CycloneDX 1.5 JSON from cargo metadata, one per shipped artifact)"
# `--describe binaries` writes one SBOM beside each Cargo.toml for every bin/cdylib of the
# workspace; the three that ship are kept (the Python extension, which links the server and
# conformance crates too; the server; the conformance command), the others deleted.
mkdir -p "$DIST/sbom"
cargo cyclonedx --manifest-path Cargo.toml --format json --spec-version 1.5 --describe binaries \
  --target x86_64-unknown-linux-gnu -q
mv bindings/python/_native_cdylib.cdx.json "$DIST/sbom/missionweaveprotocol-python-_native.cdx.json"
mv core/server/missionweaveprotocol-server_bin.cdx.json "$DIST/sbom/missionweaveprotocol-server.cdx.json"
mv core/cli/missionweaveprotocol-conformance_bin.cdx.json "$DIST/sbom/missionweaveprotocol-conformance.cdx.json"
find bindings core examples -name '*.cdx.json' -not -path '*/node_modules/*' -delete
python3 - "$DIST"/sbom/*.cdx.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    bom = json.load(open(path))
    assert bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.5", path
    print(f"{path.rsplit('/', 1)[-1]}: CycloneDX {bom['specVersion']}, {len(bom['components'])} components")
PY

for target in "${BIN_TARGETS[@]}"; do
  step "static binaries $target"
  CARGO_TARGET_DIR="$BIN_DIR" cargo zigbuild --release --locked --target "$target" \
    -p missionweaveprotocol-server -p missionweaveprotocol-cli --bins
  for bin in "${BINS[@]}"; do
    out="$DIST/bin/$bin-$VERSION-$target"
    cp "$BIN_DIR/$target/release/$bin" "$out"
    description="$(file -b "$out")"
    echo "$(basename "$out"): $description"
    # Rust's musl targets link static-pie executables: static, and still position-independent.
    case "$description" in
      *"statically linked"* | *"static-pie linked"*) ;;
      *) echo "error: $out is not statically linked" >&2; exit 1 ;;
    esac
  done
done

if [ -x scripts/release-npm.sh ]; then
  step "npm package (scripts/release-npm.sh)"
  CARGO_TARGET_DIR="$NPM_DIR" MWP_CROSS_TARGET_DIR="$NPM_CROSS_DIR" scripts/release-npm.sh "$DIST/npm"
fi

step "checksums"
( cd "$DIST" && find . -type f ! -name SHA256SUMS | sort | sed 's|^\./||' | xargs sha256sum > SHA256SUMS )

if [ "${MWP_RELEASE_SKIP_SMOKE:-0}" != 1 ]; then
  step "smoke tests"
  bash scripts/release-smoke.sh "$DIST"
fi

step "dist/"
( cd "$DIST" && find . -type f | sort | sed 's|^\./||' | while read -r f; do
    printf '%10s  %s\n' "$(stat -c %s "$f")" "$f"
  done )
step "done"
