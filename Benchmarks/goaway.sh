#!/usr/bin/env bash
# GOAWAYs from a front end on a second HTTP/2 implementation: Home Assistant Android notifications with distinct
# tokens to a PushRelay whose `fcm` provider reaches the nghttp2 front end (Tests/Interop/nghttp2_front_end.js, Node's
# http2) over TLS + HTTP/2. The front end caps streams at each CAP and sends a graceful GOAWAY when the EVERY-th stream
# of a connection arrives (closing it 20 ms later), with answers delayed 0-20 ms or not. Prints one line per case: how
# the notifications were answered, how many the front end processed and how many of those twice, the GOAWAYs, and
# PushRelay's own counts (resends, possibly delivered). The goal is every notification 201, processed once, none
# possibly delivered.
# Usage: Benchmarks/goaway.sh   (env: BENCH_COUNT=3000 BENCH_CONCURRENCY=64 BENCH_CASES="8:250:0 8:250:1 8:50:1 1:50:1
#        100:50:1" BENCH_PORT=18193; PUSHRELAY_BIN measures a given binary instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${BENCH_COUNT:-3000}
CONCURRENCY=${BENCH_CONCURRENCY:-64}
CASES=${BENCH_CASES:-"8:250:0 8:250:1 8:50:1 1:50:1 100:50:1"}
PORT=${BENCH_PORT:-18193}
source Benchmarks/lib.sh
bench_workdir

# A throwaway CA, the front end's certificate and a service account key, made with openssl.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.pem" \
  -days 2 -subj "/CN=goaway bench CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/key.pem" -out "$WORK/srv.csr" \
  -subj "/CN=localhost" 2>/dev/null
printf "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n" > "$WORK/ext.cnf"
openssl x509 -req -in "$WORK/srv.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -out "$WORK/cert.pem" \
  -days 2 -extfile "$WORK/ext.cnf" 2>/dev/null
openssl genrsa -out "$WORK/sa.key" 2048 2>/dev/null

echo "PushRelay ($BIN) against the nghttp2 front end: $COUNT notifications, $CONCURRENCY at a time, $(nproc) cores"
printf '%-5s %-6s %-7s  %-28s %-10s %-6s %-7s %-14s %s\n' cap every delay answers processed twice goaways resends possibly
for c in $CASES; do
  IFS=: read -r cap every delay <<< "$c"
  node Tests/Interop/nghttp2_front_end.js "$WORK/cert.pem" "$WORK/key.pem" 2> "$WORK/node.log" &
  FAKES=$!
  for _ in $(seq 1 100); do grep -q "control on" "$WORK/node.log" && break; sleep 0.1; done
  FE_PORT=$(sed -nE 's/.*listening on ([0-9]+),.*/\1/p' "$WORK/node.log")
  CONTROL=$(sed -nE 's/.*control on ([0-9]+).*/\1/p' "$WORK/node.log")
  python3 - "$WORK" "$FE_PORT" <<'PY'
import json, sys
work, port = sys.argv[1], sys.argv[2]
json.dump({"type": "service_account", "project_id": "goaway-bench", "private_key_id": "k1",
           "private_key": open(f"{work}/sa.key").read(), "client_email": "bench@goaway-bench.iam.gserviceaccount.com",
           "token_uri": f"https://127.0.0.1:{port}/token"}, open(f"{work}/sa.json", "w"))
PY
  delayed=null
  [ "$delay" = 1 ] && delayed="[0,20]"
  curl -s -XPOST "127.0.0.1:$CONTROL/knobs" \
    -d "{\"maxConcurrentStreams\":$cap,\"goAwayEvery\":$every,\"goAwayCloseAfterMs\":20,\"answerDelayMs\":$delayed}" >/dev/null
  cat > "$WORK/pushrelay.yaml" <<YAML
http:
  host: 127.0.0.1
  drain_period: 0s
storage:
  sqlite_path: $WORK/bench-$cap-$every-$delay.sqlite
quota:
  daily_limit: 1000000
metrics:
  enabled: true
providers:
  fcm:
    type: fcm
    endpoint: https://127.0.0.1:$FE_PORT
    ca_file: $WORK/ca.pem
    service_account_file: $WORK/sa.json
apps:
  - match: "*"
    provider: fcm
YAML
  PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_LOG_LEVEL=warning "$BIN" serve --config "$WORK/pushrelay.yaml" 2> "$WORK/server.log" &
  SERVER=$!
  bench_server_ready "$PORT"
  python3 Benchmarks/goaway.py --server-port "$PORT" --control-port "$CONTROL" --count "$COUNT" \
    --concurrency "$CONCURRENCY" --case "$cap" "$every" "$delay"
  kill "$SERVER" "$FAKES" 2>/dev/null || true
  wait "$SERVER" "$FAKES" 2>/dev/null || true
  SERVER=
  FAKES=
done
