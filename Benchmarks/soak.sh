#!/usr/bin/env bash
# Days in minutes: the release binary on a clock sped up SOAK_SPEED times (libfaketime, Debian package `faketime`),
# under load, on each engine, with `quota.retention_days: 1`, so that pruning, the UTC day rollovers, dead-token and
# channel-message expiry and the Matrix retry queue's due times all pass several times.
#
# Only the wall clock runs fast (FAKETIME_DONT_FAKE_MONOTONIC=1): the delivery deadline and request timeouts stay in
# real time. PushRelay schedules its background work by the wall clock on its event-loop timers (pruning at each UTC
# day change and hourly, read every 5 s), which follow the fast clock; Swift's Task.sleep does not work under
# libfaketime, and PushRelay does not use it for them.
#
# Load: wrk with SOAK_CONNECTIONS connections posting Home Assistant notifications (Android, the sandbox provider, which
# logs every payload) for push tokens drawn from SOAK_TOKENS (1,000,000), each wrk run drawing fresh ones. Beside it, a
# probe token with a limit override of 2 posts 3 notifications per window: each simulated day it must be served twice,
# refused after, and sent its rate-limit notice once.
#
# One line per window of SOAK_WINDOW real seconds: simulated time, requests/s, p99, errors (non-2xx answers, socket
# errors and timeouts), the server's RSS, the database and WAL size, rows pruned so far; then the verdict.
# Usage: Benchmarks/soak.sh [sqlite|postgres]...   (default both; env: SOAK_SPEED=360 SOAK_DAYS=3 SOAK_WINDOW=10
#        SOAK_TOKENS=1000000 SOAK_CONNECTIONS=16 SOAK_START='YYYY-MM-DD 21:00:00' (default: today, 21:00 UTC)
#        BENCH_PORT=18201; PUSHRELAY_BIN measures a given binary instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."

SPEED=${SOAK_SPEED:-360}
DAYS=${SOAK_DAYS:-3}
WINDOW=${SOAK_WINDOW:-10}
TOKENS=${SOAK_TOKENS:-1000000}
CONNECTIONS=${SOAK_CONNECTIONS:-16}
START=${SOAK_START:-$(date -u +%F) 21:00:00}
PORT=${BENCH_PORT:-18201}
ENGINES=("$@")
[ ${#ENGINES[@]} -gt 0 ] || ENGINES=(sqlite postgres)
ADMIN=soak-admin-token-0123456789
PROBE=soak-probe-token

FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1 || true)
if [ -z "$FAKETIME_LIB" ]; then
  echo "installing faketime (Debian package)…" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >&2
  FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 | head -n 1)
fi
source Benchmarks/lib.sh
source Benchmarks/postgres-lib.sh
URL="http://127.0.0.1:$PORT"
START_EPOCH=$(date -u -d "$START" +%s)

SERVER=
# nohup execs the server (same process): started straight from `env` with libfaketime preloaded, it sometimes lost its
# arguments.
serve() { # extra env (NAME=VALUE …): starts the server on the fast clock and waits for /health
  env LD_PRELOAD="$FAKETIME_LIB" FAKETIME="@$START x$SPEED" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    PUSHRELAY_HTTP_PORT="$PORT" PUSHRELAY_LOG_LEVEL=info PUSHRELAY_METRICS_ENABLED=true PUSHRELAY_ADMIN_TOKEN="$ADMIN" \
    PUSHRELAY_QUOTA_RETENTION_DAYS=1 "$@" nohup "$BIN" serve 2>>"$WORK/server.log" &
  SERVER=$!
  SERVER_START=$(date +%s.%N)
  for _ in $(seq 1 300); do curl -sf "$URL/health" >/dev/null && return; sleep 0.1; done
  echo "the server did not start:" >&2; head -n 20 "$WORK/server.log" >&2; exit 1
}
stop_server() { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
sim_now() { awk -v s="$SERVER_START" -v n="$(date +%s.%N)" -v x="$SPEED" -v e="$START_EPOCH" 'BEGIN {printf "%d", e + (n - s) * x}'; }

# window: one wrk run; sets RPS, P99 (ms) and ERRS.
window() {
  BENCH_TOKENS=$TOKENS BENCH_POOL=50000 wrk -t2 -c"$CONNECTIONS" -d"${WINDOW}s" --latency -s Benchmarks/ha.lua "$URL" \
    > "$WORK/w.txt" 2>&1 || true
  bench_wrk_stats "$WORK/w.txt"
}
# probe: three notifications for the probe token; adds to SERVED[day] and REFUSED[day] (the day the server answered
# for, read from the 429's or 201's rateLimits.resetsAt).
declare -A SERVED REFUSED NOTICES
probe() {
  local i code day
  for i in 1 2 3; do
    code=$(curl -s -o "$WORK/probe.json" -w '%{http_code}' -X POST "$URL/api/sendPush/android/v1" -H 'Content-Type: application/json' \
      -d "{\"message\":\"probe $i\",\"push_token\":\"$PROBE\",\"registration_info\":{\"app_id\":\"io.homeassistant.companion.android\",\"app_version\":\"1\",\"os_version\":\"1\",\"webhook_id\":\"probe-hook\"}}")
    day=$(python3 -c 'import json,sys,datetime; r=json.load(open(sys.argv[1]))["rateLimits"]["resetsAt"][:10]; print(datetime.date.fromisoformat(r) - datetime.timedelta(days=1))' "$WORK/probe.json" 2>/dev/null || echo unknown)
    case $code in
      201) SERVED[$day]=$((${SERVED[$day]:-0} + 1)) ;;
      429) REFUSED[$day]=$((${REFUSED[$day]:-0} + 1)) ;;
      *) ERRS=$((ERRS + 1)); echo "probe answered $code: $(head -c 300 "$WORK/probe.json")" >&2 ;;
    esac
  done
}
metric() { curl -sf -H "Authorization: Bearer $ADMIN" "$URL/metrics" | awk -v m="$1" '$1 == m {printf "%d", $2}' || echo 0; }
mb() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1048576}'; }
rss_mb() { awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/$SERVER/status"; }

sqlite_sizes() { echo "$(stat -c %s "$WORK/soak.sqlite") $(stat -c %s "$WORK/soak.sqlite-wal" 2>/dev/null || echo 0)"; }
sqlite_notices() {
  python3 -c "
import sqlite3, sys
d = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
for day, n in d.execute(\"SELECT day, count(*) FROM delivery_log WHERE push_token = ? AND kind = 'rate_limit_notice' GROUP BY day\", (sys.argv[2],)):
    print(day, n)" "$WORK/soak.sqlite" "$PROBE"
}
postgres_sizes() { echo "$(psql_ -tAc "SELECT pg_database_size('postgres')") $(du -sb "$WORK/pg/data/pg_wal" | awk '{print $1}')"; }
postgres_notices() {
  psql_ -tA -F ' ' -c "SELECT day, count(*) FROM delivery_log WHERE push_token = '$PROBE' AND kind = 'rate_limit_notice' GROUP BY day"
}

SUMMARY=()
WINDOWS=$((DAYS * 86400 / SPEED / WINDOW))
for engine in "${ENGINES[@]}"; do
  case $engine in
    sqlite) ENV=(PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/soak.sqlite") ;;
    postgres)
      [ -n "${PGURL:-}" ] || start_postgres $((PORT + 100))
      psql_ -qc "DROP SCHEMA public CASCADE; CREATE SCHEMA public;" >/dev/null
      ENV=(PUSHRELAY_STORAGE_BACKEND=postgres PUSHRELAY_STORAGE_POSTGRES_URL="$PGURL") ;;
    *) echo "unknown engine $engine (sqlite or postgres)" >&2; exit 2 ;;
  esac
  rm -f "$WORK"/soak.sqlite*
  SERVED=() REFUSED=() NOTICES=()
  serve "${ENV[@]}"
  curl -sf -X PUT -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' -d '{"limit":2}' \
    "$URL/admin/v1/limits/$PROBE" >/dev/null
  echo "$engine: $WINDOWS windows of $WINDOW s, the clock $SPEED× from $START UTC, $TOKENS tokens, $CONNECTIONS connections" >&2
  printf '%-8s %-16s %7s %8s %6s %6s %7s %7s %10s\n' engine simulated req/s p99_ms errors rss_MB db_MB wal_MB pruned
  LINES=()
  for n in $(seq 1 "$WINDOWS"); do
    window
    probe
    read -r db wal <<<"$("${engine}_sizes")"
    sim=$(date -u -d "@$(sim_now)" '+%F %H:%M')
    line=$(printf '%-8s %-16s %7s %8s %6s %6s %7s %7s %10s' "$engine" "$sim" "$RPS" "$P99" "$ERRS" "$(rss_mb)" "$(mb "$db")" \
      "$(mb "$wal")" "$(metric pushrelay_pruned_rows_total)")
    echo "$line"
    LINES+=("$line")
    while read -r day count; do
      [ -n "$day" ] && [ "$count" -gt "${NOTICES[$day]:-0}" ] && NOTICES[$day]=$count
    done < <("${engine}_notices")
  done
  storage_timeouts=$(metric pushrelay_storage_timeouts_total)
  stop_server
  # The verdict. Day one is the first full simulated day.
  quota=""
  for day in $(printf '%s\n' "${!SERVED[@]}" "${!REFUSED[@]}" | sort -u); do
    quota+="$day served ${SERVED[$day]:-0} refused ${REFUSED[$day]:-0} notices ${NOTICES[$day]:-0}; "
  done
  verdict=$(printf '%s\n' "${LINES[@]}" | python3 -c '
import statistics, sys
first = sys.argv[1]
rows = [l.split() for l in sys.stdin if l.strip()]
# engine, simulated day and time, req/s, p99, errors, RSS, database, WAL, pruned
p99 = [float(r[4]) for r in rows]
day1 = [float(r[4]) for r in rows if r[1] == first] or p99
median = statistics.median(day1)
errors = sum(int(r[5]) for r in rows)
last = rows[len(rows) * 2 // 3:]
print("errors %d; p99 worst %.1f ms against day one median %.1f ms (%.1fx); RSS %s -> %s MB and database %s -> %s MB over the last third"
      % (errors, max(p99), median, max(p99) / median, last[0][6], last[-1][6], last[0][7], last[-1][7]))
' "$(date -u -d "$START + 1 day" +%F)")
  SUMMARY+=("$engine: $verdict; storage timeouts $storage_timeouts; the probe token (limit 2) by day: $quota")
  grep -E "pruned rows" "$WORK/server.log" | tail -n 3 | cut -c1-200 >&2 || true
  : > "$WORK/server.log"
done
echo
printf '%s\n' "${SUMMARY[@]}"
echo "(goal: errors 0; every window's p99 ≤ 2× day one's median; RSS and database flat once retention is reached;"
echo " the probe token served 2 and sent one notice on every full day)"
