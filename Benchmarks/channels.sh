#!/usr/bin/env bash
# Push channel benchmark (issue 4): release build, 10,000 subscribed channels on loopback, server RSS and
# local delivery latency (HA POST -> event received) p50/p99.
# Usage: Benchmarks/channels.sh   (env: PUSHRELAY_BIN=/path/to/pushrelay measures that build instead of building one;
#                                   BENCH_CHANNELS=10000 BENCH_MESSAGES=2000 BENCH_PORT=18191 BENCH_POSTERS=1,4,16
#                                   BENCH_MAX_RATE=0, a cap on notifications per second over all posters)
set -euo pipefail
cd "$(dirname "$0")/.."
CHANNELS=${BENCH_CHANNELS:-10000}
MESSAGES=${BENCH_MESSAGES:-2000}
PORT=${BENCH_PORT:-18191}

python3 -c "import websockets" 2>/dev/null || python3 -m pip install --quiet websockets
ulimit -n 65536 || ulimit -n "$(ulimit -Hn)"

if [ -n "${PUSHRELAY_BIN:-}" ]; then
  BIN=$PUSHRELAY_BIN
else
  swift build -c release --product pushrelay >&2
  BIN=$(swift build -c release --show-bin-path)/pushrelay
fi
WORK=$(mktemp -d)
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=error \
  PUSHRELAY_CHANNEL_MAX_CHANNELS=$((2 * CHANNELS + 100)) PUSHRELAY_CHANNEL_MAX_CHANNELS_PER_ADDRESS=$((2 * CHANNELS + 100)) PUSHRELAY_HTTP_MAX_CONNECTIONS_PER_ADDRESS=0 PUSHRELAY_CHANNEL_MAX_FAILED_AUTHS_PER_MINUTE=100000 \
  ${BENCH_SERVER_ENV:-} "$BIN" serve 2>"$WORK/server.log" &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
python3 Benchmarks/channels.py --port "$PORT" --pid "$SERVER" --channels "$CHANNELS" --messages "$MESSAGES" --concurrency "${BENCH_POSTERS:-1,4,16}" --max-rate "${BENCH_MAX_RATE:-0}"
