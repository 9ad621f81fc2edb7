#!/usr/bin/env bash
# Store figures of issue 11 "Performance", each beside its floor measured in the same run on the
# same machine (docs/store.md, "Crash and race tests"). Not run by CI: it takes minutes and its
# figures depend on the machine and its neighbours. Prints a figures table at the end.
#
#   scripts/bench-stores.sh
#
# 1. builds the release binaries (mwp-store-worker, the SQLite and PostgreSQL examples);
# 2. starts a private PostgreSQL cluster in $MWP_PG_DIR (default target/pg-bench, not the
#    tests' cluster) with max_connections = 200, stopped on exit;
# 3. pgbench: `pgbench -i -s SCALE`, then the TPC-B-like script with 96 clients
#    (`-c 96 -j 2 -T SECONDS`): the server's floor at the same client count;
# 4. 3 `mwp-store-worker bench` processes × 32 threads on that server at once (one fresh schema,
#    group commit in each process, 16 connections each), lined up by a file barrier: the sum of
#    their Commands over their common window (first start to last end), and the sum of their
#    own rates; then the same with one round trip per read (`batch_reads=false`) and without
#    group commit, for comparison;
# 5. replay from PostgreSQL: `mwp-store-worker replay` (REPLAY renewals on one Group, then its
#    log replayed in pages of 1,000) and `bench_postgres` (synthetic Events, the store alone);
# 6. SQLite: `bench_sqlite_concurrent` (64 submitters over GroupCommit<SqliteStore>, the raw
#    SQLite floor of the same write sets alternating with it, single-submitter latency; a
#    failure is reported in the table and the run goes on), `mwp-store-worker bench` with 64
#    threads and with 1 on a SQLite file, and `mwp-store-worker replay` on a SQLite file.
#
# Knobs (environment): MWP_BENCH_SECONDS (pgbench -T, default 20), MWP_BENCH_COUNT (Commands per
# worker process, default 8000), MWP_PGBENCH_SCALE (default 32), MWP_BENCH_SQLITE_COMMANDS
# (default 6400), MWP_BENCH_REPLAY (Events of the replayed log, default 5000), MWP_BENCH_PG_ROUNDS
# (rounds of the PostgreSQL batched/unbatched pair, median reported; default 1).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${MWP_BENCH_SECONDS:-20}
count=${MWP_BENCH_COUNT:-8000}
scale=${MWP_PGBENCH_SCALE:-32}
sqlite_commands=${MWP_BENCH_SQLITE_COMMANDS:-6400}
replay=${MWP_BENCH_REPLAY:-5000}
pg_rounds=${MWP_BENCH_PG_ROUNDS:-1}
processes=3
threads=32
clients=$((processes * threads))
export MWP_PG_DIR=${MWP_PG_DIR:-$root/target/pg-bench}

# On the repository's disk (not a tmpfs): the SQLite files' fsyncs are real.
mkdir -p "$root/target"
work=$(mktemp -d "$root/target/bench-stores.XXXXXX")
cleanup() {
  bash scripts/pg-cluster.sh stop || true
  rm -rf "$work"
}
trap cleanup EXIT

log() { echo "bench-stores: $*" >&2; }
# field JSON_LINE NAME: the number after "NAME": in a JSON line.
field() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" <<<"$1" | head -n 1; }
# word LINE NAME: the word after NAME in a `name value` line.
word() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<<"$1"; }

log "load before: $(cat /proc/loadavg)"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

log "building release binaries"
# One cargo invocation: the three share one feature resolution, so nothing builds twice.
cargo build --release --locked -p missionweaveprotocol-store-harness --bin mwp-store-worker \
  -p missionweaveprotocol-store-sqlite --example bench_sqlite_concurrent \
  -p missionweaveprotocol-store-postgres --example bench_postgres >&2
target=${CARGO_TARGET_DIR:-$root/target}
worker=$target/release/mwp-store-worker

# --- PostgreSQL: a private cluster with room for pgbench's 96 clients and 3 × 16 connections.
url=$(bash scripts/pg-cluster.sh start)
pg_bin=$(dirname "$(readlink -f "$(command -v pg_ctl 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -n 1)")")
psql=$pg_bin/psql
pgbench=$pg_bin/pgbench
if [ "$("$psql" "$url" -tAc 'SHOW max_connections')" -lt 200 ]; then
  "$psql" "$url" -qc "ALTER SYSTEM SET max_connections = 200" >&2
  bash scripts/pg-cluster.sh stop
  url=$(bash scripts/pg-cluster.sh start)
fi
server_version=$("$psql" "$url" -tAc 'SHOW server_version')
log "PostgreSQL $server_version at $url, max_connections $("$psql" "$url" -tAc 'SHOW max_connections')"

log "pgbench -i -s $scale"
"$pgbench" -i -q -s "$scale" "$url" >&2 2>"$work/pgbench-init.log" || { cat "$work/pgbench-init.log" >&2; exit 1; }
log "pgbench TPC-B-like, $clients clients, $seconds s"
"$pgbench" -c "$clients" -j 2 -T "$seconds" "$url" >"$work/pgbench.out" 2>"$work/pgbench.err" || {
  cat "$work/pgbench.err" >&2
  exit 1
}
cat "$work/pgbench.out" >&2
pgbench_tps=$(sed -n 's/^tps = \([0-9]*\).*/\1/p' "$work/pgbench.out" | head -n 1)
pgbench_latency=$(sed -n 's/^latency average = \([0-9.]*\) ms.*/\1/p' "$work/pgbench.out")
# Free the server's cache and disk of pgbench's tables before our run.
"$psql" "$url" -qc "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers" >&2

# bench_processes LABEL COUNT GROUP_COMMIT [QUERY]: 3 worker processes × 32 threads on a fresh
# schema, QUERY appended to the store spec (e.g. "&batch_reads=false").
# Prints "total_commands window_seconds combined_rate sum_of_rates mean_batch p50 p99".
bench_processes() {
  local label=$1 n=$2 group_commit=$3 query=${4:-} schema spec p barrier outs=() pids=()
  schema="bench_${label}_$$_$(date +%s)"
  spec="$url?schema=$schema$query"
  barrier=$work/barrier-$label
  mkdir -p "$barrier"
  for p in $(seq 0 $((processes - 1))); do
    "$worker" bench --store "$spec" --threads "$threads" --count "$n" --group-commit "$group_commit" \
      --process "$p" --parties "$processes" --barrier "$barrier" >"$work/$label-$p.out" 2>"$work/$label-$p.err" &
    pids+=("$!")
  done
  for p in "${!pids[@]}"; do
    wait "${pids[$p]}" || { cat "$work/$label-$p.err" >&2; exit 1; }
    outs+=("$(cat "$work/$label-$p.out")")
  done
  printf '%s\n' "${outs[@]}" >&2
  printf '%s\n' "${outs[@]}" | awk '
    {
      for (i = 1; i < NF; i++) v[$i] = $(i + 1)
      total += v["commands"]; rates += v["commands_per_second"]
      if (start == "" || v["start_unix_ms"] < start) start = v["start_unix_ms"]
      if (v["end_unix_ms"] > end) end = v["end_unix_ms"]
      batch += (v["mean_batch"] == "" ? 1 : v["mean_batch"]); p50 += v["p50_ms"]
      if (v["p99_ms"] > p99) p99 = v["p99_ms"]
      if (v["duplicates"] != 0) { print "duplicates in a fresh schema" > "/dev/stderr"; exit 1 }
    }
    END {
      window = (end - start) / 1000
      printf "%d %.3f %.0f %.0f %.1f %.2f %.2f\n", total, window, total / window, rates, batch / NR, p50 / NR, p99
    }'
  "$worker" verify --store "$spec" >&2
  "$psql" "$url" -qc "DROP SCHEMA $schema CASCADE" >&2
}

# Rounds alternate batched and unbatched reads; each row reports its median round (by rate).
for round in $(seq 1 "$pg_rounds"); do
  log "round $round/$pg_rounds: 3 mwp-store-worker bench processes × $threads threads, $count Commands each, group commit"
  bench_processes "grouped$round" "$count" on >>"$work/grouped.sums"
  log "round $round/$pg_rounds: the same with one round trip per read (batch_reads=false)"
  bench_processes "unbatched$round" "$count" on "&batch_reads=false" >>"$work/unbatched.sums"
done
# median FILE: the line of FILE with the median rate (third field).
median() { sort -k3,3n "$1" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'; }
log "batched rounds (commands window rate …): $(tr '\n' ';' <"$work/grouped.sums")"
log "unbatched rounds: $(tr '\n' ';' <"$work/unbatched.sums")"
read -r pg_total pg_window pg_rate pg_rates pg_batch pg_p50 pg_p99 < <(median "$work/grouped.sums")
read -r pgu_total pgu_window pgu_rate pgu_rates pgu_batch pgu_p50 pgu_p99 < <(median "$work/unbatched.sums")
single_count=$((count / 4))
log "the same without group commit, $single_count Commands each"
bench_processes single "$single_count" off >"$work/single.sum"
read -r pg1_total pg1_window pg1_rate pg1_rates _ pg1_p50 pg1_p99 <"$work/single.sum"

log "replay from PostgreSQL: mwp-store-worker replay, $replay Events"
pg_replay_out=$("$worker" replay --store "$url?schema=bench_replay_$$" --events "$replay")
echo "$pg_replay_out" >&2
"$psql" "$url" -qc "DROP SCHEMA bench_replay_$$ CASCADE" >&2
log "replay from PostgreSQL: bench_postgres $replay (synthetic ~1 KB Events, the store alone)"
pg_example_out=$(MWP_POSTGRES_URL=$url "$target/release/examples/bench_postgres" "$replay")
echo "$pg_example_out" >&2
pg_example_replay=$(field "$(grep '"postgres_replay"' <<<"$pg_example_out")" events_per_second)

# --- SQLite, in this run's directory under target/ (the repository's disk).
log "bench_sqlite_concurrent, 64 submitters, $sqlite_commands Commands, 3 rounds"
na="n/a"
sqlite_engine=$na sqlite_raw=$na sqlite_ratio=$na sqlite_bytes=$na sqlite_p50=$na sqlite_p99=$na
sqlite_note=""
if sqlite_out=$("$target/release/examples/bench_sqlite_concurrent" --commands "$sqlite_commands" \
  --rounds 3 --threads 64 --latency 2000 --flat 0 --replay "$replay" --dir "$work" 2>"$work/sqlite.err"); then
  echo "$sqlite_out" >&2
  summary=$(grep '"sqlite_engine_over_raw"' <<<"$sqlite_out")
  sqlite_engine=$(field "$summary" median_engine_commands_per_second)
  sqlite_raw=$(field "$summary" median_raw_transactions_per_second)
  sqlite_ratio=$(field "$summary" median_ratio)
  sqlite_bytes=$(field "$(grep '"sqlite_group_commit_core_bytes"' <<<"$sqlite_out")" commands_per_second)
  latency_line=$(grep '"sqlite_single_submitter"' <<<"$sqlite_out" | head -n 1)
  sqlite_p50="$(field "$latency_line" p50_us) µs"
  sqlite_p99="$(field "$latency_line" p99_us) µs"
else
  echo "$sqlite_out" >&2
  cat "$work/sqlite.err" >&2
  sqlite_note="n/a: bench_sqlite_concurrent failed ($(tail -n 1 "$work/sqlite.err")), so this run has no raw SQLite floor."
  log "$sqlite_note"
fi

log "mwp-store-worker bench, 64 threads on a SQLite file, $sqlite_commands Commands"
sqlite_worker=$("$worker" bench --store "sqlite:$work/worker.sqlite" --threads 64 --count "$sqlite_commands")
echo "$sqlite_worker" >&2
log "mwp-store-worker bench, 1 thread on a SQLite file, 1000 Commands"
sqlite_single=$("$worker" bench --store "sqlite:$work/single.sqlite" --threads 1 --count 1000)
echo "$sqlite_single" >&2
log "replay from SQLite: mwp-store-worker replay, $replay Events"
sqlite_replay_out=$("$worker" replay --store "sqlite:$work/replay.sqlite" --events "$replay")
echo "$sqlite_replay_out" >&2

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
over_pgbench=$(awk -v a="$pg_rate" -v b="$pgbench_tps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
cat <<EOF

## Store figures ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load average before: $load_before, after: $load_after)

| figure | value | floor (same run) | issue |
| --- | --- | --- | --- |
| PostgreSQL $server_version, $processes processes × $threads submitters, group commit: Commands / common window | $pg_rate Commands/s, $over_pgbench × pgbench ($pg_total in $pg_window s; sum of the processes' own rates $pg_rates; mean batch $pg_batch; p50 $pg_p50 ms, worst p99 $pg_p99 ms) | pgbench TPC-B-like, $clients clients, scale $scale, ${seconds} s: $pgbench_tps tps (latency $pgbench_latency ms) | ≥ 3,000 Commands/s |
| the same with one round trip per read (batch_reads=false) | $pgu_rate Commands/s ($pgu_total in $pgu_window s; sum of rates $pgu_rates; mean batch $pgu_batch; p50 $pgu_p50 ms, worst p99 $pgu_p99 ms) | | |
| the same without group commit | $pg1_rate Commands/s ($pg1_total in $pg1_window s; sum of rates $pg1_rates; p50 $pg1_p50 ms, worst p99 $pg1_p99 ms) | | |
| SQLite, 64 submitters, engine over GroupCommit<SqliteStore> (bench_sqlite_concurrent, median of 3 rounds) | $sqlite_engine Commands/s | raw SQLite, same write sets: $sqlite_raw transactions/s; ratio $sqlite_ratio | ≥ 5,000/s and ratio ≥ 0.5 |
| SQLite, 64 submitters, through perform_bytes (bench_sqlite_concurrent) | $sqlite_bytes Commands/s | | |
| SQLite, mwp-store-worker bench, 64 threads, group commit | $(word "$sqlite_worker" commands_per_second) Commands/s (p50 $(word "$sqlite_worker" p50_ms) ms, p99 $(word "$sqlite_worker" p99_ms) ms, mean batch $(word "$sqlite_worker" mean_batch)) | | ≥ 5,000/s |
| SQLite, single submitter (1 thread, batches of 1) | mwp-store-worker: p50 $(word "$sqlite_single" p50_ms) ms, p99 $(word "$sqlite_single" p99_ms) ms; bench_sqlite_concurrent: p50 $sqlite_p50, p99 $sqlite_p99 | | |
| replay from SQLite, mwp-store-worker replay, one Group of $(word "$sqlite_replay_out" events) Events (≈ $(word "$sqlite_replay_out" mean_event_bytes) B), pages of 1,000 | $(word "$sqlite_replay_out" events_per_second) Events/s | | ≥ 300,000/s |
| replay from PostgreSQL, the same | $(word "$pg_replay_out" events_per_second) Events/s (bench_postgres, synthetic 1 KB Events: $pg_example_replay) | | ≥ 100,000/s |

$sqlite_note
EOF
