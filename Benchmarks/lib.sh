# Shared set-up for the benchmark scripts (sourced, not run): wrk from Debian's packages if it is missing, and the
# release binaries to measure (PUSHRELAY_BIN / PUSHRELAY_DEV_BIN, or a fresh release build) in BIN and DEVBIN.
if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)…" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk; else sudo apt-get install -y -qq wrk; fi
fi
if [ -z "${PUSHRELAY_BIN:-}" ]; then
  swift build -c release --product pushrelay >&2
  swift build -c release --product pushrelay-dev >&2
fi
BIN=${PUSHRELAY_BIN:-$(swift build -c release --show-bin-path)/pushrelay}
DEVBIN=${PUSHRELAY_DEV_BIN:-$(dirname "$BIN")/pushrelay-dev}

# bench_workdir: a temporary folder for the run ($WORK), removed at exit once the server ($SERVER) and the fakes
# ($FAKES) are stopped.
bench_workdir() {
  WORK=$(mktemp -d)
  trap bench_cleanup EXIT
}
bench_cleanup() {
  for p in ${SERVER:-} ${FAKES:-} ${FAKES2:-}; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}

# bench_fakes: starts `pushrelay-dev fake-providers` (FCM with OAuth over TLS + HTTP/2, APNs over TLS + HTTP/2) as $FAKES;
# PushRelay's config for them is $WORK/fakes/pushrelay.yaml, with the iOS companion app routed to the fake APNs (the
# iOS runs send hex APNs tokens) and every other app to the fake FCM.
bench_fakes() {
  # BENCH_FCM_HTTP1=1: the fake FCM speaks only HTTP/1.1, so PushRelay reaches it over HTTP/1.1.
  # BENCH_WEBPUSH_SUBSCRIPTIONS=N: also a fake WebPush service with N subscriptions and a `webpush` provider for it.
  "$DEVBIN" fake-providers --out "$WORK/fakes" --apns-port 0 --fcm-port 0 --ios-via-apns ${BENCH_FCM_HTTP1:+--fcm-http1-only} \
    ${BENCH_WEBPUSH_SUBSCRIPTIONS:+--webpush-subscriptions "$BENCH_WEBPUSH_SUBSCRIPTIONS"} > "$WORK/fakes.log" 2>&1 &
  FAKES=$!
  for _ in $(seq 1 100); do [ -f "$WORK/fakes/pushrelay.yaml" ] && break; sleep 0.1; done
}

# bench_server_ready PORT: waits until the server on PORT answers /health; sets $URL.
bench_server_ready() {
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$1/health" >/dev/null && break; sleep 0.1; done
  URL="http://127.0.0.1:$1"
}

# bench_wrk_stats FILE: from the output of `wrk --latency`, sets RPS (requests/s), P99 (ms) and ERRS (non-2xx answers,
# socket errors and timeouts).
bench_wrk_stats() {
  RPS=$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$1")
  P99=$(awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms/, "", v) } else if (v ~ /s$/) { sub(/s/, "", v); v *= 1000 } printf "%.1f", v }' "$1")
  ERRS=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(/,/, ""); n += $4 + $6 + $8 + $10} END {print n + 0}' "$1")
}

# bench_cpu_ticks: the server's CPU time so far (utime + stime of $SERVER, in clock ticks).
bench_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$SERVER/stat"; }
# bench_cpu_us TICKS REQUESTS: server CPU microseconds per request.
bench_cpu_us() { awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", (n > 0 ? t / hz * 1e6 / n : 0) }'; }
