#!/usr/bin/env bash
# Where the server's CPU goes on the headline path: Home Assistant Android notifications → the fake FCM (OAuth over
# HTTPS, HTTP/2 over TLS, from `pushrelay-dev fake-providers`), as Benchmarks/run.sh runs them.
#
# It measures, on one release server:
#   1. GET /health under wrk, and the server's CPU per request (utime + stime from /proc/<pid>/stat over the run);
#   2. the FCM path under wrk, the server's CPU per notification the same way, while `perf record -g` samples the
#      server (cpu-clock, so it works where hardware counters are not offered);
# then prints both figures, their ratio, and the server's top frames by self time, demangled (`swift demangle`).
#
# Usage: Benchmarks/profile.sh   (env: BENCH_DURATION=10s BENCH_CONNECTIONS=64 BENCH_THREADS=2 BENCH_PORT=18182
#        PROFILE_TOP=30; PROFILE_OUT=FILE keeps perf.data for `perf report -i FILE`; PUSHRELAY_BIN and
#        PUSHRELAY_DEV_BIN measure given binaries instead of a fresh release build)
# Needs perf (Debian: linux-perf) and wrk (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18182}
TOP=${PROFILE_TOP:-30}

command -v perf >/dev/null 2>&1 || { echo "profile.sh: perf not found (Debian package linux-perf)" >&2; exit 1; }
source Benchmarks/lib.sh

bench_workdir

bench_fakes
PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=error \
  PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>"$WORK/server.log" &
SERVER=$!
bench_server_ready "$PORT"

# Runs wrk with the given arguments and prints "requests cpu_us_per_request p99".
measure() {
  local name=$1 before after n
  shift
  before=$(bench_cpu_ticks)
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$@" > "$WORK/$name.txt"
  after=$(bench_cpu_ticks)
  n=$(awk '/ requests in / { print $1 }' "$WORK/$name.txt")
  echo "$n $(bench_cpu_us $((after - before)) "$n") $(awk '$1 == "99%" { print $2 }' "$WORK/$name.txt")"
}

# Warm up: connections to the fakes, the OAuth token, caches.
wrk -t1 -c8 -d2s "$URL/health" >/dev/null
wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$URL" >/dev/null

read -r health_n health_us health_p99 < <(measure health "$URL/health")
seconds=${DURATION%s}
perf record -e cpu-clock -F 999 -g -p "$SERVER" -o "$WORK/perf.data" -- sleep "$((seconds + 1))" 2>"$WORK/perf.log" &
PERF=$!
read -r fcm_n fcm_us fcm_p99 < <(measure fcm -s Benchmarks/ha.lua "$URL")
wait "$PERF" || true
[ -z "${PROFILE_OUT:-}" ] || cp "$WORK/perf.data" "$PROFILE_OUT"
non2xx=$(awk '/Non-2xx/ { print $NF }' "$WORK/fcm.txt" | grep . || echo 0)

echo
echo "PushRelay profile ($CONNECTIONS connections, $DURATION each, $(nproc) cores; wrk and the fakes on the same cores)"
echo "  GET /health:         $health_n requests, server CPU ${health_us} us per request, p99 $health_p99"
echo "  HA Android -> FCM:   $fcm_n notifications (non-2xx $non2xx), server CPU ${fcm_us} us per notification, p99 $fcm_p99"
awk -v a="$fcm_us" -v b="$health_us" 'BEGIN { if (b > 0) printf "  CPU per notification / CPU per /health request: %.1f\n", a / b }'
# perf's lines, demangled, without the empty columns at their end.
frames() { grep -E '^ +[0-9]' | head -n "$TOP" | swift demangle --simplified | sed -E 's/ +- +- *$//; s/ +$//'; }
echo
echo "Top $TOP frames of the server by self time (perf report --no-children):"
perf report -i "$WORK/perf.data" --no-children --sort symbol --stdio -g none --percent-limit 0.3 2>/dev/null | frames || true
echo
echo "Top $TOP frames of the server by time spent in them and what they call (perf report --children):"
perf report -i "$WORK/perf.data" --children --sort symbol --stdio -g none --percent-limit 2 2>/dev/null | frames || true
