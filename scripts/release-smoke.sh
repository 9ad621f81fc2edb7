#!/usr/bin/env bash
# Smoke tests of the release artifacts (scripts/release.sh runs this on dist/).
#
#   scripts/release-smoke.sh [DIST]        (default <repo>/dist)
#
# What runs where (docs/release.md has the output):
#   1. the manylinux2014 x86_64 wheel in a fresh venv: the conformance console script (all 150
#      evaluations) and examples/python/quickstart.py (sign a Command, verify it, reject a
#      tampered copy; stdout must equal quickstart.out);
#   2. the aarch64 manylinux2014 wheel under qemu-aarch64-static, in Debian's arm64 Python 3.11
#      (packages unpacked into a private root, nothing installed on the machine), with pydantic's
#      aarch64 wheels from PyPI: the same two checks;
#   3. the static musl binaries: x86_64 natively, aarch64 under qemu-aarch64-static: the
#      conformance command on the embedded bundles and `--bundle behavior`, the server's --help;
#   4. the musllinux_1_2 x86_64 wheel in a musl CPython 3.11 built here from Debian's source
#      package with musl-gcc (cached): import, and the conformance run through _native.run_cli. The aarch64 musl wheel is NOT run
#      (no aarch64 musl Python); its tag and contents are checked, and the aarch64 musl
#      binaries of step 3 are the same code;
#   5. the sdist: `pip wheel` of the tarball alone (MWP_PROTOCOL_ROOT unset, no ../shared beside
#      it), the wheel's tag and contents checked, installed in a fresh venv, the conformance
#      console script run. Last: it compiles the workspace crates from the sdist's sources.
#      MWP_RELEASE_SKIP_SDIST_BUILD=1 leaves it out (and says so).
# MWP_SMOKE_STEPS="1 5" runs only the steps named (default: all five).
# Environment: CARGO_TARGET_DIR (the release's; the arm64 and musl Pythons are cached under
# $CARGO_TARGET_DIR/release-smoke, the sdist build's registry crates in
# $CARGO_TARGET_DIR/release-sdist).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIST="$(cd "${1:-$ROOT/dist}" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
CACHE="$CARGO_TARGET_DIR/release-smoke"
VERSION="$(python3 -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["workspace"]["package"]["version"])' "$ROOT/Cargo.toml")"
PYDANTIC=(pydantic==2.14.4)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
step() { printf '\n--- smoke: %s (%ss)\n' "$1" "$SECONDS"; }
# MWP_SMOKE_STEPS (space-separated, default all): run only those steps, e.g. "1 5".
read -r -a STEPS <<<"${MWP_SMOKE_STEPS:-1 2 3 4 5}"
want() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }
mkdir -p "$CACHE"
# A venv on the host's Python: step 1 installs the x86_64 wheel into it; steps 2 and 4 use its
# pip to install wheels of other platforms into a directory.
python3 -m venv "$WORK/x86-venv"

# The two checks every installed wheel passes: console script, quickstart output.
check_installed() {  # PYTHON_COMMAND...
  ( cd "$WORK" && "$@" -c 'import sys; from missionweaveprotocol.cli import conformance; sys.exit(conformance([]))' )
  ( cd "$WORK" && "$@" "$ROOT/examples/python/quickstart.py" ) > "$WORK/quickstart.out"
  diff -u "$ROOT/examples/python/quickstart.out" "$WORK/quickstart.out"
  echo "examples/python/quickstart.py: output equal to quickstart.out"
  cat "$WORK/quickstart.out"
}

if want 1; then
step "1. manylinux2014 x86_64 wheel in a fresh venv (host Python $(python3 -c 'import platform; print(platform.python_version())'))"
"$WORK/x86-venv/bin/python" -m pip install -q --disable-pip-version-check \
  "$DIST"/python/missionweaveprotocol-"$VERSION"-cp39-abi3-manylinux*_x86_64.whl
( cd "$WORK" && "$WORK/x86-venv/bin/missionweaveprotocol-conformance" )
check_installed "$WORK/x86-venv/bin/python"
fi

if want 2; then
step "2. manylinux2014 aarch64 wheel under qemu-aarch64-static (Debian arm64 Python 3.11)"
ARM_ROOT="$CACHE/arm64-root"
if [ ! -x "$ARM_ROOT/usr/bin/python3.11" ]; then
  # A private apt state: the machine's dpkg architectures and package lists stay untouched.
  apt_dir="$CACHE/arm64-apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
  touch "$apt_dir/status"
  apt_opts=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o "Dir::State::Lists=$apt_dir/lists"
            -o "Dir::Cache=$apt_dir/cache" -o "Dir::State::status=$apt_dir/status")
  apt-get "${apt_opts[@]}" -qq update
  ( cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download python3.11-minimal libpython3.11-minimal \
      libpython3.11-stdlib libc6 zlib1g libexpat1 libffi8 libssl3 libgcc-s1 libbz2-1.0 liblzma5 \
      libuuid1 libsqlite3-0 libncursesw6 libtinfo6 libreadline8 libdb5.3 libcrypt1 libnsl2 libtirpc3 )
  rm -rf "$ARM_ROOT.tmp" && mkdir -p "$ARM_ROOT.tmp"
  for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$ARM_ROOT.tmp"; done
  rm -rf "$ARM_ROOT" && mv "$ARM_ROOT.tmp" "$ARM_ROOT"
fi
arm_site="$WORK/arm64-site"
# Step 1's venv installs for the arm64 interpreter: binary wheels for that platform only.
"$WORK/x86-venv/bin/python" -m pip install -q --disable-pip-version-check --target "$arm_site" --only-binary=:all: \
  --platform manylinux2014_aarch64 --python-version 3.11 --implementation cp "${PYDANTIC[@]}"
"$WORK/x86-venv/bin/python" -m pip install -q --disable-pip-version-check --target "$arm_site" --no-deps \
  --platform manylinux2014_aarch64 --python-version 3.11 --implementation cp --only-binary=:all: \
  "$DIST"/python/missionweaveprotocol-"$VERSION"-cp39-abi3-manylinux*_aarch64.whl
arm_python=(env PYTHONPATH="$arm_site" qemu-aarch64-static -L "$ARM_ROOT" "$ARM_ROOT/usr/bin/python3.11")
"${arm_python[@]}" -c 'import platform, missionweaveprotocol._native as n; print("imported", n.__file__.rsplit("/",1)[-1], "on", platform.machine(), platform.python_version())'
check_installed "${arm_python[@]}"
fi

if want 3; then
for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
  case "$target" in
    x86_64-*) run=() ;;
    aarch64-*) run=(qemu-aarch64-static) ;;
  esac
  step "3. static binaries $target ${run[*]:-(native)}"
  conformance="$DIST/bin/missionweaveprotocol-conformance-$VERSION-$target"
  server="$DIST/bin/missionweaveprotocol-server-$VERSION-$target"
  file -b "$conformance" "$server"
  ( cd "$WORK" && "${run[@]}" "$conformance" --version && "${run[@]}" "$conformance" \
      && "${run[@]}" "$conformance" --bundle behavior )
  "${run[@]}" "$server" --help | head -n 5
  "${run[@]}" "$server" --version
done
fi

if want 4; then
step "4. musllinux_1_2 x86_64 wheel in a musl CPython 3.11 (built here from Debian's python3.11 source)"
# No musl Python can be downloaded here (Alpine, python-build-standalone: not reachable; Debian
# ships none), so one is built once from Debian's source package with musl-gcc (Debian's musl
# 1.2.3; musllinux_1_2 needs musl >= 1.2) and cached. Built without OpenSSL, ctypes, zlib and
# the other modules whose libraries are glibc-only here; the package and pydantic need none.
MUSL_PY="$CACHE/musl-python/bin/python3.11"
if [ ! -x "$MUSL_PY" ]; then
  command -v musl-gcc >/dev/null || { apt-get update -qq && apt-get install -y -qq musl musl-tools musl-dev; }
  src_apt="$CACHE/src-apt"
  mkdir -p "$src_apt/lists/partial" "$src_apt/cache/archives/partial" "$src_apt/src" "$src_apt/sources.d"
  touch "$src_apt/status"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    > "$src_apt/sources.d/src.sources"
  src_opts=(-o "Dir::State::Lists=$src_apt/lists" -o "Dir::Cache=$src_apt/cache" -o "Dir::State::status=$src_apt/status"
            -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$src_apt/sources.d")
  apt-get "${src_opts[@]}" -qq update
  ( cd "$src_apt/src" && apt-get "${src_opts[@]}" -qq --download-only source python3.11 )
  src="$CACHE/musl-python-src"
  rm -rf "$src" && mkdir -p "$src"
  tar xzf "$src_apt"/src/python3.11_*.orig.tar.gz -C "$src" --strip-components=1
  # musl-gcc wraps the host gcc, whose -print-multiarch names glibc: configure refuses the
  # mismatch and setup.py would add glibc's include directory, so the wrapper answers for musl.
  printf '#!/bin/sh\ncase "$1" in -print-multiarch|--print-multiarch) echo x86_64-linux-musl; exit 0 ;; esac\nexec musl-gcc "$@"\n' > "$CACHE/musl-cc"
  chmod +x "$CACHE/musl-cc"
  # binascii (base64, which pydantic imports) is built in without zlib: configure found the
  # host's zlib, which is glibc-only; binascii then computes crc32 from its own table.
  printf '*static*\nbinascii binascii.c\n' > "$src/Modules/Setup.local"
  no_zlib=(MODULE_BINASCII_CFLAGS= MODULE_BINASCII_LDFLAGS=)
  ( cd "$src" && ./configure -q CC="$CACHE/musl-cc" --prefix="$CACHE/musl-python" --disable-shared \
      --without-ensurepip --disable-test-modules && make -j2 -s "${no_zlib[@]}" \
      && make -s "${no_zlib[@]}" install ) > "$CACHE/musl-python-build.log" 2>&1
fi
echo "interpreter: $(file -b "$MUSL_PY" | cut -d, -f1-5)"
musl_site="$WORK/musl-site"
# The wheel alone (--no-deps): pydantic-core has no musllinux wheel for its pinned version on the
# index here, and this CPython has no ssl (cli.py imports it), so the checks are the import and
# the conformance command through `_native.run_cli` (what the console script calls).
"$WORK/x86-venv/bin/python" -m pip install -q --disable-pip-version-check --target "$musl_site" --no-deps \
  --platform musllinux_1_2_x86_64 --python-version 3.11 --implementation cp --only-binary=:all: \
  "$DIST"/python/missionweaveprotocol-"$VERSION"-cp39-abi3-musllinux_1_2_x86_64.whl
musl_python=(env PYTHONPATH="$musl_site" "$MUSL_PY")
( cd "$WORK" && "${musl_python[@]}" -c 'import platform, missionweaveprotocol._native as n; print("imported", n.__file__.rsplit("/",1)[-1], "on", platform.machine(), platform.python_version())' \
    && "${musl_python[@]}" -c 'import sys, missionweaveprotocol._native as n; sys.exit(n.run_cli([], sys.stdout, sys.stderr))' )
echo "NOT RUN in musl: examples/python/quickstart.py and the console script (pydantic-core for musl and ssl unavailable)."
echo "NOT RUN: the musllinux_1_2 aarch64 wheel (no aarch64 musl Python: building one would mean cross-compiling CPython; its tag and contents are checked, and the same code built for aarch64 musl runs in step 3)."
fi

if [ "${MWP_RELEASE_SKIP_SDIST_BUILD:-0}" = 1 ]; then
  echo "NOT RUN: 5. the sdist build (MWP_RELEASE_SKIP_SDIST_BUILD=1)"
elif want 5; then
step "5. sdist builds alone: pip wheel missionweaveprotocol-$VERSION.tar.gz"
mkdir -p "$WORK/sdist-build"
cp "$DIST/python/missionweaveprotocol-$VERSION.tar.gz" "$WORK/sdist-build/"
[ ! -e "$WORK/shared" ] && [ ! -e /tmp/shared ]
python3 -m venv "$WORK/sdist-venv"
# The sdist is built as pip builds it for a user (an isolated build env with maturin from
# PyPI), from its own sources: the workspace crates compile from the unpacked tarball (pip
# unpacks into a new directory each run, so they compile every run). A target dir of its own
# (a plain cargo build, no zig: sharing the wheels' would make each rebuild the other's units)
# keeps the registry crates compiled by the first run.
( cd "$WORK/sdist-build" && env -u MWP_PROTOCOL_ROOT CARGO_TARGET_DIR="$CARGO_TARGET_DIR/release-sdist" \
    "$WORK/sdist-venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-deps \
    -w "$WORK/sdist-build/out" "missionweaveprotocol-$VERSION.tar.gz" )
built="$(ls "$WORK"/sdist-build/out/missionweaveprotocol-*.whl)"
# pip tags the wheel it builds here linux_x86_64 (for this machine, not for an index).
python3 "$ROOT/scripts/check_wheel.py" --local "$built"
"$WORK/sdist-venv/bin/python" -m pip install -q --disable-pip-version-check "$built"
( cd "$WORK" && "$WORK/sdist-venv/bin/missionweaveprotocol-conformance" )

fi

step "smoke tests passed: ${STEPS[*]}"
