# Shared by the runbook scripts (sourced, not run). Each script runs one procedure of docs/deployment.md or
# docs/operations.md on loopback, in a throwaway directory ($WORK), and checks what the page promises.
#
#   BIN        the pushrelay binary: $PUSHRELAY_BIN, default .build/debug/pushrelay (made absolute)
#   WORK       a temporary directory, removed at exit
#   start_bg   starts a process in the background and remembers it; every one is stopped at exit, whatever happened
#   check      runs a command and prints "ok   WHAT", or "FAIL WHAT" and exits 1
#   show       prints lines of output for the page (indented by two spaces)
#   free_port  a free TCP port on 127.0.0.1
#   start_postgres PORT   a throwaway PostgreSQL (as the postgres user when run as root), PGURL on its postgres database
# shellcheck shell=bash

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BIN=${PUSHRELAY_BIN:-.build/debug/pushrelay}
case $BIN in /*) ;; *) BIN="$PWD/$BIN" ;; esac
if [ ! -x "$BIN" ]; then
  echo "runbook: no pushrelay binary at $BIN (set PUSHRELAY_BIN)" >&2
  exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pushrelay-runbook.XXXXXX")
chmod 755 "$WORK"
PIDS=()
PGBIN=""
PGDATA_DIRS=()

cleanup() {
  local code=$?
  local p
  for p in "${PIDS[@]}"; do
    if kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$p" 2>/dev/null || true
    fi
    wait "$p" 2>/dev/null || true
  done
  local d
  for d in "${PGDATA_DIRS[@]}"; do
    [ -f "$d/postmaster.pid" ] && as_postgres "$PGBIN/pg_ctl" -D "$d" -m immediate stop >/dev/null 2>&1 || true
  done
  rm -rf "$WORK"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_bg LOG COMMAND...: runs COMMAND in the background, its output in LOG; sets LAST_PID.
start_bg() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

# check WHAT COMMAND...: the command must succeed.
check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok   $what"
  else
    echo "FAIL $what" >&2
    exit 1
  fi
}

# fail WHAT: stops the script.
fail() {
  echo "FAIL $*" >&2
  exit 1
}

# show [FILE]: prints FILE (or stdin) indented, as the page quotes it.
show() { sed 's/^/  /' "${1:--}"; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# status URL [CURL ARGUMENT...]: the HTTP status of a GET (000 when nothing answered).
status() {
  local url=$1
  shift
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$url" || true
}

# wait_status URL CODE [SECONDS]: waits until GET URL answers CODE.
wait_status() {
  local url=$1 code=$2 seconds=${3:-15} got
  local deadline=$((SECONDS + seconds))
  while [ $SECONDS -lt $deadline ]; do
    got=$(status "$url")
    [ "$got" = "$code" ] && return 0
    sleep 0.1
  done
  echo "  $url answered $got, not $code, within ${seconds}s" >&2
  return 1
}

# wait_log FILE PATTERN [SECONDS]: waits until a line of FILE matches PATTERN (grep -E).
wait_log() {
  local file=$1 pattern=$2 seconds=${3:-15}
  local deadline=$((SECONDS + seconds))
  while [ $SECONDS -lt $deadline ]; do
    grep -qE "$pattern" "$file" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "  no line matching '$pattern' in $file within ${seconds}s; it has:" >&2
  sed 's/^/    /' "$file" >&2 || true
  return 1
}

# wait_exit PID [SECONDS]: waits for a background process to end; sets EXIT_CODE.
wait_exit() {
  local pid=$1 seconds=${2:-30}
  local deadline=$((SECONDS + seconds))
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      echo "  process $pid still runs after ${seconds}s" >&2
      return 1
    fi
    sleep 0.1
  done
  EXIT_CODE=0
  wait "$pid" || EXIT_CODE=$?
  return 0
}

# as_postgres COMMAND...: PostgreSQL refuses to run as root, so its files and processes belong to the postgres user
# (created by the Debian package) when this runs as root.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# start_postgres PORT: a throwaway PostgreSQL on 127.0.0.1:PORT, its data in $WORK/pg/data and its socket in $WORK/pg;
# sets PGURL (the superuser on the postgres database), PGPORT and PGSOCKET.
start_postgres() {
  local port=$1
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$PGBIN" ]; then
    echo "runbook: PostgreSQL is not installed (apt-get install -y postgresql)" >&2
    exit 1
  fi
  mkdir -p "$WORK/pg"
  [ "$(id -u)" = 0 ] && chown postgres "$WORK/pg"
  as_postgres "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres --auth=trust --no-sync >/dev/null
  PGDATA_DIRS+=("$WORK/pg/data")
  PGPORT=$port
  PGSOCKET=$WORK/pg
  pg_start
  PGURL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
}

pg_start() {
  as_postgres "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/log" -w \
    -o "-p $PGPORT -k $PGSOCKET -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
}

pg_stop() {
  as_postgres "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m "${1:-fast}" -w stop >/dev/null
}

# psql_ DATABASE [PSQL ARGUMENT...]: psql as the superuser over the server's socket.
psql_() {
  local db=$1
  shift
  as_postgres psql -X -q -h "$PGSOCKET" -p "$PGPORT" -d "$db" -v ON_ERROR_STOP=1 "$@"
}
