#!/usr/bin/env bash
# PushRelay throughput benchmark: release build, wrk at 64 connections for 10 s each.
#  1. sandbox provider: the Android endpoint over many tokens, and /health as the ceiling;
#  2. real delivery through the in-repo fakes (`pushrelay-dev fake-providers`): Android → fake FCM (OAuth + HTTPS),
#     iOS → fake APNs (TLS + HTTP/2). The fakes run on the same 2 cores, so these figures include their cost.
# Usage: Benchmarks/run.sh            (env: BENCH_DURATION=10s BENCH_CONNECTIONS=64 BENCH_THREADS=2 BENCH_PORT=18181
#                                      BENCH_ROUNDS=1: more rounds repeat the /health + notify pair and add the median
#                                      ratio, for a machine whose speed drifts)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18181}
ROUNDS=${BENCH_ROUNDS:-1}

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)…" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk; else sudo apt-get install -y -qq wrk; fi
fi

swift build -c release --product pushrelay >&2
swift build -c release --product pushrelay-dev >&2
BIN=$(swift build -c release --show-bin-path)/pushrelay
DEVBIN=$(swift build -c release --show-bin-path)/pushrelay-dev

WORK=$(mktemp -d)
cleanup() {
  for p in ${SERVER:-} ${SERVER2:-} ${FAKES:-}; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=error \
  PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$BIN" serve 2>"$WORK/server.log" &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done

run() { # name, wrk args…
  local name=$1; shift
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$@" > "$WORK/$name.txt"
  cat "$WORK/$name.txt" >&2
}

# Warm up both paths briefly, then measure.
wrk -t1 -c8 -d2s "http://127.0.0.1:$PORT/health" >/dev/null
wrk -t1 -c8 -d2s -s Benchmarks/ha.lua "http://127.0.0.1:$PORT" >/dev/null
rps() { awk '/^Requests\/sec:/ {print $2}' "$WORK/$1.txt"; }
p99() { awk '$1 == "99%" {print $2}' "$WORK/$1.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }
RATIOS=()
for r in $(seq 1 "$ROUNDS"); do
  run health "http://127.0.0.1:$PORT/health"
  run notify -s Benchmarks/ha.lua "http://127.0.0.1:$PORT"
  RATIOS+=("$(ratio "$(rps notify)" "$(rps health)")")
  if [ "$ROUNDS" -gt 1 ]; then
    echo "round $r: /health $(rps health) req/s (p99 $(p99 health)), notify $(rps notify) req/s (p99 $(p99 notify)): ${RATIOS[-1]}%" >&2
  fi
done

# Real delivery through the fakes.
"$DEVBIN" fake-providers --out "$WORK/fakes" --apns-port 0 --fcm-port 0 > "$WORK/fakes.log" 2>&1 &
FAKES=$!
for _ in $(seq 1 100); do [ -f "$WORK/fakes/pushrelay.yaml" ] && break; sleep 0.1; done
PORT2=$((PORT + 1))
PUSHRELAY_HTTP_PORT=$PORT2 PUSHRELAY_LOG_LEVEL=error PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 \
  "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>"$WORK/server2.log" &
SERVER2=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT2/health" >/dev/null && break; sleep 0.1; done
wrk -t1 -c8 -d2s -s Benchmarks/ha.lua "http://127.0.0.1:$PORT2" >/dev/null
run fcm -s Benchmarks/ha.lua "http://127.0.0.1:$PORT2"
export BENCH_PLATFORM=ios
wrk -t1 -c8 -d2s -s Benchmarks/ha.lua "http://127.0.0.1:$PORT2" >/dev/null
run apns -s Benchmarks/ha.lua "http://127.0.0.1:$PORT2"
unset BENCH_PLATFORM

HEALTH_RPS=$(rps health); NOTIFY_RPS=$(rps notify)
RATIO=$(ratio "$NOTIFY_RPS" "$HEALTH_RPS")
ROWS=$(sqlite3 "$WORK/bench.sqlite" "SELECT count(*) || ' tokens, ' || sum(successful) || ' delivered' FROM daily_usage" 2>/dev/null || echo "?")

echo
echo "PushRelay benchmark ($THREADS wrk threads, $CONNECTIONS connections, $DURATION each, $(nproc) cores)"
printf "  %-34s %10s req/s   p99 %s\n" "GET /health (ceiling)" "$HEALTH_RPS" "$(p99 health)"
printf "  %-34s %10s req/s   p99 %s\n" "POST /api/sendPush/android/v1" "$NOTIFY_RPS" "$(p99 notify)"
echo "  notify / health: ${RATIO}%   (target >= 60%, p99 <= 10ms)"
if [ "$ROUNDS" -gt 1 ]; then
  MEDIAN=$(printf "%s\n" "${RATIOS[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  echo "  over $ROUNDS rounds: ${RATIOS[*]} (%); median ${MEDIAN}%   (the figures above are the last round's)"
fi
echo "  ledger after the run: $ROWS; non-2xx notify answers: $(awk '/Non-2xx/ {print $NF}' "$WORK/notify.txt" | grep . || echo 0)"
printf "  %-34s %10s req/s   p99 %s\n" "Android -> fake FCM" "$(rps fcm)" "$(p99 fcm)"
printf "  %-34s %10s req/s   p99 %s\n" "iOS -> fake APNs (HTTP/2)" "$(rps apns)" "$(p99 apns)"
