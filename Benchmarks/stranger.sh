#!/usr/bin/env bash
# What one connection with no credentials can make the server hold (issue 53): each pattern of
# Benchmarks/stranger.py against a fresh `pushrelay serve` (its own empty SQLite file, the sandbox provider, a Matrix
# app routed to the sandbox), run for a fixed time; one table row per pattern with the server's RSS before, at its
# peak and after the connection closed, whether and when the server closed the connection, the rows and bytes of the
# SQLite tables before and after, and PASS/FAIL against the goal (stranger.py's help says which). Exits 1 if any
# pattern failed. Every byte goes to 127.0.0.1; the server is killed on exit.
# Usage: Benchmarks/stranger.sh [PATTERN...]   (default: 1 2 3 4 5 6 7)
#        env: PUSHRELAY_BIN (default: a fresh debug build, .build/debug/pushrelay), STRANGER_SECONDS=10 (patterns 1-4),
#        STRANGER_STORE_SECONDS=60 (the cap on patterns 5-7, which are bounded in count), STRANGER_PORT=18291,
#        STRANGER_AUTH_TIMEOUT_MS=3000, STRANGER_REQUEST_TIMEOUT=5s, STRANGER_MAX_QUEUED_BYTES=16777216,
#        STRANGER_RSS_CAP_MB=3000 (an attack stops there and fails, to spare the machine)
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${STRANGER_SECONDS:-10}
STORE_SECONDS=${STRANGER_STORE_SECONDS:-60}
PORT=${STRANGER_PORT:-18291}
AUTH_TIMEOUT_MS=${STRANGER_AUTH_TIMEOUT_MS:-3000}
REQUEST_TIMEOUT=${STRANGER_REQUEST_TIMEOUT:-5s}
MAX_QUEUED_BYTES=${STRANGER_MAX_QUEUED_BYTES:-16777216}
PATTERNS=${*:-1 2 3 4 5 6 7}

if [ -z "${PUSHRELAY_BIN:-}" ]; then
  swift build --product pushrelay >&2
fi
BIN=${PUSHRELAY_BIN:-$(swift build --show-bin-path)/pushrelay}

WORK=$(mktemp -d)
SERVER=
stop_server() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; SERVER=; fi
}
trap 'stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

cat > "$WORK/pushrelay.yaml" <<'EOF'
matrix:
  apps:
    im.stranger.android:
      provider: sandbox
EOF
REQUEST_TIMEOUT_MS=$(python3 -c "import sys; v = sys.argv[1]; print(int(float(v[:-2]) if v.endswith('ms') else float(v.rstrip('s')) * 1000))" "$REQUEST_TIMEOUT")
DEADLINE_MS=$((REQUEST_TIMEOUT_MS / 2))

echo "PushRelay against one stranger: $BIN, $("$BIN" --version 2>/dev/null || echo 'version unknown')"
echo "settings for the run: channel.auth_timeout_ms=$AUTH_TIMEOUT_MS, http.request_timeout=$REQUEST_TIMEOUT, http.idle_timeout=$REQUEST_TIMEOUT,"
echo "  delivery.deadline_ms=$DEADLINE_MS, channel.max_queued_bytes=$MAX_QUEUED_BYTES, the rest defaults; patterns 1-4 run ${SECONDS_EACH} s,"
echo "  5-7 at most ${STORE_SECONDS} s; a fresh server and database per pattern; $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"

for p in $PATTERNS; do
  rm -f "$WORK"/db.sqlite*
  PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/db.sqlite" PUSHRELAY_LOG_LEVEL=error \
    PUSHRELAY_CHANNEL_AUTH_TIMEOUT_MS=$AUTH_TIMEOUT_MS PUSHRELAY_HTTP_REQUEST_TIMEOUT=$REQUEST_TIMEOUT \
    PUSHRELAY_HTTP_IDLE_TIMEOUT=$REQUEST_TIMEOUT PUSHRELAY_DELIVERY_DEADLINE_MS=$DEADLINE_MS \
    PUSHRELAY_CHANNEL_MAX_QUEUED_BYTES=$MAX_QUEUED_BYTES \
    "$BIN" serve --config "$WORK/pushrelay.yaml" 2>>"$WORK/server.log" &
  SERVER=$!
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { echo "the server did not start:" >&2; tail -20 "$WORK/server.log" >&2; exit 2; }
  # `serve` re-executes itself once (malloc tuning) under the same process id; the status file is that process's.
  python3 Benchmarks/stranger.py run --pattern "$p" --port "$PORT" --pid "$SERVER" --db "$WORK/db.sqlite" \
    --seconds "$SECONDS_EACH" --store-seconds "$STORE_SECONDS" --auth-timeout-ms "$AUTH_TIMEOUT_MS" \
    --request-timeout-ms "$REQUEST_TIMEOUT_MS" --max-queued-bytes "$MAX_QUEUED_BYTES" --out "$WORK/result-$p.json" >/dev/null || true
  stop_server
done
echo
python3 Benchmarks/stranger.py table "$WORK"/result-*.json
