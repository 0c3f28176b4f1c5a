#!/usr/bin/env bash
# Home Assistant → FCM (the strict fake FCM on loopback) on each storage engine, in one run:
#   sqlite    one instance on SQLite (the embedded default);
#   postgres  one instance on PostgreSQL (a throwaway server this script starts: initdb into a temporary directory);
#   two       two instances on that PostgreSQL database, each loaded by its own wrk with half the connections (the sum
#             is the service's rate; a load balancer in front would do the same).
# For each: req/s, p50, p99, non-2xx; PushRelay's own CPU per notification (utime + stime of the server process(es)
# over the measured run, from /proc, divided by the requests); PostgreSQL's CPU per notification (the same, summed
# over the postmaster and every process it started: backends, WAL writer, checkpointer); the statements PostgreSQL
# ran per notification (pg_stat_statements, reset before the run: every statement is one round trip, BEGIN and COMMIT
# included) and the transactions it committed per notification (pg_stat_database); then GET /health on the same
# server for 5 s, its req/s and the server's CPU per request.
# The fakes, wrk and PostgreSQL share the machine's cores with the server(s). Every request carries a distinct push
# token (Benchmarks/ha.lua) and is counted in the database before its answer.
# Usage: Benchmarks/postgres.sh   (env: BENCH_DURATION=10s BENCH_CONNECTIONS=64 BENCH_THREADS=2 BENCH_PORT=18181;
#        BENCH_ROWS="sqlite postgres two" chooses the rows; BENCH_PG_POOL=16 sets storage.postgres.pool_size;
#        PUSHRELAY_BIN and PUSHRELAY_DEV_BIN measure given binaries instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18181}
ROWS=${BENCH_ROWS:-sqlite postgres two}
HZ=$(getconf CLK_TCK)

source Benchmarks/lib.sh
source Benchmarks/postgres-lib.sh
# pg_stat_statements counts the statements when the distribution ships it (Debian's postgresql does).
STATEMENTS=0
if [ -f "$PGBIN/../lib/pg_stat_statements.so" ]; then
  STATEMENTS=1
  start_postgres $((PORT + 100)) -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=top
  psql_ -q -c "CREATE EXTENSION pg_stat_statements" >/dev/null
else
  start_postgres $((PORT + 100))
fi
POSTMASTER=$(head -n 1 "$WORK/pg/data/postmaster.pid")

"$DEVBIN" fake-providers --out "$WORK/fakes" --apns-port 0 --fcm-port 0 > "$WORK/fakes.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do [ -f "$WORK/fakes/pushrelay.yaml" ] && break; sleep 0.1; done

SERVERS=()
serve() { # port, extra env (NAME=VALUE …): starts a server and waits for /health
  local port=$1; shift
  env PUSHRELAY_HTTP_PORT="$port" PUSHRELAY_LOG_LEVEL=error PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$@" \
    "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>>"$WORK/server-$port.log" &
  PIDS+=($!)
  SERVERS+=($!)
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return; sleep 0.1; done
  echo "server on $port did not start:" >&2; cat "$WORK/server-$port.log" >&2; exit 1
}
stop_servers() {
  for p in "${SERVERS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  SERVERS=()
}

# ticks PID...: "pid ticks" (utime + stime) of each process still running.
ticks() { for p in "$@"; do [ -r "/proc/$p/stat" ] && awk -v p="$p" '{ print p, $14 + $15 }' "/proc/$p/stat" 2>/dev/null; done; true; }
# pg_ticks: the same for PostgreSQL's postmaster and every process it started.
pg_ticks() { ticks "$POSTMASTER" $(pgrep -P "$POSTMASTER" || true); }
# spent BEFORE AFTER: ticks spent between two `ticks` snapshots (a process started meanwhile counts from 0).
spent() { awk 'NR == FNR { t[$1] = $2; next } { s += $2 - ($1 in t ? t[$1] : 0) } END { print s + 0 }' "$1" "$2"; }
# per TICKS REQUESTS: microseconds per request.
per() { awk -v t="$1" -v n="$2" -v hz="$HZ" 'BEGIN { printf "%.0f", (n > 0 ? t * 1e6 / hz / n : 0) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf (b > 0 ? "%.2f" : "?"), (b > 0 ? a / b : 0) }'; }
statements() { # the statements PostgreSQL ran since the reset (the benchmark's own queries left out)
  if [ "$STATEMENTS" = 1 ]; then
    psql_ -At -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_%'"
  else echo ""; fi
}
commits() { psql_ -At -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'"; }

# measure NAME CONNECTIONS URL...: warms up, then loads every URL with its own wrk (the connections shared out) while
# counting the CPU of the running servers and of PostgreSQL and PostgreSQL's statements and commits; writes the
# figures to $WORK/NAME.row.
measure() {
  local name=$1 connections=$2; shift 2
  local n=0 share=$((connections / $#)) i=0 url
  local loads=()
  for url in "$@"; do wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$url" >/dev/null & loads+=($!); done
  wait "${loads[@]}"
  loads=()
  [ "$STATEMENTS" = 0 ] || psql_ -q -c "SELECT pg_stat_statements_reset()" >/dev/null
  local c1; c1=$(commits)
  ticks "${SERVERS[@]}" > "$WORK/$name.s1"; pg_ticks > "$WORK/$name.p1"
  for url in "$@"; do
    i=$((i + 1))
    wrk -t"$THREADS" -c"$share" -d"$DURATION" --latency -s Benchmarks/ha.lua "$url" > "$WORK/$name-$i.txt" &
    loads+=($!)
  done
  wait "${loads[@]}"
  ticks "${SERVERS[@]}" > "$WORK/$name.s2"; pg_ticks > "$WORK/$name.p2"
  local c2 st; c2=$(commits); st=$(statements)
  local rps=0 p50="" p99="" errs=0 f
  for f in "$WORK/$name"-*.txt; do
    n=$((n + $(awk '/ requests in / { print $1 }' "$f")))
    bench_wrk_stats "$f"
    rps=$((rps + RPS)); errs=$((errs + ERRS))
    p99="$p99${p99:+/}$P99"
    p50="$p50${p50:+/}$(awk '$1 == "50%" { print $2 }' "$f")"
  done
  local server pg
  server=$(per "$(spent "$WORK/$name.s1" "$WORK/$name.s2")" "$n")
  pg=$(per "$(spent "$WORK/$name.p1" "$WORK/$name.p2")" "$n")
  local stn xn
  stn=$([ -n "$st" ] && awk -v s="$st" -v n="$n" 'BEGIN { printf "%.2f", s / n }' || echo "?")
  xn=$(awk -v a="$c1" -v b="$c2" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')
  # GET /health on the first server, as loaded.
  local health_url=$1 h1 h2 hn
  h1=$(ticks "${SERVERS[0]}" | awk '{ print $2 }')
  wrk -t"$THREADS" -c"$connections" -d5s --latency "$health_url/health" > "$WORK/$name.health"
  h2=$(ticks "${SERVERS[0]}" | awk '{ print $2 }')
  hn=$(awk '/ requests in / { print $1 }' "$WORK/$name.health")
  bench_wrk_stats "$WORK/$name.health"
  echo "$rps $p50 $p99 $errs $server $pg $stn $xn $RPS $(per $((h2 - h1)) "$hn") $n" > "$WORK/$name.row"
}

PG=(PUSHRELAY_STORAGE_BACKEND=postgres PUSHRELAY_STORAGE_POSTGRES_URL="$PGURL" PUSHRELAY_STORAGE_POSTGRES_POOL_SIZE=${BENCH_PG_POOL:-16})
for row in $ROWS; do
  case $row in
    sqlite)
      serve "$PORT" PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite"
      measure sqlite "$CONNECTIONS" "http://127.0.0.1:$PORT" ;;
    postgres)
      serve "$PORT" "${PG[@]}"
      measure postgres "$CONNECTIONS" "http://127.0.0.1:$PORT" ;;
    two)
      serve "$PORT" "${PG[@]}"
      serve "$((PORT + 1))" "${PG[@]}"
      measure two "$CONNECTIONS" "http://127.0.0.1:$PORT" "http://127.0.0.1:$((PORT + 1))" ;;
    *) echo "unknown row $row (sqlite, postgres, two)" >&2; exit 2 ;;
  esac
  stop_servers
done
TOKEN_DAYS=$(psql_ -At -c "SELECT count(*) FROM daily_usage" 2>/dev/null || echo "?")

label() { case $1 in sqlite) echo "one instance, SQLite" ;; postgres) echo "one instance, PostgreSQL" ;; two) echo "two instances, one PostgreSQL" ;; esac; }
echo
echo "HA Android -> fake FCM by storage engine ($THREADS wrk threads, $CONNECTIONS connections, $DURATION each, $(nproc) cores shared;"
echo "CPU in µs per notification from /proc; statements and commits per notification from PostgreSQL's statistics;"
echo "/health: 5 s on the same server after the run, its req/s and the server's µs per request)"
printf "  %-31s %7s %9s %15s %7s %10s %10s %6s %6s %8s %7s\n" "" "req/s" "p50" "p99 (ms)" "non2xx" "PushRelay" "PostgreSQL" "stmts" "xacts" "/health" "µs"
for row in $ROWS; do
  read -r rps p50 p99 errs server pg stn xn hrps hus n < "$WORK/$row.row"
  printf "  %-31s %7s %9s %15s %7s %10s %10s %6s %6s %8s %7s\n" "$(label "$row")" "$rps" "$p50" "$p99" "$errs" "$server" "$pg" "$stn" "$xn" "$hrps" "$hus"
done
if [ -f "$WORK/sqlite.row" ] && [ -f "$WORK/postgres.row" ]; then
  read -r s_rps _ _ _ s_cpu _ < "$WORK/sqlite.row"
  read -r p_rps _ _ _ p_cpu _ < "$WORK/postgres.row"
  echo "  PostgreSQL / SQLite, one instance: rate $(ratio "$p_rps" "$s_rps"), PushRelay's CPU per notification $(ratio "$p_cpu" "$s_cpu")"
fi
echo "  token-days in PostgreSQL after the run: $TOKEN_DAYS"
