#!/usr/bin/env bash
# Writes the Swift file that carries a schema in the binary, into OUTDIR (run by the EmbedPlugin whenever the files change;
# the file is rewritten only when its text changes):
#   embed-migrations.sh sqlite OUTDIR     EmbeddedMigrations.swift from migrations/*.sql
#   embed-migrations.sh postgres OUTDIR   EmbeddedPostgresMigrations.swift from migrations/postgres/*.sql
set -euo pipefail
cd "$(dirname "$0")/.."
which=$1
outdir=$2

# embed <glob dir> <output> <enum name> <import line or empty>
embed() {
  local dir=$1 out=$2 name=$3 import=$4
  {
    echo "// swift-format-ignore-file"
    echo "// Generated at build time by scripts/embed-migrations.sh from $dir/*.sql."
    if [ -n "$import" ]; then echo "$import"; echo; fi
    echo "enum $name {"
    echo "    static let all: [Migration] = ["
    for f in "$dir"/*.sql; do
      base=$(basename "$f" .sql)
      version=$((10#${base%%_*}))
      echo "        Migration(version: $version, name: \"$base\", sql: #\"\"\""
      cat "$f"
      echo "\"\"\"#),"
    done
    echo "    ]"
    echo "}"
  } > "$out.tmp"
  if cmp -s "$out.tmp" "$out"; then rm "$out.tmp"; else mv "$out.tmp" "$out"; fi
  echo "wrote $out"
}

case "$which" in
  sqlite) embed migrations "$outdir/EmbeddedMigrations.swift" EmbeddedMigrations "import PushRelayStore" ;;
  postgres) embed migrations/postgres "$outdir/EmbeddedPostgresMigrations.swift" EmbeddedPostgresMigrations "import PushRelayStore" ;;
  *) echo "usage: $0 sqlite|postgres OUTDIR" >&2; exit 2 ;;
esac
