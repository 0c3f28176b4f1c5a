#!/usr/bin/env bash
# What the notify path's database writes cost: the Benchmarks/run.sh load (wrk, 64 connections, sandbox provider,
# Android endpoint) against the real build and against a build patched with Benchmarks/experiments/write-cost.patch,
# whose switches take parts of the write path away:
#   EXPERIMENT_IN_PLACE        update the token's daily_usage row in place on every request, as before the write-behind
#                              ledger (UsageLedger): what the ledger saves
#   EXPERIMENT_NO_FSYNC        answer after the commit without syncing the WAL (not durable: for measurement only)
#   EXPERIMENT_NO_LOG_WRITE    skip the delivery-log row (with the ledger, the quota would not count: measurement only)
# Each round runs /health, then every variant, back to back, so that all figures of a round share the machine's
# current speed (it drifts a lot on a shared 2-core VM); the ratio is read against that round's /health.
# Usage: Benchmarks/write-cost.sh    (env: BENCH_ROUNDS=3 BENCH_DURATION=8s BENCH_PORT=18183)
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-8s}
PORT=${BENCH_PORT:-18183}
command -v wrk >/dev/null 2>&1 || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }

WORK=$(mktemp -d)
cleanup() {
  [ -n "${SERVER:-}" ] && { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
  rm -rf "$WORK"
}
trap cleanup EXIT

swift build -c release --product pushrelay >&2
cp "$(swift build -c release --show-bin-path)/pushrelay" "$WORK/pushrelay-real"

# The patched build: the patch is applied to the working tree for one incremental build and taken out again at once
# (also if this script is interrupted), then the real build is restored.
PATCH=Benchmarks/experiments/write-cost.patch
patch -s -p1 --dry-run --no-backup-if-mismatch < "$PATCH" >/dev/null || { echo "$PATCH does not apply to this tree; update it" >&2; exit 1; }
unpatch() { patch -s -R -p1 --no-backup-if-mismatch < "$PATCH"; trap cleanup EXIT; }
trap 'unpatch; cleanup' EXIT
patch -s -p1 --no-backup-if-mismatch < "$PATCH"
swift build -c release --product pushrelay >&2
cp "$(swift build -c release --show-bin-path)/pushrelay" "$WORK/pushrelay-patched"
unpatch
swift build -c release --product pushrelay >&2

# run NAME BINARY [ENV=VALUE ...] : a fresh server and database, a warm-up, then the measured wrk run.
run() {
  local name=$1 bin=$2; shift 2
  local target=(-s Benchmarks/ha.lua "http://127.0.0.1:$PORT")
  [ "$name" = health ] && target=("http://127.0.0.1:$PORT/health")
  rm -f "$WORK"/bench.sqlite*
  env "$@" PUSHRELAY_HTTP_PORT=$PORT PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/bench.sqlite" PUSHRELAY_LOG_LEVEL=error \
    PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$bin" serve 2>"$WORK/server.log" &
  SERVER=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
  wrk -t1 -c8 -d2s "${target[@]}" >/dev/null
  wrk -t2 -c64 -d"$DURATION" --latency "${target[@]}" > "$WORK/$name.txt"
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=
  printf "%s %s %s\n" "$name" "$(awk '/^Requests\/sec:/ {print $2}' "$WORK/$name.txt")" "$(awk '$1 == "99%" {print $2}' "$WORK/$name.txt")"
}

VARIANTS=(
  "as-shipped|real|"
  "usage-row-in-place|patched|EXPERIMENT_IN_PLACE=1"
  "no-fsync|patched|EXPERIMENT_NO_FSYNC=1"
  "no-writes|patched|EXPERIMENT_NO_LOG_WRITE=1"
)

echo
echo "notify (sandbox, Android) per write-path variant, as % of the same round's GET /health; $ROUNDS round(s) of $DURATION"
for r in $(seq 1 "$ROUNDS"); do
  read -r _ health hp99 < <(run health "$WORK/pushrelay-real")
  printf "round %s: /health %s req/s (p99 %s)\n" "$r" "$health" "$hp99"
  for v in "${VARIANTS[@]}"; do
    IFS='|' read -r label which envs <<<"$v"
    # shellcheck disable=SC2086
    read -r _ rps p99 < <(run notify "$WORK/pushrelay-$which" $envs)
    printf "  %-24s %10s req/s  %5.1f%%  p99 %s\n" "$label" "$rps" "$(awk -v a="$rps" -v b="$health" 'BEGIN { print 100 * a / b }')" "$p99"
  done
done
