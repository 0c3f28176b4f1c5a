#!/usr/bin/env bash
# A connection to FCM that goes silent under steady load: Home Assistant Android notifications at a steady rate to a
# PushRelay whose `fcm` provider reaches the fake FCM (TLS + HTTP/2) through a TCP proxy; at BENCH_SILENCE_AFTER
# seconds the proxy stops carrying bytes on every connection open then (a NAT or load balancer that forgot the flow),
# and later connections pass. Prints, per second, what was sent and how it was answered, then whether every
# notification sent 5 s or more after the silence was answered 201 within 2 s, and the slowest answer of all
# (Home Assistant waits 10 s). The proxy and the load are Benchmarks/silent-connection.py.
# Usage: Benchmarks/silent-connection.sh   (env: BENCH_RATE=100 BENCH_SECONDS=30 BENCH_SILENCE_AFTER=8 BENCH_PORT=18191;
#        PUSHRELAY_BIN and PUSHRELAY_DEV_BIN measure given binaries instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."

RATE=${BENCH_RATE:-100}
SECONDS_TOTAL=${BENCH_SECONDS:-30}
SILENCE_AFTER=${BENCH_SILENCE_AFTER:-8}
PORT=${BENCH_PORT:-18191}
PROXY_PORT=$((PORT + 1))

source Benchmarks/lib.sh

bench_workdir
bench_fakes
FCM_ENDPOINT=$(awk '/^  fcm:$/ { f = 1 } f && /endpoint:/ { print $2; exit }' "$WORK/fakes/pushrelay.yaml")
FCM_ENDPOINT=${FCM_ENDPOINT//\"/}
FCM_PORT=${FCM_ENDPOINT##*:}
sed -e "s|$FCM_ENDPOINT|https://127.0.0.1:$PROXY_PORT|" "$WORK/fakes/pushrelay.yaml" > "$WORK/pushrelay.yaml"
PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=warning \
  PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$BIN" serve --config "$WORK/pushrelay.yaml" 2>"$WORK/server.log" &
SERVER=$!
bench_server_ready "$PORT"

echo "PushRelay with its FCM connection silenced under load ($RATE notifications/s for $SECONDS_TOTAL s, silence at ${SILENCE_AFTER} s, $(nproc) cores)"
python3 Benchmarks/silent-connection.py --server-port "$PORT" --proxy-port "$PROXY_PORT" --fcm-port "$FCM_PORT" \
  --rate "$RATE" --duration "$SECONDS_TOTAL" --silence-after "$SILENCE_AFTER"
echo "server log lines about it:"
grep -c "provider connection found dead" "$WORK/server.log" | sed 's/^/  connections found dead: /'
