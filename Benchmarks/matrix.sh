#!/usr/bin/env bash
# Matrix push gateway benchmark: `pushrelay-dev fake-providers` as the FCM upstream (real TLS, OAuth, HTTP/2), wrk at
# 64 connections for 10 s POSTing /_matrix/push/v1/notify with one FCM device per request (a distinct event id and
# pushkey per request, so neither de-duplication nor caching flatters the figures), and GET /health on the same server
# in the same run; both with the server's CPU per request from /proc.
# BENCH_WEBPUSH=1 sends to web clients instead: each device is one of 2,000 subscriptions at a strict fake WebPush
# service (TLS + HTTP/2, VAPID checked, every message decrypted), through PushRelay's `webpush` provider (RFC 8291
# encryption, a VAPID JWT per push service).
# BENCH_HA=1 also runs Home Assistant Android → the same fake FCM (Benchmarks/ha.lua) on the same server, between
# /health and the Matrix run, and prints Matrix's CPU per request against it (the "Matrix as cheap as Home Assistant"
# figure); BENCH_ROUNDS=N repeats the three runs N times (the figures are the last round's, the ratios every round's).
# BENCH_DEVICES=N sends N devices per notify (CPU is then also given per device).
# BENCH_PROFILE=1 samples the server with `perf record -g` during the (last) Matrix run and prints its top frames
# (PROFILE_TOP=30 lines; PROFILE_OUT=FILE keeps perf.data).
# Usage: Benchmarks/matrix.sh      (env: BENCH_DURATION=10s BENCH_CONNECTIONS=64 BENCH_THREADS=2 BENCH_PORT=18282
#        BENCH_WEBPUSH=1 BENCH_HA=1 BENCH_ROUNDS=1 BENCH_DEVICES=1 BENCH_PROFILE=1; PUSHRELAY_BIN and PUSHRELAY_DEV_BIN
#        measure given binaries instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18282}
ROUNDS=${BENCH_ROUNDS:-1}
export BENCH_DEVICES=${BENCH_DEVICES:-1}
TOP=${PROFILE_TOP:-30}

source Benchmarks/lib.sh

bench_workdir
SCRIPT=Benchmarks/matrix.lua
TARGET="$BENCH_DEVICES FCM device(s)"
APP='"im.bench.*": {provider: fcm}'
if [ -n "${BENCH_WEBPUSH:-}" ]; then
  export BENCH_WEBPUSH_SUBSCRIPTIONS=2000
  TARGET="$BENCH_DEVICES WebPush device(s)"
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
# The daily limit is run.sh's: Home Assistant's notifications are counted (and committed) as they are there.
PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=error \
  PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>"$WORK/server.log" &
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
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# Every wrk run of matrix.lua gets its own BENCH_RUN, so no run's event ids repeat another's (a repeat is a
# de-duplicated skip, not a push).
BENCH_RUN=warmup wrk -t1 -c8 -d2s -s "$SCRIPT" "$URL" >/dev/null
[ -z "${BENCH_HA:-}" ] || wrk -t1 -c8 -d2s -s Benchmarks/ha.lua "$URL" >/dev/null
RATIOS=()
for r in $(seq 1 "$ROUNDS"); do
  read -r health_rps health_p99 health_cpu < <(measure health "$URL/health")
  if [ -n "${BENCH_HA:-}" ]; then read -r ha_rps ha_p99 ha_cpu < <(measure ha -s Benchmarks/ha.lua "$URL"); fi
  if [ -n "${BENCH_PROFILE:-}" ] && [ "$r" = "$ROUNDS" ]; then
    perf record -e cpu-clock -F 999 -g -p "$SERVER" -o "$WORK/perf.data" -- sleep "$((${DURATION%s} + 1))" 2>"$WORK/perf.log" &
    PERF=$!
  fi
  read -r rps p99 cpu < <(BENCH_RUN="round$r" measure notify -s "$SCRIPT" "$URL")
  [ -z "${PERF:-}" ] || wait "$PERF" || true
  if [ -n "${BENCH_HA:-}" ]; then
    RATIOS+=("$(ratio "$cpu" "$ha_cpu")")
    [ "$ROUNDS" -le 1 ] || echo "round $r: /health $health_cpu us, HA -> FCM $ha_cpu us, Matrix $cpu us: Matrix / HA ${RATIOS[-1]}" >&2
  fi
done
grep "unexpected responses" "$WORK/notify.txt" || true
non2xx=$(awk '/Non-2xx/ {print $NF}' "$WORK/notify.txt" | grep . || echo 0)
echo
echo "Matrix gateway benchmark ($THREADS wrk threads, $CONNECTIONS connections, $DURATION, $(nproc) cores, fakes over TLS + HTTP/2)"
printf "  %-44s %10s req/s   p99 %-8s server CPU %s us/req\n" "GET /health (same server)" "$health_rps" "$health_p99" "$health_cpu"
if [ -n "${BENCH_HA:-}" ]; then
  ha_non2xx=$(awk '/Non-2xx/ {print $NF}' "$WORK/ha.txt" | grep . || echo 0)
  printf "  %-44s %10s req/s   p99 %-8s server CPU %s us/req (%s x /health)   non-2xx %s\n" "HA Android -> FCM (same server)" \
    "$ha_rps" "$ha_p99" "$ha_cpu" "$(ratio "$ha_cpu" "$health_cpu")" "$ha_non2xx"
fi
printf "  %-44s %10s req/s   p99 %-8s server CPU %s us/req (%s x /health)   non-2xx %s\n" "POST /_matrix/push/v1/notify ($TARGET)" \
  "$rps" "$p99" "$cpu" "$(ratio "$cpu" "$health_cpu")" "$non2xx"
[ "$BENCH_DEVICES" = 1 ] || awk -v c="$cpu" -v n="$BENCH_DEVICES" 'BEGIN { printf "  server CPU per device: %.0f us\n", c / n }'
awk -v a="$rps" -v b="$health_rps" 'BEGIN { printf "  notify / health: %.2f of the rate\n", a / b }'
if [ -n "${BENCH_HA:-}" ]; then
  echo "  Matrix CPU / HA -> FCM CPU: ${RATIOS[-1]}${RATIOS[1]:+ (rounds: ${RATIOS[*]})}   (goal: <= 1.2 with one FCM device)"
fi
if [ -n "${BENCH_PROFILE:-}" ]; then
  [ -z "${PROFILE_OUT:-}" ] || cp "$WORK/perf.data" "$PROFILE_OUT"
  frames() { grep -E '^ +[0-9]' | head -n "$TOP" | swift demangle --simplified | sed -E 's/ +- +- *$//; s/ +$//'; }
  echo
  echo "Top $TOP frames of the server during the Matrix run by self time (perf report --no-children):"
  perf report -i "$WORK/perf.data" --no-children --sort symbol --stdio -g none --percent-limit 0.3 2>/dev/null | frames || true
  echo
  echo "Top $TOP frames by time spent in them and what they call (perf report --children):"
  perf report -i "$WORK/perf.data" --children --sort symbol --stdio -g none --percent-limit 2 2>/dev/null | frames || true
fi
