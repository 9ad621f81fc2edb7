# Sourced by the test scripts whose tests need a PostgreSQL server (scripts/test-python.sh,
# scripts/test-js.sh): `mwp_pg_env` exports MWP_POSTGRES_URL, starting the private cluster
# (scripts/pg-cluster.sh: installs PostgreSQL from Debian's packages when missing) unless the
# caller already passes a server; `mwp_pg_cleanup` (run it from the script's EXIT trap) stops the
# cluster again if, and only if, `mwp_pg_env` started it — a cluster that was already running
# (another script, a developer) is left running. Both are idempotent.

mwp_pg_env() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  MWP_PG_SCRIPT="$root/scripts/pg-cluster.sh"
  if [ -n "${MWP_POSTGRES_URL:-}" ]; then
    echo "PostgreSQL: the server of MWP_POSTGRES_URL" >&2
    return 0
  fi
  if ! bash "$MWP_PG_SCRIPT" status >/dev/null 2>&1; then
    MWP_PG_STARTED=1
  fi
  MWP_POSTGRES_URL=$(bash "$MWP_PG_SCRIPT" start)
  export MWP_POSTGRES_URL
  echo "PostgreSQL: private cluster at $MWP_POSTGRES_URL" >&2
}

mwp_pg_cleanup() {
  if [ "${MWP_PG_STARTED:-}" = 1 ]; then
    MWP_PG_STARTED=
    bash "$MWP_PG_SCRIPT" stop || true
  fi
}
