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
