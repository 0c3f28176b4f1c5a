#!/usr/bin/env bash
# Overload benchmark: Home Assistant → FCM (fake on loopback, TLS + HTTP/2) first at its sustainable load (64
# connections, 10 s), then two overloads of BENCH_OVERLOAD_CONNECTIONS (default 2000) connections for
# BENCH_OVERLOAD_DURATION (default 15s) each, on the same server:
#   - closed loop: every connection sends again the moment it is answered (as much as the server can be offered);
#   - paced: each connection pauses between requests so that together they offer BENCH_OVERLOAD_FACTOR (default 4)
#     times the sustainable rate, an open load like Home Assistant's.
#   - one greedy client among 50: one client address (X-Forwarded-For through a trusted proxy on loopback) in a closed
#     loop on the same number of connections, beside 50 polite clients on 50 connections, each sending one
#     notification every 100 ms (500 a second together).
#   - one address over its connection budget: the server restarted with the default http.max_connections_per_address
#     (1,024) and no trusted proxy, and one address (loopback) in a closed loop on the same number of connections, so
#     the connections past the budget are refused and reconnect at once, as wrk does.
# For each it prints the goodput (201s a second) and its ratio to the sustainable rate, the answer-time percentiles
# of all answers (wrk, 10 s client timeout: Home Assistant's), refusals (non-2xx), client timeouts, the dispatches
# shed at the in-flight bound, the server's log lines and its peak memory.
# Usage: Benchmarks/overload.sh   (env: PUSHRELAY_BIN, PUSHRELAY_DEV_BIN, BENCH_PORT=18182, BENCH_MAX_IN_FLIGHT,
#        BENCH_MAX_WAIT_MS, BENCH_OVERLOAD_RUNS="closed paced greedy budget": which overloads run after the baseline)
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${BENCH_PORT:-18182}
OVER=${BENCH_OVERLOAD_CONNECTIONS:-2000}
OVER_DURATION=${BENCH_OVERLOAD_DURATION:-15s}
FACTOR=${BENCH_OVERLOAD_FACTOR:-4}
RUNS=" ${BENCH_OVERLOAD_RUNS:-closed paced greedy budget} "

source Benchmarks/lib.sh

bench_workdir
ulimit -n 65536 2>/dev/null || true

bench_fakes
# start_server ENV...: the server on $PORT with these settings on top of the common ones, as $SERVER.
start_server() {
  env PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=warning \
    PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 PUSHRELAY_METRICS_ENABLED=true "$@" \
    ${BENCH_MAX_IN_FLIGHT:+PUSHRELAY_DELIVERY_MAX_IN_FLIGHT=$BENCH_MAX_IN_FLIGHT} \
    ${BENCH_MAX_WAIT_MS:+PUSHRELAY_DELIVERY_MAX_WAIT_MS=$BENCH_MAX_WAIT_MS} \
    "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>>"$WORK/server.log" &
  SERVER=$!
  bench_server_ready "$PORT"
}
start_server PUSHRELAY_HTTP_MAX_CONNECTIONS_PER_ADDRESS=0 PUSHRELAY_HTTP_TRUSTED_PROXIES=127.0.0.1

peak_rss() { awk '/^VmHWM/ {printf "%.0f MB", $2 / 1024}' /proc/"$SERVER"/status; }
shed() { curl -s "$URL/metrics" | awk '/^pushrelay_deliveries_shed_total/ {s += $2} END {print s + 0}'; }
seconds=$(echo "$OVER_DURATION" | tr -d s)

wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$URL" >/dev/null
echo "== sustainable load: 64 connections, 10 s" >&2
wrk -t2 -c64 -d10s --latency -s Benchmarks/ha.lua "$URL" > "$WORK/steady.txt"
cat "$WORK/steady.txt" >&2
steady=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/steady.txt")
steady_non2xx=$(awk '/Non-2xx/ {print $NF}' "$WORK/steady.txt" | grep . || echo 0)

# overload NAME PAUSE_MS: one overload run; prints its line.
overload() {
  local name=$1 pause=$2 out="$WORK/$1.txt" shed_before log_before
  shed_before=$(shed)
  log_before=$(wc -l < "$WORK/server.log")
  echo "== $name: $OVER connections, $OVER_DURATION, ${pause} ms between a connection's requests" >&2
  BENCH_DELAY_MS=$pause wrk -t2 -c"$OVER" -d"$OVER_DURATION" --timeout 10s --latency -s Benchmarks/ha.lua "$URL" > "$out"
  cat "$out" >&2
  local requests non2xx accepted goodput timeouts
  requests=$(awk '/requests in/ {print $1}' "$out")
  non2xx=$(awk '/Non-2xx/ {print $NF}' "$out" | grep . || echo 0)
  accepted=$((requests - non2xx))
  goodput=$(awk -v a="$accepted" -v s="$seconds" 'BEGIN { printf "%.0f", a / s }')
  timeouts=$(awk '/Socket errors/ { for (i = 1; i <= NF; i++) if ($i == "timeout") print $(i - 1) }' "$out" | tr -d , | grep . || echo 0)
  printf '  %-28s goodput %s/s (%.2f of sustainable); answers p50 %s, p90 %s, p99 %s, max %s; refused %s; timeouts %s; shed %s; log lines %s; peak memory %s\n' \
    "$name:" "$goodput" "$(awk -v g="$goodput" -v s="$steady" 'BEGIN { print g / s }')" \
    "$(awk '$1 == "50%" {print $2}' "$out")" "$(awk '$1 == "90%" {print $2}' "$out")" "$(awk '$1 == "99%" {print $2}' "$out")" \
    "$(awk '/^    Latency/ {print $4}' "$out")" "$non2xx" "$timeouts" "$(($(shed) - shed_before))" \
    "$(($(wc -l < "$WORK/server.log") - log_before))" "$(peak_rss)"
}

closed="" paced="" fair="" budget=""
[[ $RUNS == *" closed "* ]] && closed=$(overload "closed loop" 0)
pause=$(awk -v c="$OVER" -v r="$steady" -v f="$FACTOR" 'BEGIN { printf "%d", c * 1000 / (r * f) }')
[[ $RUNS == *" paced "* ]] && paced=$(overload "paced at ${FACTOR}x" "$pause")

if [[ $RUNS == *" greedy "* ]]; then
  echo "== one greedy client ($OVER connections, closed loop) among 50 polite ones (50 connections, 100 ms pauses)" >&2
  BENCH_FORWARDED_FOR=203.0.113.66 wrk -t1 -c"$OVER" -d"$OVER_DURATION" --timeout 10s -s Benchmarks/ha.lua "$URL" > "$WORK/greedy.txt" &
  GREEDY=$!
  BENCH_FORWARDED_FOR='198.51.100.%d' BENCH_CLIENTS=50 BENCH_DELAY_MS=100 \
    wrk -t1 -c50 -d"$OVER_DURATION" --timeout 10s --latency -s Benchmarks/ha.lua "$URL" > "$WORK/polite.txt"
  wait "$GREEDY"
  cat "$WORK/greedy.txt" "$WORK/polite.txt" >&2
  polite_requests=$(awk '/requests in/ {print $1}' "$WORK/polite.txt")
  polite_refused=$(awk '/Non-2xx/ {print $NF}' "$WORK/polite.txt" | grep . || echo 0)
  greedy_requests=$(awk '/requests in/ {print $1}' "$WORK/greedy.txt")
  greedy_refused=$(awk '/Non-2xx/ {print $NF}' "$WORK/greedy.txt" | grep . || echo 0)
  fair=$(printf '  %-28s polite: %s notifications, p50 %s, p99 %s, max %s, refused %s; greedy: goodput %s/s, refused %s; peak memory %s' \
    "one greedy among 50:" "$polite_requests" "$(awk '$1 == "50%" {print $2}' "$WORK/polite.txt")" \
    "$(awk '$1 == "99%" {print $2}' "$WORK/polite.txt")" "$(awk '/^    Latency/ {print $4}' "$WORK/polite.txt")" "$polite_refused" \
    "$(awk -v a="$((greedy_requests - greedy_refused))" -v s="$seconds" 'BEGIN { printf "%.0f", a / s }')" "$greedy_refused" "$(peak_rss)")
fi

if [[ $RUNS == *" budget "* ]]; then
  # The same server, restarted with the default connection budget and without the trusted proxy: every wrk
  # connection is loopback's, and the ones past the budget are refused.
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
  start_server
  wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$URL" >/dev/null
  echo "== one address over its connection budget: $OVER connections, closed loop, default budget" >&2
  wrk -t2 -c"$OVER" -d"$OVER_DURATION" --timeout 10s --latency -s Benchmarks/ha.lua "$URL" > "$WORK/budget.txt"
  cat "$WORK/budget.txt" >&2
  b_requests=$(awk '/requests in/ {print $1}' "$WORK/budget.txt")
  b_non2xx=$(awk '/Non-2xx/ {print $NF}' "$WORK/budget.txt" | grep . || echo 0)
  # A refusal is a non-2xx answer (a 503) or a connection closed or reset before its answer (wrk's socket errors).
  b_errors=$(awk '/Socket errors/ { gsub(",", ""); print $4 + $6 + $8 }' "$WORK/budget.txt" | grep . || echo 0)
  b_goodput=$(awk -v a="$((b_requests - b_non2xx))" -v s="$seconds" 'BEGIN { printf "%.0f", a / s }')
  budget=$(printf '  %-28s goodput %s/s (%.2f of sustainable); answers p50 %s, p99 %s, max %s; refused: %s answered non-2xx, %s connections closed unanswered; peak memory %s' \
    "one address over budget:" "$b_goodput" "$(awk -v g="$b_goodput" -v s="$steady" 'BEGIN { print g / s }')" \
    "$(awk '$1 == "50%" {print $2}' "$WORK/budget.txt")" "$(awk '$1 == "99%" {print $2}' "$WORK/budget.txt")" \
    "$(awk '/^    Latency/ {print $4}' "$WORK/budget.txt")" "$b_non2xx" "$b_errors" "$(peak_rss)")
fi

echo
echo "PushRelay overload benchmark (Home Assistant Android -> fake FCM over TLS + HTTP/2, $(nproc) cores shared with wrk and the fake)"
echo "  sustainable (64 connections): $steady notifications/s, p99 $(awk '$1 == "99%" {print $2}' "$WORK/steady.txt"), refused $steady_non2xx"
for line in "$closed" "$paced" "$fair" "$budget"; do [ -n "$line" ] && echo "$line"; done
