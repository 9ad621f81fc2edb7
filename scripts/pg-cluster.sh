#!/usr/bin/env bash
# A private PostgreSQL cluster for the store tests and benchmarks (docs/store.md, "PostgreSQL
# backend"): installs Debian's `postgresql` package when initdb/pg_ctl are missing, creates a
# cluster in a directory of its own, serves it on a free loopback port (and a unix socket in
# that directory), creates database `mwp` with superuser `mwp` (trust auth: loopback only,
# tests only) and prints its URL.
#
#   scripts/pg-cluster.sh start    # idempotent: reuses a running cluster; prints the URL
#   scripts/pg-cluster.sh url      # prints the URL of the running cluster
#   scripts/pg-cluster.sh status   # "running URL" (exit 0) or "stopped" (exit 3)
#   scripts/pg-cluster.sh stop     # idempotent
#
# The directory is $MWP_PG_DIR, by default <repo>/target/pg-cluster. Only the URL goes to
# standard output; everything else goes to standard error. PostgreSQL refuses to run as root:
# as root, initdb and pg_ctl run as the `postgres` OS user (created by the package), which owns
# the data directory.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${MWP_PG_DIR:-$root/target/pg-cluster}
user=mwp
database=mwp

log() { echo "pg-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

# The newest PostgreSQL server binaries: on PATH, or Debian's versioned directories.
find_bin() {
  local candidate
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    # Debian links the binaries from a versioned directory that also holds psql, createdb.
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return 0
  fi
  candidate=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$candidate" ] && [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then
    echo "$candidate"
    return 0
  fi
  return 1
}

install_server() {
  [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed and we are not root: apt-get install postgresql"
  log "installing Debian's postgresql package"
  # The package would create and start a default cluster on port 5432; we bring our own.
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y -o Dpkg::Options::=--force-confold postgresql >&2
}

bin=$(find_bin || true)
need_bin() {
  if [ -z "$bin" ]; then
    install_server
    bin=$(find_bin) || die "postgresql installed, but initdb/pg_ctl not found"
  fi
}

# Runs a server command as the cluster's owner: `postgres` when we are root.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

mkdir -p "$dir"
# The data directory lives in $dir unless the owner cannot reach it (a parent not traversable
# by `postgres`): then in a private directory under /tmp named after $dir.
data_dir() {
  if [ -f "$dir/datadir" ]; then
    cat "$dir/datadir"
    return
  fi
  local data=$dir/data
  if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$dir"; then
    data=/tmp/mwp-pg-$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
  fi
  echo "$data" >"$dir/datadir"
  echo "$data"
}

# The unix socket directory: the data directory, unless its path is too long for a socket
# address (108 bytes including ".s.PGSQL.NNNNN").
socket_dir() {
  local data=$1
  if [ "${#data}" -le 80 ]; then
    echo "$data"
  else
    echo "/tmp/mwp-pg-sock-$(printf '%s' "$data" | cksum | cut -d' ' -f1)"
  fi
}

running() {
  local data=$1
  [ -n "$bin" ] && [ -f "$data/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
  need_bin
  local data sockets port attempt
  data=$(data_dir)
  if running "$data"; then
    # Reuse it; the port is line 4 of postmaster.pid.
    port=$(sed -n 4p "$data/postmaster.pid")
    create_database "$port"
    return 0
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    log "creating a cluster in $data ($bin)"
    mkdir -p "$data"
    rm -rf "${data:?}"/*
    [ "$(id -u)" = 0 ] && chown postgres: "$data"
    chmod 700 "$data"
    as_owner "$bin/initdb" -D "$data" -U "$user" --auth=trust -E UTF8 --locale=C >&2
    # Room for the store's per-key transaction locks in large group commits.
    echo "max_locks_per_transaction = 256" >>"$data/postgresql.conf"
  fi
  sockets=$(socket_dir "$data")
  if [ ! -d "$sockets" ]; then
    mkdir -p "$sockets"
    [ "$(id -u)" = 0 ] && chown postgres: "$sockets"
  fi
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$(cat "$dir/port" 2>/dev/null || true)
    if [ -z "$port" ] || ! port_free "$port"; then
      port=$((20000 + RANDOM % 20000))
      port_free "$port" || continue
    fi
    # Loopback only; the log stays in the data directory (owned by the server's user).
    if as_owner "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
      -o "-p $port -c listen_addresses=127.0.0.1 -k $sockets" start >&2; then
      echo "$port" >"$dir/port"
      break
    fi
    log "start on port $port failed (attempt $attempt); tail of the log:"
    tail -n 5 "$data/server.log" >&2 || true
    rm -f "$dir/port"
    port=
  done
  [ -n "$port" ] || die "could not start PostgreSQL"
  create_database "$port"
}

# Creates database `mwp` unless it exists, then records and prints the URL.
create_database() {
  local port=$1 url
  if ! "$bin/psql" -h 127.0.0.1 -p "$port" -U "$user" -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1; then
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$user" "$database" >&2
  fi
  url="postgresql://$user@127.0.0.1:$port/$database"
  echo "$url" >"$dir/url"
  echo "$url"
}

stop() {
  local data
  data=$(data_dir)
  if running "$data"; then
    as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >&2
  fi
  rm -f "$dir/url"
}

command=${1:-}
case "$command" in
  start|stop)
    # One start or stop at a time (test binaries may start the cluster concurrently). `-o`:
    # the lock's descriptor is not inherited, so a server started here never holds it.
    flock -o "$dir/lock" "$0" "locked-$command"
    ;;
  locked-start) start ;;
  locked-stop) stop ;;
  url)
    data=$(data_dir)
    running "$data" && [ -f "$dir/url" ] || die "no cluster is running in $dir (run: $0 start)"
    cat "$dir/url"
    ;;
  status)
    data=$(data_dir)
    if running "$data" && [ -f "$dir/url" ]; then
      echo "running $(cat "$dir/url")"
    else
      echo "stopped"
      exit 3
    fi
    ;;
  *)
    die "usage: $0 start|stop|url|status"
    ;;
esac
