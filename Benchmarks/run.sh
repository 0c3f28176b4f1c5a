#!/usr/bin/env bash
# PushRelay throughput benchmark: every path users run, on one server in one run, each beside that server's /health.
#
# One server, configured by `pushrelay-dev fake-providers` (strict fakes on loopback sharing the machine's cores with
# the server: FCM with OAuth over TLS + HTTP/2, APNs over TLS + HTTP/2, a WebPush service over TLS + HTTP/2 with 2,000
# subscriptions) and a second fake FCM that speaks only HTTP/1.1, measured with wrk:
#   1. GET /health on that server (the ceiling) and Home Assistant Android notify → fake FCM, alternately for
#      BENCH_ROUNDS rounds; the headline is FCM req/s over /health req/s, same server, same run;
#   2. the same notifications to the HTTP/1.1-only fake FCM (app id `bench.fcm.http1`);
#   3. iOS notify → fake APNs (HTTP/2);
#   4. the sandbox provider (nothing leaves the machine), for comparison;
#   5. Matrix notify (one device, a fresh event id and pushkey each, Benchmarks/matrix.lua) → the fake FCM, and → the
#      fake WebPush service (RFC 8291 encryption, VAPID);
#   6. the provider clients alone (`pushrelay-dev provider-load`, a process of their own, no server): the CPU of one
#      exchange over HTTP/2 and over HTTP/1.1, which with the sandbox row gives the floor of the headline path.
# BENCH_POSTGRES=1 then runs Benchmarks/postgres.sh (the same Home Assistant path on SQLite and on a throwaway
# PostgreSQL) and prints its summary.
# Every Home Assistant request carries a distinct push token out of 20,000 per wrk thread with its own webhook id
# (Benchmarks/ha.lua). Each row gives the server's CPU per request (utime + stime from /proc over the wrk run), the
# figure that is the server's own when wrk and the fakes share its cores.
# Usage: Benchmarks/run.sh   (env: BENCH_DURATION=10s BENCH_CONNECTIONS=64 BENCH_THREADS=2 BENCH_PORT=18181 BENCH_ROUNDS=1
#        BENCH_POSTGRES=1; PUSHRELAY_BIN and PUSHRELAY_DEV_BIN measure given binaries instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18181}
ROUNDS=${BENCH_ROUNDS:-1}

source Benchmarks/lib.sh

bench_workdir

export BENCH_WEBPUSH_SUBSCRIPTIONS=2000
bench_fakes
# A second fake FCM, speaking only HTTP/1.1, for the same notifications over HTTP/1.1.
"$DEVBIN" fake-providers --out "$WORK/fakes-http1" --apns-port 0 --fcm-port 0 --fcm-http1-only > "$WORK/fakes-http1.log" 2>&1 &
FAKES2=$!
for _ in $(seq 1 100); do [ -f "$WORK/fakes-http1/pushrelay.yaml" ] && grep -q "waiting for requests" "$WORK/fakes.log" && break; sleep 0.1; done
HTTP1_ENDPOINT=$(awk '/^  fcm:$/ { f = 1 } f && /endpoint:/ { print $2; exit }' "$WORK/fakes-http1/pushrelay.yaml")
# The same server also routes one app id to the sandbox and one to the HTTP/1.1 fake, and Matrix's apps to FCM and
# WebPush.
sed -e 's/^providers:$/providers:\n  sandbox:\n    type: sandbox\n  fcm-http1:\n    type: fcm\n    ca_file: "'"${WORK//\//\\/}"'\/fakes-http1\/ca.pem"\n    endpoint: '"${HTTP1_ENDPOINT//\//\\/}"'\n    service_account_file: "'"${WORK//\//\\/}"'\/fakes-http1\/service-account.json"/' \
  -e 's/^apps:$/apps:\n  - match: "bench.sandbox"\n    provider: sandbox\n  - match: "bench.fcm.http1"\n    provider: fcm-http1/' \
  "$WORK/fakes/pushrelay.yaml" > "$WORK/pushrelay.yaml"
cat >> "$WORK/pushrelay.yaml" <<YAML
matrix:
  apps:
    "im.bench.android": {provider: fcm}
    "im.bench.web": {provider: webpush}
YAML
PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=error \
  PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$BIN" serve --config "$WORK/pushrelay.yaml" 2>"$WORK/server.log" &
SERVER=$!
bench_server_ready "$PORT"

declare -A CPU
run() { # name, wrk args…; also records the server's CPU per request in CPU[name]
  local name=$1 before after; shift
  before=$(bench_cpu_ticks)
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$@" > "$WORK/$name.txt"
  after=$(bench_cpu_ticks)
  CPU[$name]=$(bench_cpu_us $((after - before)) "$(awk '/ requests in / { print $1 }' "$WORK/$name.txt")")
  cat "$WORK/$name.txt" >&2
}
rps() { awk '/^Requests\/sec:/ {print $2}' "$WORK/$1.txt"; }
p50() { awk '$1 == "50%" {print $2}' "$WORK/$1.txt"; }
p99() { awk '$1 == "99%" {print $2}' "$WORK/$1.txt"; }
non2xx() { awk '/Non-2xx/ {print $NF}' "$WORK/$1.txt" | grep . || echo 0; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# Warm up (connections to the fakes, OAuth token, JIT-free but cold caches), then measure.
wrk -t1 -c8 -d2s "$URL/health" >/dev/null
wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$URL" >/dev/null
RATIOS=()
for r in $(seq 1 "$ROUNDS"); do
  run health "$URL/health"
  run fcm -s Benchmarks/ha.lua "$URL"
  RATIOS+=("$(ratio "$(rps fcm)" "$(rps health)")")
  if [ "$ROUNDS" -gt 1 ]; then
    echo "round $r: /health $(rps health) req/s, HA -> FCM $(rps fcm) req/s (p99 $(p99 fcm)): ratio ${RATIOS[-1]}" >&2
  fi
done
BENCH_APP=bench.fcm.http1 wrk -t1 -c8 -d2s -s Benchmarks/ha.lua "$URL" >/dev/null
BENCH_APP=bench.fcm.http1 run fcm_http1 -s Benchmarks/ha.lua "$URL"
BENCH_PLATFORM=ios wrk -t1 -c8 -d2s -s Benchmarks/ha.lua "$URL" >/dev/null
BENCH_PLATFORM=ios run apns -s Benchmarks/ha.lua "$URL"
BENCH_APP=bench.sandbox run sandbox -s Benchmarks/ha.lua "$URL"
wrk -t1 -c8 -d2s -s Benchmarks/matrix.lua "$URL" >/dev/null
run matrix_fcm -s Benchmarks/matrix.lua "$URL"
export BENCH_SUBSCRIPTIONS_FILE="$WORK/fakes/webpush-subscriptions.txt"
wrk -t1 -c8 -d2s -s Benchmarks/matrix.lua "$URL" >/dev/null
run matrix_webpush -s Benchmarks/matrix.lua "$URL"
unset BENCH_SUBSCRIPTIONS_FILE
# The provider clients alone, in a process of their own against the same fakes: what one exchange costs without the
# server around it (no HTTP server, quota or delivery log).
CLIENT_FCM=$("$DEVBIN" provider-load --dir "$WORK/fakes" --type fcm --requests 50000 --concurrency "$CONNECTIONS")
CLIENT_FCM_HTTP1=$("$DEVBIN" provider-load --dir "$WORK/fakes-http1" --type fcm --requests 30000 --concurrency "$CONNECTIONS")
CLIENT_APNS=$("$DEVBIN" provider-load --dir "$WORK/fakes" --type apns --requests 30000 --concurrency "$CONNECTIONS")
client_us() { sed -n 's/.*CPU \([0-9]*\) us per exchange.*/\1/p' <<<"$1"; }
ROWS=$(sqlite3 "$WORK/bench.sqlite" "SELECT count(*) || ' token-days, ' || sum(successful) || ' counted deliveries' FROM daily_usage" 2>/dev/null || echo "?")

echo
echo "PushRelay benchmark ($THREADS wrk threads, $CONNECTIONS connections, $DURATION each, $(nproc) cores; fakes on the same cores)"
row() { # label, name
  printf "  %-34s %9s req/s  p50 %-8s p99 %-8s non-2xx %-4s server CPU %4s us/req (%s x /health)\n" "$1" "$(rps "$2")" "$(p50 "$2")" \
    "$(p99 "$2")" "$(non2xx "$2")" "${CPU[$2]}" "$(ratio "${CPU[$2]}" "${CPU[health]}")"
}
row "GET /health (ceiling)" health
row "HA Android -> fake FCM (headline)" fcm
echo "  FCM / health: ${RATIOS[-1]} of the rate   (goal: >= 0.25 of the rate, <= 2.5 x the CPU of /health)"
if [ "$ROUNDS" -gt 1 ]; then
  MEDIAN=$(printf "%s\n" "${RATIOS[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  echo "  over $ROUNDS rounds: ${RATIOS[*]}; median ${MEDIAN}   (the figures above are the last round's)"
fi
row "HA Android -> fake FCM over HTTP/1.1" fcm_http1
echo "  FCM over HTTP/1.1 / over HTTP/2: $(ratio "${CPU[fcm_http1]}" "${CPU[fcm]}") x the CPU   (goal: <= 1.2)"
row "HA iOS -> fake APNs (HTTP/2)" apns
row "HA Android -> sandbox" sandbox
row "Matrix notify, 1 device -> fake FCM" matrix_fcm
echo "  Matrix -> FCM / HA -> FCM: $(ratio "${CPU[matrix_fcm]}" "${CPU[fcm]}") x the CPU   (goal: <= 1.2)"
row "Matrix notify, 1 device -> WebPush" matrix_webpush
echo "  Matrix -> WebPush: ${CPU[matrix_webpush]} us per notify   (goal: <= 300 us)"
echo "  FCM client alone, HTTP/2:   $CLIENT_FCM"
echo "  FCM client alone, HTTP/1.1: $CLIENT_FCM_HTTP1   (goal: <= 40 us per exchange)"
echo "  APNs client alone:          $CLIENT_APNS"
echo "  floor of the headline path: sandbox ${CPU[sandbox]} + FCM client alone $(client_us "$CLIENT_FCM") = $((CPU[sandbox] + $(client_us "$CLIENT_FCM"))) us" \
  "($(ratio $((CPU[sandbox] + $(client_us "$CLIENT_FCM"))) "${CPU[health]}") x /health), measured ${CPU[fcm]} us"
echo "  ledger after the run: $ROWS"
if [ -n "${BENCH_POSTGRES:-}" ]; then
  echo
  # This run's server and fakes stop first: postgres.sh starts its own, on ports of its own.
  for p in $SERVER $FAKES $FAKES2; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  PUSHRELAY_BIN="$BIN" PUSHRELAY_DEV_BIN="$DEVBIN" BENCH_ROWS="sqlite postgres" BENCH_PORT=$((PORT + 1000)) \
    Benchmarks/postgres.sh 2>"$WORK/postgres.log" |
    sed -n '/^HA Android -> fake FCM by storage engine/,$p'
fi
