#!/usr/bin/env bash
# The npm release (issue 28): cross-builds the napi addon in release mode for linux x64/arm64
# gnu/musl with cargo-zigbuild (zig from PyPI's `ziglang`), checks each .node file's ELF
# machine, libc and (gnu) newest glibc symbol version, writes the four per-platform packages
# (js/scripts/platform-packages.mjs, the napi-rs convention) and `npm pack`s them and the main
# package into OUT_DIR; then installs the main tarball with the host's platform package into a
# scratch project and verifies a signed document through it (napi), and through the main
# tarball alone (no platform package: the WebAssembly fallback).
#
#   scripts/release-npm.sh OUT_DIR
#
# Idempotent: installs only what is missing (the four rustup targets; a venv with ziglang and
# cargo-zigbuild from PyPI, $MWP_ZIG_VENV, default <repo>/.venv-zig); rewrites only its own
# files in OUT_DIR. Heavy (four release builds): not part of scripts/test-all.sh; the cheap
# checks of the same package run there (js/test/package.test.mjs, browser-bundlers.test.mjs).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -eq 1 ] || { echo "usage: scripts/release-npm.sh OUT_DIR" >&2; exit 2; }
mkdir -p "$1"
OUT="$(cd "$1" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export MWP_PROTOCOL_ROOT="${MWP_PROTOCOL_ROOT:-$ROOT/../shared/protocol}"
VENV="${MWP_ZIG_VENV:-$ROOT/.venv-zig}"
ZIGLANG_VERSION=0.17.1
CARGO_ZIGBUILD_VERSION=0.24.1
START=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$*" "$(( $(date +%s) - START ))"; }

# napi-rs triple, Rust target (gnu: the glibc floor cargo-zigbuild links against), ELF machine,
# the libc the addon must need.
TRIPLES=(linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl)
declare -A RUST=([linux-x64-gnu]=x86_64-unknown-linux-gnu [linux-arm64-gnu]=aarch64-unknown-linux-gnu
  [linux-x64-musl]=x86_64-unknown-linux-musl [linux-arm64-musl]=aarch64-unknown-linux-musl)
declare -A ZIG_SUFFIX=([linux-x64-gnu]=.2.17 [linux-arm64-gnu]=.2.17 [linux-x64-musl]= [linux-arm64-musl]=)
declare -A MACHINE=([linux-x64-gnu]='Advanced Micro Devices X86-64' [linux-arm64-gnu]=AArch64
  [linux-x64-musl]='Advanced Micro Devices X86-64' [linux-arm64-musl]=AArch64)
declare -A LIBC=([linux-x64-gnu]=libc.so.6 [linux-arm64-gnu]=libc.so.6
  [linux-x64-musl]=libc.musl-x86_64.so.1 [linux-arm64-musl]=libc.musl-aarch64.so.1)

step "tools"
source "$ROOT/scripts/setup-rust.sh"
installed=$(rustup target list --installed)
for triple in "${TRIPLES[@]}"; do
  grep -qx "${RUST[$triple]}" <<<"$installed" || rustup target add "${RUST[$triple]}"
done
if ! "$VENV/bin/python" -c "import ziglang" 2>/dev/null || [ "$("$VENV/bin/cargo-zigbuild" --version 2>/dev/null)" != "cargo-zigbuild $CARGO_ZIGBUILD_VERSION" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
fi
# cargo-zigbuild finds zig as `python -m ziglang` through the venv's python.
export PATH="$VENV/bin:$PATH"

step "the main package's dist/ (host addon, WebAssembly builds)"
bash "$ROOT/scripts/build-js.sh"

addons=()
for triple in "${TRIPLES[@]}"; do
  rust="${RUST[$triple]}"
  step "cross-build $triple ($rust${ZIG_SUFFIX[$triple]}, release)"
  # musl: a cdylib needs the C runtime linked dynamically (Node's own libc), not statically.
  if [[ $triple == *musl ]]; then
    flags_var="CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$rust")_RUSTFLAGS"
    export "$flags_var=-C target-feature=-crt-static"
  fi
  cargo zigbuild --release --locked -p missionweaveprotocol-node --target "$rust${ZIG_SUFFIX[$triple]}"
  so="$CARGO_TARGET_DIR/$rust/release/libmissionweaveprotocol_node.so"
  header=$(readelf -h "$so")
  grep -q "Machine: *${MACHINE[$triple]}" <<<"$header" || { echo "$so: not ${MACHINE[$triple]}:" >&2; echo "$header" >&2; exit 1; }
  grep -q 'Type: *DYN' <<<"$header" || { echo "$so: not a shared object" >&2; exit 1; }
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  grep -qw "${LIBC[$triple]}" <<<"$needed" || { echo "$so needs [$needed], not ${LIBC[$triple]}" >&2; exit 1; }
  if [[ $triple == *gnu ]]; then
    newest=$(readelf -V --wide "$so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" = GLIBC_2.17 ] \
      || { echo "$so needs $newest, newer than the glibc 2.17 floor" >&2; exit 1; }
  else
    newest="n/a"
  fi
  echo "$triple: $(file -b "$so" | cut -d, -f1-2); NEEDED: $needed; newest glibc symbol: $newest"
  addons+=("$triple=$so")
done

step "pack"
rm -f "$OUT"/missionweaveprotocol-*.tgz
node "$ROOT/js/scripts/platform-packages.mjs" "$OUT/npm-platforms" "${addons[@]}"
for triple in "${TRIPLES[@]}"; do
  (cd "$OUT/npm-platforms/$triple" && npm pack --silent --pack-destination "$OUT" >/dev/null)
done
(cd "$ROOT/js" && npm pack --silent --pack-destination "$OUT" >/dev/null)
rm -rf "$OUT/npm-platforms"

step "smoke test: the tarballs installed into a scratch project"
VERSION=$(node -p "require('$ROOT/js/package.json').version")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
doc="$MWP_PROTOCOL_ROOT/cryptography/vectors/signed-documents/valid/command.json"
reg="$MWP_PROTOCOL_ROOT/cryptography/keys/registry-valid.json"
check='const m = require("missionweaveprotocol"); const fs = require("node:fs");
  const v = m.verifySignedDocument("command", fs.readFileSync(process.argv[1]), fs.readFileSync(process.argv[2]));
  console.log(m.backend, v.signingHash);'
host=$(node -p "require('$ROOT/js/src/native-loader.cjs').hostTriple()")
for mode in napi wasm; do
  mkdir -p "$scratch/$mode" && echo '{"name":"smoke","version":"1.0.0","private":true}' >"$scratch/$mode/package.json"
  tarballs=("$OUT/missionweaveprotocol-$VERSION.tgz")
  [ "$mode" = napi ] && tarballs+=("$OUT/missionweaveprotocol-$host-$VERSION.tgz")
  (cd "$scratch/$mode" && npm install --no-audit --no-fund --silent "${tarballs[@]}" \
    && out=$(node -e "$check" "$doc" "$reg") && echo "$mode ($host): $out" && [ "${out%% *}" = "$mode" ])
done

step "done"
ls -l "$OUT"/missionweaveprotocol-*.tgz
echo "release-npm.sh: $(( $(date +%s) - START )) s"
