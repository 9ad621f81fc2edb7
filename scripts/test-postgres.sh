#!/usr/bin/env bash
# The PostgreSQL store's tests against a private cluster (scripts/pg-cluster.sh): started here
# (PostgreSQL installed from Debian's packages when missing), stopped on exit. A caller that
# already runs a server passes MWP_POSTGRES_URL and no cluster is started.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ -z "${MWP_POSTGRES_URL:-}" ]; then
  trap 'bash scripts/pg-cluster.sh stop' EXIT
  MWP_POSTGRES_URL=$(bash scripts/pg-cluster.sh start)
  export MWP_POSTGRES_URL
fi
echo "PostgreSQL store tests on $MWP_POSTGRES_URL"
cargo test --locked -p missionweaveprotocol-store-postgres "$@"
# Server processes on one database: NOTIFY and LISTEN between processes, kill -9 of one of three.
cargo test --locked -p missionweaveprotocol-server --test postgres --test faults
