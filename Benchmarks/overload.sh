#!/usr/bin/env bash
# Overload benchmark: Home Assistant → FCM (fast fake on loopback) first at its sustainable load (64 connections),
# then with BENCH_OVERLOAD_CONNECTIONS (default 2000) connections for BENCH_OVERLOAD_DURATION (15s), as in issue 19:
#   - paced (default): each connection pauses between requests so that together they offer BENCH_OVERLOAD_FACTOR
#     (default 4) times the sustainable rate, an open load like Home Assistant's, which does not resend when refused;
#   - BENCH_OVERLOAD_FACTOR=0: no pauses, every connection resends the moment it is answered (a closed loop that
#     offers as much as the server can refuse).
# Past its capacity PushRelay must shed load: accepted (2xx) answers keep p99 ≤ 50 ms, refused ones (503) come in
# under 100 ms, nothing times out, and memory stays bounded. Latencies by status class come from the server's own
# histogram (pushrelay_http_request_duration_seconds{status_class}), whose buckets include 50 and 100 ms; wrk gives
# the client's view (all answers together) and the socket errors.
# Usage: Benchmarks/overload.sh   (env: PUSHRELAY_BIN, PUSHRELAY_DEV_BIN, BENCH_PORT=18182, BENCH_MAX_IN_FLIGHT,
#        BENCH_OVERLOAD_PAUSE_MS, BENCH_OVERLOAD_SETTLE=3)
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${BENCH_PORT:-18182}
OVER=${BENCH_OVERLOAD_CONNECTIONS:-2000}
OVER_DURATION=${BENCH_OVERLOAD_DURATION:-15s}

source Benchmarks/lib.sh

bench_workdir
ulimit -n 65536 2>/dev/null || true

bench_fakes
env PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=warning \
  PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 PUSHRELAY_METRICS_ENABLED=true PUSHRELAY_HTTP_MAX_CONNECTIONS_PER_ADDRESS=0 \
  ${BENCH_MAX_IN_FLIGHT:+PUSHRELAY_DELIVERY_MAX_IN_FLIGHT=$BENCH_MAX_IN_FLIGHT} \
  "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>"$WORK/server.log" &
SERVER=$!
bench_server_ready "$PORT"

# A histogram of the server's (metric name), summed over the series whose labels match both regexes: "<le> <count>"
# lines.
histogram() { # metric label-regex [label-regex]
  curl -s "$URL/metrics" | awk -v name="$1_bucket" -v f="$2" -v g="${3:-}" -F'[{}]' '
    $1 == name && $2 ~ f && $2 ~ g {
      match($2, /le="[^"]*"/); le = substr($2, RSTART + 4, RLENGTH - 5); split($3, v, " "); n[le] += v[1] }
    END { for (le in n) print le, n[le] }'
}
# Answer times for the notify route, by status class; provider round trips (retries included).
buckets() { histogram pushrelay_http_request_duration_seconds 'route="/api/sendPush/android/v1"' "status_class=\"$1\""; }
provider_buckets() { histogram pushrelay_delivery_duration_seconds ''; }
# p99 bucket bound and share within a bound, from two snapshots of buckets().
summarize() { # before-file after-file bound
  join -a 2 -e 0 -o 0,1.2,2.2 <(sort "$1") <(sort "$2") | awk -v bound="$3" '
    { le = $1; d = $3 - $2; n[le] = d; if (le == "+Inf") total = d; les[++k] = le }
    END {
      if (total == 0) { print "none"; exit }
      best = "+Inf"; within = 0
      for (i = 1; i <= k; i++) { le = les[i]; if (le != "+Inf" && n[le] >= 0.99 * total && (best == "+Inf" || le + 0 < best + 0)) best = le
        if (le != "+Inf" && le + 0 == bound + 0) within = n[le] }
      printf "%d answers, p99 <= %s s, %.2f%% within %s s\n", total, best, 100 * within / total, bound }'
}
rss() { awk '/^VmHWM/ {print $2 " kB peak"} /^VmRSS/ {print $2 " kB now"}' /proc/"$SERVER"/status | paste -sd, -; }

wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$URL" >/dev/null
echo "== sustainable load: 64 connections, 10 s" >&2
wrk -t2 -c64 -d10s --latency -s Benchmarks/ha.lua "$URL" > "$WORK/steady.txt"
cat "$WORK/steady.txt" >&2
echo "server memory after it: $(rss)" >&2

FACTOR=${BENCH_OVERLOAD_FACTOR:-4}
steady=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/steady.txt")
PAUSE=0
if [ "$FACTOR" != 0 ]; then PAUSE=$(awk -v c="$OVER" -v r="$steady" -v f="$FACTOR" 'BEGIN { printf "%d", c * 1000 / (r * f) }'); fi
# BENCH_OVERLOAD_PAUSE_MS fixes the pause instead (the same offered load for runs with different settings).
PAUSE=${BENCH_OVERLOAD_PAUSE_MS:-$PAUSE}
buckets 2xx > "$WORK/2xx.before"; buckets 5xx > "$WORK/5xx.before"
echo "== overload: $OVER connections, $OVER_DURATION, ${PAUSE} ms between a connection's requests (offered ~${FACTOR}x $steady req/s)" >&2
BENCH_DELAY_MS=$PAUSE wrk -t2 -c"$OVER" -d"$OVER_DURATION" --timeout 10s --latency -s Benchmarks/ha.lua "$URL" > "$WORK/over.txt" &
WRK=$!
# A second snapshot once the overload has lasted SETTLE seconds: the answers after it show the bound settled, without
# the opening burst (all connections at once, met by the bound at its maximum).
SETTLE=${BENCH_OVERLOAD_SETTLE:-3}
sleep "$SETTLE"; buckets 2xx > "$WORK/2xx.settled"; buckets 5xx > "$WORK/5xx.settled"; provider_buckets > "$WORK/provider.settled"
wait "$WRK"
provider_buckets > "$WORK/provider.after"
cat "$WORK/over.txt" >&2
buckets 2xx > "$WORK/2xx.after"; buckets 5xx > "$WORK/5xx.after"
SHED=$(curl -s "$URL/metrics" | awk '/^pushrelay_deliveries_shed_total/ {s += $2} END {print s + 0}')
LOGLINES=$(wc -l < "$WORK/server.log")

total=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/over.txt")
requests=$(awk '/requests in/ {print $1}' "$WORK/over.txt")
non2xx=$(awk '/Non-2xx/ {print $NF}' "$WORK/over.txt" | grep . || echo 0)
errors=$(grep -E "Socket errors" "$WORK/over.txt" || echo "Socket errors: none")
seconds=$(echo "$OVER_DURATION" | tr -d s)
echo
echo "PushRelay overload benchmark (HA Android -> fake FCM, $(nproc) cores shared with wrk and the fake)"
echo "  sustainable (64 connections):   $steady req/s, p99 $(awk '$1 == "99%" {print $2}' "$WORK/steady.txt")"
echo "  overload ($OVER connections, ${PAUSE} ms pauses, offered ~${FACTOR}x):  $total answers/s; $((requests - non2xx)) accepted ($(awk -v a="$((requests - non2xx))" -v s="$seconds" 'BEGIN { printf "%.0f", a / s }')/s), $non2xx refused"
echo "  accepted (2xx), server side:    $(summarize "$WORK/2xx.before" "$WORK/2xx.after" 0.05)"
echo "  refused (5xx), server side:     $(summarize "$WORK/5xx.before" "$WORK/5xx.after" 0.1)"
echo "  after the first ${SETTLE} s: accepted  $(summarize "$WORK/2xx.settled" "$WORK/2xx.after" 0.05)"
echo "                         refused   $(summarize "$WORK/5xx.settled" "$WORK/5xx.after" 0.1)"
echo "                         provider round trips  $(summarize "$WORK/provider.settled" "$WORK/provider.after" 0.05)"
echo "  wrk, all answers:               p50 $(awk '$1 == "50%" {print $2}' "$WORK/over.txt"), p99 $(awk '$1 == "99%" {print $2}' "$WORK/over.txt"); $errors"
echo "  shed at the in-flight bound:    $SHED; server log lines during the whole run: $LOGLINES"
echo "  server memory:                  $(rss)"
