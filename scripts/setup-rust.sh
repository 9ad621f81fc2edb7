#!/usr/bin/env bash
# Installs what the Rust build needs on a fresh machine; idempotent.
set -euo pipefail
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "error: no Rust toolchain (cargo) found; install rustup with Rust >= 1.88" >&2
    exit 1
  fi
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
root=$(cd "$(dirname "$0")/.." && pwd)
protocol=${MWP_PROTOCOL_ROOT:-$root/../shared/protocol}
if [ ! -d "$protocol" ]; then
  echo "error: protocol bundle not found at $protocol; set MWP_PROTOCOL_ROOT" >&2
  exit 1
fi
