#!/usr/bin/env bash
# Builds the npm package's js/dist/ for this machine: the napi addon (release), the full and the
# verify-only WebAssembly builds through wasm-bindgen, then js/scripts/build.mjs. Shared by
# scripts/test-js.sh (which then tests it) and scripts/release-npm.sh (which then packs it).
#
# Idempotent: installs only what is missing (wasm32 target, wasm-bindgen-cli 0.2.129, the npm
# packages of js/package-lock.json). One target dir: $CARGO_TARGET_DIR, by default <repo>/target.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export MWP_PROTOCOL_ROOT="${MWP_PROTOCOL_ROOT:-$ROOT/../shared/protocol}"
WASM_BINDGEN_VERSION=0.2.129

step() { printf '\n== %s\n' "$*"; }

step "tools"
# cargo on PATH (with ~/.cargo/bin, where wasm-bindgen is installed), rustfmt/clippy, wasm32.
source "$ROOT/scripts/setup-rust.sh"
command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm (Node >= 20) are required" >&2; exit 1; }
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  # About 6 minutes; --locked resolves with this version's own lockfile.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked
fi
if [ ! -f "$ROOT/js/node_modules/.package-lock.json" ] || [ "$ROOT/js/package-lock.json" -nt "$ROOT/js/node_modules/.package-lock.json" ]; then
  (cd "$ROOT/js" && npm ci --no-audit --no-fund)
fi

step "build: napi addon (release)"
cargo build --release --locked -p missionweaveprotocol-node
step "build: WebAssembly (release, wasm32-unknown-unknown)"
cargo build --release --locked -p missionweaveprotocol-wasm --target wasm32-unknown-unknown
WASM="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/missionweaveprotocol_wasm.wasm"
rm -rf "$CARGO_TARGET_DIR/wasm-bindgen"
wasm-bindgen --target web --out-dir "$CARGO_TARGET_DIR/wasm-bindgen/web" "$WASM"
wasm-bindgen --target nodejs --out-dir "$CARGO_TARGET_DIR/wasm-bindgen/node" "$WASM"
step "build: verify-only WebAssembly (bindings/wasm-verify, profile wasm-size)"
# No embedded conformance bundles, no admission, no scheduler/authority; optimized for size.
cargo build --profile wasm-size --locked -p missionweaveprotocol-wasm-verify --target wasm32-unknown-unknown
VERIFY_WASM="$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-size/missionweaveprotocol_wasm_verify.wasm"
wasm-bindgen --target web --remove-name-section --remove-producers-section \
  --out-dir "$CARGO_TARGET_DIR/wasm-bindgen/verify-web" "$VERIFY_WASM"
step "build: js/dist (js/scripts/build.mjs)"
node "$ROOT/js/scripts/build.mjs" --target-dir "$CARGO_TARGET_DIR"
