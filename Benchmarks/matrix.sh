#!/usr/bin/env bash
# Matrix push gateway benchmark: `pushrelay-dev fake-providers` as the FCM upstream (real TLS, OAuth, HTTP/2), wrk at
# 64 connections for 10 s POSTing /_matrix/push/v1/notify with one FCM device per request (a distinct event id and
# pushkey per request, so neither de-duplication nor caching flatters the figures), and GET /health on the same server
# in the same run; both with the server's CPU per request from /proc.
# BENCH_WEBPUSH=1 sends to web clients instead: each device is one of 2,000 subscriptions at a strict fake WebPush
# service (TLS + HTTP/2, VAPID checked, every message decrypted), through PushRelay's `webpush` provider (RFC 8291
# encryption, a VAPID JWT per push service).
# Usage: Benchmarks/matrix.sh      (env: BENCH_DURATION=10s BENCH_CONNECTIONS=64 BENCH_THREADS=2 BENCH_PORT=18282
#        BENCH_WEBPUSH=1; PUSHRELAY_BIN and PUSHRELAY_DEV_BIN measure given binaries instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18282}

source Benchmarks/lib.sh

bench_workdir
SCRIPT=Benchmarks/matrix.lua
TARGET="1 FCM device"
APP='"im.bench.*": {provider: fcm}'
if [ -n "${BENCH_WEBPUSH:-}" ]; then
  export BENCH_WEBPUSH_SUBSCRIPTIONS=2000
  TARGET="1 WebPush device"
  APP='"im.bench.web": {provider: webpush}'
fi
bench_fakes
for _ in $(seq 1 100); do grep -q "waiting for requests" "$WORK/fakes.log" && break; sleep 0.1; done
if [ -n "${BENCH_WEBPUSH:-}" ]; then export BENCH_SUBSCRIPTIONS_FILE="$WORK/fakes/webpush-subscriptions.txt"; fi
cat >> "$WORK/fakes/pushrelay.yaml" <<YAML
matrix:
  apps:
    $APP
YAML
PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=error \
  "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>"$WORK/server.log" &
SERVER=$!
bench_server_ready "$PORT"

measure() { # name, wrk args…: prints "req/s p99 cpu_us_per_request"
  local name=$1 before after; shift
  before=$(bench_cpu_ticks)
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$@" > "$WORK/$name.txt"
  after=$(bench_cpu_ticks)
  cat "$WORK/$name.txt" >&2
  echo "$(awk '/^Requests\/sec:/ {print $2}' "$WORK/$name.txt") $(awk '$1 == "99%" {print $2}' "$WORK/$name.txt")" \
    "$(bench_cpu_us $((after - before)) "$(awk '/ requests in / { print $1 }' "$WORK/$name.txt")")"
}

wrk -t1 -c8 -d2s -s "$SCRIPT" "$URL" >/dev/null
read -r health_rps health_p99 health_cpu < <(measure health "$URL/health")
read -r rps p99 cpu < <(measure notify -s "$SCRIPT" "$URL")
grep "unexpected responses" "$WORK/notify.txt" || true
non2xx=$(awk '/Non-2xx/ {print $NF}' "$WORK/notify.txt" | grep . || echo 0)
echo
echo "Matrix gateway benchmark ($THREADS wrk threads, $CONNECTIONS connections, $DURATION, $(nproc) cores, fakes over TLS + HTTP/2)"
printf "  %-44s %10s req/s   p99 %-8s server CPU %s us/req\n" "GET /health (same server)" "$health_rps" "$health_p99" "$health_cpu"
printf "  %-44s %10s req/s   p99 %-8s server CPU %s us/req   non-2xx %s\n" "POST /_matrix/push/v1/notify ($TARGET)" "$rps" "$p99" "$cpu" "$non2xx"
awk -v a="$rps" -v b="$health_rps" 'BEGIN { printf "  notify / health: %.2f of the rate\n", a / b }'
