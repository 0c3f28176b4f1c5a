# Shared set-up for the PostgreSQL benchmarks (sourced after Benchmarks/lib.sh, not run): PostgreSQL's binaries in
# PGBIN (the distribution's postgresql, installed if missing; any version), a work directory in WORK removed at exit together with the
# processes listed in PIDS and the PostgreSQL started by start_postgres.
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$PGBIN" ]; then
  echo "installing postgresql (Debian package)…" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fi

WORK=$(mktemp -d)
chmod 755 "$WORK"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ -f "$WORK/pg/data/postmaster.pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# start_postgres PORT [SERVER OPTION...]: a throwaway PostgreSQL (fsync on) on 127.0.0.1:PORT, its data in
# $WORK/pg; sets PGURL. PostgreSQL refuses to run as root: its files belong to the postgres user (created by the
# Debian package).
start_postgres() {
  local port=$1; shift
  mkdir -p "$WORK/pg" && chown postgres "$WORK/pg"
  runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres --auth=trust --no-sync >/dev/null
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/log" -w \
    -o "-p $port -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=128MB $*" start >/dev/null
  PGURL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  PGPORT=$port
}

# psql_ [PSQL ARGUMENT...]: psql on that server's database, as the postgres user.
psql_() { runuser -u postgres -- psql -h "$WORK/pg" -p "$PGPORT" "$@" postgres; }
