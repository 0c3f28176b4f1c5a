#!/usr/bin/env bash
# Writes ConsoleAssets.swift into OUTDIR from console/*.html|css|js: the admin console's static files, carried in the
# binary (no Bundle lookup, no files beside it; a static binary serves the page as it is). Run by the EmbedPlugin
# whenever console/ changes; the file is rewritten only when its text changes. Usage: embed-console.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1/ConsoleAssets.swift

{
  echo "// swift-format-ignore-file"
  echo "// Generated at build time by scripts/embed-console.sh from console/."
  echo
  echo "/// The admin console's files, served under /admin/ (\`AdminConsoleRoutes\`)."
  echo "enum ConsoleAssets {"
  echo "    struct File: Sendable {"
  echo "        let name: String"
  echo "        let contentType: String"
  echo "        let text: String"
  echo "    }"
  echo
  echo "    static let files: [File] = ["
  for f in console/*; do
    name=$(basename "$f")
    case "$name" in
      *.html) type="text/html; charset=utf-8" ;;
      *.css) type="text/css; charset=utf-8" ;;
      *.js) type="text/javascript; charset=utf-8" ;;
      *) continue ;;
    esac
    if grep -q '"""#' "$f"; then echo "$f contains \"\"\"# and cannot be embedded as a raw string" >&2; exit 1; fi
    [ -z "$(tail -c1 "$f")" ] || { echo "$f must end with a newline" >&2; exit 1; }
    echo "        File(name: \"$name\", contentType: \"$type\", text: #\"\"\""
    cat "$f"
    echo
    echo "\"\"\"#),"
  done
  echo "    ]"
  echo "}"
} > "$out.tmp"
if cmp -s "$out.tmp" "$out"; then rm "$out.tmp"; else mv "$out.tmp" "$out"; fi
echo "wrote $out"
