#!/usr/bin/env bash
# Home Assistant → FCM (the strict fake FCM on loopback) on each storage engine, in one run:
#   1. one instance on SQLite (the embedded default);
#   2. one instance on PostgreSQL (a throwaway server this script starts: initdb into a temporary directory);
#   3. two instances on that PostgreSQL database, each loaded by its own wrk with half the connections (the sum is
#      the service's rate; a load balancer in front would do the same).
# The fakes, wrk and PostgreSQL share the machine's cores with the server(s). Every request carries a distinct push
# token (Benchmarks/ha.lua) and is counted in the database before its answer.
# Usage: Benchmarks/postgres.sh   (env: BENCH_DURATION=10s BENCH_CONNECTIONS=64 BENCH_THREADS=2 BENCH_PORT=18181;
#        PUSHRELAY_BIN and PUSHRELAY_DEV_BIN measure given binaries instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18181}

source Benchmarks/lib.sh
source Benchmarks/postgres-lib.sh
start_postgres $((PORT + 100))

"$DEVBIN" fake-providers --out "$WORK/fakes" --apns-port 0 --fcm-port 0 > "$WORK/fakes.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do [ -f "$WORK/fakes/pushrelay.yaml" ] && break; sleep 0.1; done

serve() { # port, extra env (NAME=VALUE …): starts a server and waits for /health
  local port=$1; shift
  env PUSHRELAY_HTTP_PORT="$port" PUSHRELAY_LOG_LEVEL=error PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$@" \
    "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>>"$WORK/server-$port.log" &
  PIDS+=($!)
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return; sleep 0.1; done
  echo "server on $port did not start:" >&2; cat "$WORK/server-$port.log" >&2; exit 1
}
stop_servers() {
  for p in "${PIDS[@]:1}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  PIDS=("${PIDS[0]}")
}
measure() { # name, connections, url
  wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$3" >/dev/null
  wrk -t"$THREADS" -c"$2" -d"$DURATION" --latency -s Benchmarks/ha.lua "$3" > "$WORK/$1.txt"
}
rps() { awk '/^Requests\/sec:/ {print $2}' "$WORK/$1.txt"; }
p50() { awk '$1 == "50%" {print $2}' "$WORK/$1.txt"; }
p99() { awk '$1 == "99%" {print $2}' "$WORK/$1.txt"; }
non2xx() { awk '/Non-2xx/ {print $NF}' "$WORK/$1.txt" | grep . || echo 0; }

serve "$PORT" PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite"
measure sqlite "$CONNECTIONS" "http://127.0.0.1:$PORT"
stop_servers

PG=(PUSHRELAY_STORAGE_BACKEND=postgres PUSHRELAY_STORAGE_POSTGRES_URL="$PGURL" PUSHRELAY_STORAGE_POSTGRES_POOL_SIZE=${BENCH_PG_POOL:-16})
serve "$PORT" "${PG[@]}"
measure postgres "$CONNECTIONS" "http://127.0.0.1:$PORT"
stop_servers

serve "$PORT" "${PG[@]}"
serve "$((PORT + 1))" "${PG[@]}"
wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "http://127.0.0.1:$((PORT + 1))" >/dev/null
measure two-a "$((CONNECTIONS / 2))" "http://127.0.0.1:$PORT" &
W=$!
measure two-b "$((CONNECTIONS / 2))" "http://127.0.0.1:$((PORT + 1))"
wait "$W"
stop_servers
TOTAL=$(awk -v a="$(rps two-a)" -v b="$(rps two-b)" 'BEGIN { printf "%.2f", a + b }')
ROWS=$(psql_ -At -c "SELECT count(*) FROM daily_usage" 2>/dev/null || echo "?")

echo
echo "HA Android -> fake FCM by storage engine ($THREADS wrk threads, $CONNECTIONS connections, $DURATION each, $(nproc) cores shared)"
printf "  %-40s %10s req/s   p50 %-8s p99 %-8s non-2xx %s\n" "one instance, SQLite" "$(rps sqlite)" "$(p50 sqlite)" "$(p99 sqlite)" "$(non2xx sqlite)"
printf "  %-40s %10s req/s   p50 %-8s p99 %-8s non-2xx %s\n" "one instance, PostgreSQL" "$(rps postgres)" "$(p50 postgres)" "$(p99 postgres)" "$(non2xx postgres)"
printf "  %-40s %10s req/s   p50 %-8s p99 %-8s non-2xx %s\n" "two instances, one PostgreSQL (A)" "$(rps two-a)" "$(p50 two-a)" "$(p99 two-a)" "$(non2xx two-a)"
printf "  %-40s %10s req/s   p50 %-8s p99 %-8s non-2xx %s\n" "two instances, one PostgreSQL (B)" "$(rps two-b)" "$(p50 two-b)" "$(p99 two-b)" "$(non2xx two-b)"
echo "  two instances together: $TOTAL req/s; PostgreSQL / SQLite (one instance): $(awk -v a="$(rps postgres)" -v b="$(rps sqlite)" 'BEGIN { printf "%.2f", a / b }')"
echo "  token-days in PostgreSQL after the run: $ROWS"
