#!/usr/bin/env bash
# Where the time of one instance on PostgreSQL goes: Home Assistant → fake FCM at 64 connections for 10 s (as in
# Benchmarks/postgres.sh), then the CPU each process spent per notification (PushRelay, every PostgreSQL backend, the
# fake FCM, from /proc), and the statements PostgreSQL ran, by calls (pg_stat_statements, loaded into the throwaway
# server this script starts). BENCH_BACKEND=sqlite measures the SQLite engine the same way (no statements then).
# With PROFILE_PERF=1, `perf record -g` (cpu-clock) samples the server during the run, and its top frames by self
# time and by time with what they call are printed, demangled (as Benchmarks/profile.sh does).
# Usage: Benchmarks/postgres-profile.sh   (env: PUSHRELAY_BIN, PUSHRELAY_DEV_BIN, BENCH_PORT=18381, BENCH_CONNECTIONS=64,
#        BENCH_PG_POOL=16, BENCH_BACKEND=postgres, PROFILE_PERF=1, PROFILE_TOP=30, PROFILE_OUT=FILE keeps perf.data)
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${BENCH_PORT:-18381}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
BACKEND=${BENCH_BACKEND:-postgres}

source Benchmarks/lib.sh
source Benchmarks/postgres-lib.sh
start_postgres $((PORT + 100)) -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=top
psql_ -q -c "CREATE EXTENSION pg_stat_statements" >/dev/null

"$DEVBIN" fake-providers --out "$WORK/fakes" --apns-port 0 --fcm-port 0 > "$WORK/fakes.log" 2>&1 &
FAKES=$!
PIDS+=("$FAKES")
for _ in $(seq 1 100); do [ -f "$WORK/fakes/pushrelay.yaml" ] && break; sleep 0.1; done

env PUSHRELAY_HTTP_PORT="$PORT" PUSHRELAY_LOG_LEVEL=error PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 \
  PUSHRELAY_STORAGE_BACKEND="$BACKEND" PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" \
  PUSHRELAY_STORAGE_POSTGRES_URL="$PGURL" PUSHRELAY_STORAGE_POSTGRES_POOL_SIZE="${BENCH_PG_POOL:-16}" \
  "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>"$WORK/server.log" &
SERVER=$!
PIDS+=("$SERVER")
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
URL="http://127.0.0.1:$PORT"

wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$URL" >/dev/null
psql_ -q -c "SELECT pg_stat_statements_reset()" >/dev/null

# CPU clock ticks (user + system) of the given processes, summed.
ticks() { local t=0; for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
# PostgreSQL's postmaster and every process it started (not another PostgreSQL on the machine).
POSTMASTER=$(head -n 1 "$WORK/pg/data/postmaster.pid")
backends() { echo "$POSTMASTER" $(pgrep -P "$POSTMASTER" || true); }
s1=$(ticks "$SERVER"); p1=$(ticks $(backends)); f1=$(ticks "$FAKES")
if [ -n "${PROFILE_PERF:-}" ]; then
  perf record -e cpu-clock -F 999 -g -p "$SERVER" -o "$WORK/perf.data" -- sleep 11 2>"$WORK/perf.log" &
  PERF=$!
fi
wrk -t2 -c"$CONNECTIONS" -d10s --latency -s Benchmarks/ha.lua "$URL" > "$WORK/wrk.txt"
s2=$(ticks "$SERVER"); p2=$(ticks $(backends)); f2=$(ticks "$FAKES")
[ -z "${PERF:-}" ] || wait "$PERF" || true

hz=$(getconf CLK_TCK)
n=$(awk '/requests in/ {print $1}' "$WORK/wrk.txt")
per() { awk -v t="$1" -v n="$n" -v hz="$hz" 'BEGIN { printf "%.0f µs", t * 1e6 / hz / n }'; }
echo
echo "One instance on $BACKEND, HA Android -> fake FCM, $CONNECTIONS connections, 10 s, $(nproc) cores shared"
echo "  $(awk '/^Requests\/sec:/ {print $2}' "$WORK/wrk.txt") req/s, p50 $(awk '$1 == "50%" {print $2}' "$WORK/wrk.txt"), p99 $(awk '$1 == "99%" {print $2}' "$WORK/wrk.txt"), $n requests"
echo "  CPU per notification: PushRelay $(per $((s2 - s1))), PostgreSQL $(per $((p2 - p1))), fake FCM $(per $((f2 - f1)))"
if [ "$BACKEND" = postgres ]; then
  echo "  statements by calls (pg_stat_statements; each batched statement is one row, whatever its batch's size):"
  psql_ -c "SELECT calls, round(total_exec_time::numeric, 0) AS ms, rows,
      left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS statement
    FROM pg_stat_statements ORDER BY calls DESC LIMIT 15"
  echo "  transactions committed: $(psql_ -At -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'")"
fi
if [ -n "${PROFILE_PERF:-}" ]; then
  TOP=${PROFILE_TOP:-30}
  [ -z "${PROFILE_OUT:-}" ] || cp "$WORK/perf.data" "$PROFILE_OUT"
  frames() { grep -E '^ +[0-9]' | head -n "$TOP" | swift demangle --simplified | sed -E 's/ +- +- *$//; s/ +$//'; }
  echo
  echo "Top $TOP frames of the server by self time (perf report --no-children; the CPU figures above include perf's cost):"
  perf report -i "$WORK/perf.data" --no-children --sort symbol --stdio -g none --percent-limit 0.3 2>/dev/null | frames || true
  echo
  echo "Top $TOP frames of the server by time spent in them and what they call (perf report --children):"
  perf report -i "$WORK/perf.data" --children --sort symbol --stdio -g none --percent-limit 2 2>/dev/null | frames || true
fi
