#!/usr/bin/env bash
# Writes OpenAPIDocument.swift into OUTDIR from docs/openapi.yaml: the API contract, carried in the binary and served
# at GET /openapi.yaml and /openapi.json. Run by the EmbedPlugin whenever it changes; the file is rewritten only when its
# text changes. Usage: embed-openapi.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
in=docs/openapi.yaml
out=$1/OpenAPIDocument.swift
if grep -q '"""#' "$in"; then echo "$in contains \"\"\"# and cannot be embedded as a raw string" >&2; exit 1; fi
[ -z "$(tail -c1 "$in")" ] || { echo "$in must end with a newline" >&2; exit 1; }
{
  echo "// swift-format-ignore-file"
  echo "// Generated at build time by scripts/embed-openapi.sh from docs/openapi.yaml."
  echo
  echo "/// The OpenAPI 3.1 document of every endpoint PushRelay serves (\`OpenAPIRoutes\`)."
  echo "enum OpenAPIDocument {"
  echo "    static let yaml = #\"\"\""
  cat "$in"
  echo "\"\"\"#"
  echo "}"
} > "$out.tmp"
if cmp -s "$out.tmp" "$out"; then rm "$out.tmp"; else mv "$out.tmp" "$out"; fi
echo "wrote $out"
