#!/usr/bin/env bash
# Pruning a large database under load, on each engine: does the prune stall the request path?
#
# For SQLite and then PostgreSQL (a throwaway server this script starts), with Home Assistant → the strict fake FCM
# on loopback (Benchmarks/ha.lua, 16 connections by default):
#   1. an empty database: BENCH_WINDOW-long wrk runs give the reference p99;
#   2. the server is stopped, PRUNE_LOG_ROWS expired delivery-log rows (FCM-style, no payload; ids before the rows
#      already there, as the log of earlier days has) and PRUNE_USAGE_ROWS expired usage rows are written straight into
#      its database, and it is started again with
#      `quota.retention_days: 1`: it prunes at start while wrk keeps posting;
#   3. one line per window while the prune runs and PRUNE_AFTER_WINDOWS after it: requests/s, p99, errors (non-2xx
#      answers, socket errors and timeouts), rows pruned so far (pushrelay_pruned_rows_total), the WAL (SQLite's -wal
#      file, PostgreSQL's pg_wal) and the database's size;
#   4. the verdict: p99 during and after against 4× the empty database's, the largest WAL seen, and whether every
#      expired row is gone.
# Usage: Benchmarks/prune.sh [sqlite|postgres]...   (default both; env: PRUNE_LOG_ROWS=4000000 PRUNE_USAGE_ROWS=1000000
#        BENCH_CONNECTIONS=16 BENCH_WINDOW=5 PRUNE_AFTER_WINDOWS=3 BENCH_PORT=18191; PUSHRELAY_BIN and
#        PUSHRELAY_DEV_BIN measure given binaries instead of a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."

LOG_ROWS=${PRUNE_LOG_ROWS:-4000000}
USAGE_ROWS=${PRUNE_USAGE_ROWS:-1000000}
CONNECTIONS=${BENCH_CONNECTIONS:-16}
WINDOW=${BENCH_WINDOW:-5}
AFTER=${PRUNE_AFTER_WINDOWS:-3}
PORT=${BENCH_PORT:-18191}
ENGINES=("$@")
[ ${#ENGINES[@]} -gt 0 ] || ENGINES=(sqlite postgres)

source Benchmarks/lib.sh
source Benchmarks/postgres-lib.sh

"$DEVBIN" fake-providers --out "$WORK/fakes" --apns-port 0 --fcm-port 0 > "$WORK/fakes.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do [ -f "$WORK/fakes/pushrelay.yaml" ] && break; sleep 0.1; done
URL="http://127.0.0.1:$PORT"
OLD_DAY=$(date -u -d '3 days ago' +%F)

SERVER=
serve() { # extra env (NAME=VALUE …): starts the server and waits for /health
  env PUSHRELAY_HTTP_PORT="$PORT" PUSHRELAY_LOG_LEVEL=info PUSHRELAY_METRICS_ENABLED=true PUSHRELAY_QUOTA_RETENTION_DAYS=1 \
    PUSHRELAY_QUOTA_DAILY_LIMIT=1000000 "$@" "$BIN" serve --config "$WORK/fakes/pushrelay.yaml" 2>>"$WORK/server.log" &
  SERVER=$!
  for _ in $(seq 1 300); do curl -sf "$URL/health" >/dev/null && return; sleep 0.1; done
  echo "the server did not start:" >&2; tail -20 "$WORK/server.log" >&2; exit 1
}
stop_server() { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }

# window: one wrk run of BENCH_WINDOW seconds; sets RPS, P99 (ms) and ERRS.
window() {
  wrk -t2 -c"$CONNECTIONS" -d"${WINDOW}s" --latency -s Benchmarks/ha.lua "$URL" > "$WORK/w.txt" 2>&1 || true
  bench_wrk_stats "$WORK/w.txt"
}
pruned() { curl -sf "$URL/metrics" | awk '$1 == "pushrelay_pruned_rows_total" {printf "%d", $2}' || echo 0; }
mb() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1048576}'; }

# Per engine: seed, sizes and the count of expired rows left.
sqlite_seed() {
  python3 - "$WORK/prune.sqlite" "$LOG_ROWS" "$USAGE_ROWS" "$OLD_DAY" <<'EOF'
import sqlite3, sys
path, log_rows, usage_rows, day = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
db = sqlite3.connect(path)
db.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
  INSERT INTO delivery_log (id, at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id)
  SELECT i - ? - 1, ? || 'T12:00:00Z', ?, printf('old-%08d', i % ?), 'io.homeassistant.companion.android', 'android', 'fcm',
         'notification', 1, 'delivered', 'projects/bench/messages/' || i FROM n""", (log_rows, log_rows, day, day, usage_rows))
db.execute("""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
  INSERT INTO daily_usage (day, push_token, app_id, attempts, successful, updated_at)
  SELECT ?, printf('old-%08d', i), 'io.homeassistant.companion.android', 4, 4, ? || 'T12:00:00Z' FROM n""",
  (usage_rows, day, day))
db.commit()
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
EOF
}
sqlite_wal() { stat -c %s "$WORK/prune.sqlite-wal" 2>/dev/null || echo 0; }
sqlite_db() { stat -c %s "$WORK/prune.sqlite"; }
sqlite_left() {
  python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(d.execute('SELECT (SELECT count(*) FROM delivery_log WHERE day < ?) + (SELECT count(*) FROM daily_usage WHERE day < ?)', (sys.argv[2], sys.argv[2])).fetchone()[0])" "$WORK/prune.sqlite" "$(date -u -d '1 day ago' +%F)"
}
postgres_seed() {
  psql_ -q -v ON_ERROR_STOP=1 <<EOF
INSERT INTO delivery_log (id, at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id)
  SELECT i - $LOG_ROWS - 1, '${OLD_DAY}T12:00:00Z', '$OLD_DAY', 'old-' || lpad((i % $USAGE_ROWS)::text, 8, '0'), 'io.homeassistant.companion.android',
         'android', 'fcm', 'notification', 1, 'delivered', 'projects/bench/messages/' || i FROM generate_series(1, $LOG_ROWS) i;
INSERT INTO daily_usage (day, push_token, app_id, attempts, successful, updated_at)
  SELECT '$OLD_DAY', 'old-' || lpad(i::text, 8, '0'), 'io.homeassistant.companion.android', 4, 4, '${OLD_DAY}T12:00:00Z'
  FROM generate_series(0, $USAGE_ROWS - 1) i;
CHECKPOINT;
VACUUM ANALYZE;
EOF
}
postgres_wal() { du -sb "$WORK/pg/data/pg_wal" | awk '{print $1}'; }
postgres_db() { psql_ -tAc "SELECT pg_database_size('postgres')"; }
postgres_left() {
  psql_ -tAc "SELECT (SELECT count(*) FROM delivery_log WHERE day < '$(date -u -d '1 day ago' +%F)') + (SELECT count(*) FROM daily_usage WHERE day < '$(date -u -d '1 day ago' +%F)')"
}

SUMMARY=()
for engine in "${ENGINES[@]}"; do
  case $engine in
    sqlite) ENV=(PUSHRELAY_STORAGE_SQLITE_PATH="$WORK/prune.sqlite") ;;
    postgres)
      [ -n "${PGURL:-}" ] || start_postgres $((PORT + 100)) -c max_wal_size=1GB -c log_autovacuum_min_duration=0 -c log_checkpoints=on
      psql_ -qc "DROP SCHEMA public CASCADE; CREATE SCHEMA public;" >/dev/null
      ENV=(PUSHRELAY_STORAGE_BACKEND=postgres PUSHRELAY_STORAGE_POSTGRES_URL="$PGURL") ;;
    *) echo "unknown engine $engine (sqlite or postgres)" >&2; exit 2 ;;
  esac
  rm -f "$WORK"/prune.sqlite*
  serve "${ENV[@]}"
  wrk -t1 -c8 -d3s -s Benchmarks/ha.lua "$URL" >/dev/null
  P99S=()
  for _ in 1 2 3; do window; P99S+=("$P99"); done
  EMPTY=$(printf '%s\n' "${P99S[@]}" | sort -n | sed -n 2p)
  echo "$engine, empty database: p99 of three ${WINDOW} s windows ${P99S[*]} ms (median $EMPTY ms)" >&2
  stop_server
  echo "$engine: writing $LOG_ROWS expired delivery-log rows and $USAGE_ROWS expired usage rows…" >&2
  "${engine}_seed"
  TOTAL=$((LOG_ROWS + USAGE_ROWS))
  serve "${ENV[@]}"
  printf '%-8s %6s %-8s %-7s %8s %9s %7s %10s %7s %7s\n' engine window ended phase req/s p99_ms errors pruned wal_MB db_MB
  WORST_DURING=0 WORST_AFTER=0 MAX_WAL=0 ERRORS=0 n=0 after=0 PRUNE_START=$SECONDS PRUNE_TOOK=
  while [ "$after" -lt "$AFTER" ]; do
    n=$((n + 1))
    window
    done_rows=$(pruned)
    wal=$("${engine}_wal")
    [ "$wal" -gt "$MAX_WAL" ] && MAX_WAL=$wal
    ERRORS=$((ERRORS + ERRS))
    if [ "${done_rows:-0}" -ge "$TOTAL" ] && [ -n "$PRUNE_TOOK" ]; then
      phase=after; after=$((after + 1))
      WORST_AFTER=$(awk -v a="$WORST_AFTER" -v b="$P99" 'BEGIN {print (b > a ? b : a)}')
    else
      phase=during
      WORST_DURING=$(awk -v a="$WORST_DURING" -v b="$P99" 'BEGIN {print (b > a ? b : a)}')
      [ "${done_rows:-0}" -ge "$TOTAL" ] && PRUNE_TOOK=$((SECONDS - PRUNE_START))
    fi
    printf '%-8s %6d %-8s %-7s %8s %9s %7s %10s %7s %7s\n' "$engine" "$n" "$(date -u +%T)" "$phase" "$RPS" "$P99" "$ERRS" "${done_rows:-0}" \
      "$(mb "$wal")" "$(mb "$("${engine}_db")")"
    [ "$n" -lt 200 ] || { echo "the prune did not finish in 200 windows" >&2; break; }
  done
  LEFT=$("${engine}_left")
  stop_server
  grep -E "pruned rows" "$WORK/server.log" | tail -n 1 >&2 || true
  # What PostgreSQL did meanwhile (its checkpoints and autovacuums), to set beside the windows.
  [ "$engine" = postgres ] && grep -E "automatic (vacuum|analyze)|checkpoint complete" "$WORK/pg/log" | cut -c1-160 >&2 || true
  SUMMARY+=("$(printf '%s: empty p99 %s ms; during the prune (about %s s) worst p99 %s ms (%.1f×), after %s ms (%.1f×); errors %d; WAL at most %s MB; expired rows left %s' \
    "$engine" "$EMPTY" "${PRUNE_TOOK:-?}" "$WORST_DURING" "$(awk -v a="$WORST_DURING" -v b="$EMPTY" 'BEGIN {print a / b}')" \
    "$WORST_AFTER" "$(awk -v a="$WORST_AFTER" -v b="$EMPTY" 'BEGIN {print a / b}')" "$ERRORS" "$(mb "$MAX_WAL")" "$LEFT")")
  : > "$WORK/server.log"
done
echo
printf '%s\n' "${SUMMARY[@]}"
echo "(goal: errors 0, p99 during and after ≤ 4× the empty database's, WAL ≤ 256 MB, expired rows left 0)"
