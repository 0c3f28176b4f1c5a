#!/usr/bin/env bash
# Compares server builds round by round: each round starts each build on a fresh database and measures GET /health
# and the Android notify path (sandbox, Benchmarks/ha.lua) with wrk, then prints req/s, the server's CPU per request
# (process CPU time over requests served), notify p99 and the ratio. Builds run alternately, so a drift of the
# machine's speed hits them alike; read them pair by pair.
# Usage: Benchmarks/compare.sh ROUNDS EXECUTABLE...   (an executable may be a wrapper script that sets environment
#        variables and execs a pushrelay binary; env: BENCH_DURATION=8s BENCH_CONNECTIONS=64 BENCH_PORT=18200)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:?usage: Benchmarks/compare.sh ROUNDS EXECUTABLE...}; shift
[ $# -gt 0 ] || { echo "usage: Benchmarks/compare.sh ROUNDS EXECUTABLE..." >&2; exit 2; }
DURATION=${BENCH_DURATION:-8s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
PORT=${BENCH_PORT:-18200}
SECONDS_RUN=${DURATION%s}
TICKS=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rps() { awk '/^Requests\/sec:/ {print $2}' "$1"; }
for r in $(seq 1 "$ROUNDS"); do
  for bin in "$@"; do
    WORK=$(mktemp -d)
    PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/b.sqlite" PUSHRELAY_LOG_LEVEL=error \
      PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$bin" serve 2>"$WORK/server.log" &
    PID=$!
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
    wrk -t1 -c8 -d2s -s Benchmarks/ha.lua "http://127.0.0.1:$PORT" >/dev/null
    c0=$(cpu "$PID")
    wrk -t2 -c"$CONNECTIONS" -d"$DURATION" "http://127.0.0.1:$PORT/health" > "$WORK/health.txt"
    c1=$(cpu "$PID")
    wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s Benchmarks/ha.lua "http://127.0.0.1:$PORT" > "$WORK/notify.txt"
    c2=$(cpu "$PID")
    awk -v name="$(basename "$bin")" -v h="$(rps "$WORK/health.txt")" -v n="$(rps "$WORK/notify.txt")" \
        -v c0="$c0" -v c1="$c1" -v c2="$c2" -v t="$TICKS" -v s="$SECONDS_RUN" \
        -v p99="$(awk '$1 == "99%" {print $2}' "$WORK/notify.txt")" 'BEGIN {
      printf "round %d  %-14s /health %6.0f req/s (%5.1f us/req)  notify %6.0f req/s (%5.1f us/req, p99 %s)  %.1f%%\n",
        '"$r"', name, h, (c1 - c0) / t * 1e6 / (h * s), n, (c2 - c1) / t * 1e6 / (n * s), p99, 100 * n / h }'
    kill "$PID"; wait "$PID" 2>/dev/null || true
    rm -rf "$WORK"
  done
done
