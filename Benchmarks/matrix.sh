#!/usr/bin/env bash
# Matrix push gateway benchmark (issue 5): release build, `pushrelay-dev fake-providers` as the FCM upstream (real TLS,
# OAuth, HTTP/2), wrk at 64 connections for 10 s POSTing /_matrix/push/v1/notify with one FCM device per request
# (a distinct event id and pushkey per request, so neither de-duplication nor caching flatters the figures).
# Usage: Benchmarks/matrix.sh      (env: BENCH_DURATION=10s BENCH_CONNECTIONS=64 BENCH_THREADS=2 BENCH_PORT=18282)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18282}

command -v wrk >/dev/null 2>&1 || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }

swift build -c release --product pushrelay >&2
swift build -c release --product pushrelay-dev >&2
BIN=$(swift build -c release --show-bin-path)/pushrelay
DEVBIN=$(swift build -c release --show-bin-path)/pushrelay-dev

WORK=$(mktemp -d)
cleanup() {
  for pid in ${SERVER:-} ${FAKES:-}; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

"$DEVBIN" fake-providers --apns-port 0 --fcm-port 0 --out "$WORK/fakes" > "$WORK/fakes.log" 2>&1 &
FAKES=$!
for _ in $(seq 1 100); do [ -f "$WORK/fakes/pushrelay.yaml" ] && grep -q "waiting for requests" "$WORK/fakes.log" && break; sleep 0.1; done
cat >> "$WORK/fakes/pushrelay.yaml" <<YAML
log:
  level: error
matrix:
  apps:
    "im.bench.*":
      provider: fcm
YAML
# The fake prints every request it receives; keep its output out of the measurement.
PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>"$WORK/server.log" &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done

wrk -t1 -c8 -d2s -s Benchmarks/matrix.lua "http://127.0.0.1:$PORT" >/dev/null
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s Benchmarks/matrix.lua "http://127.0.0.1:$PORT" > "$WORK/notify.txt"
cat "$WORK/notify.txt" >&2

RPS=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/notify.txt")
P99=$(awk '$1 == "99%" {print $2}' "$WORK/notify.txt")
echo
echo "Matrix gateway benchmark ($THREADS wrk threads, $CONNECTIONS connections, $DURATION, $(nproc) cores, fake FCM over TLS)"
printf "  %-40s %10s req/s   p99 %s\n" "POST /_matrix/push/v1/notify (1 FCM device)" "$RPS" "$P99"
