#!/usr/bin/env bash
# The README's test command: installs everything (venv, packages, the noida-db broker) and runs the tests.
# Extra arguments go to pytest, e.g. scripts/test.sh tests/dataframe -k filter
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/bootstrap.sh" test
# Azurite (Azure Blob emulator, npm) for the lake tests, into .tools/
if [ ! -x "$root/.tools/node_modules/.bin/azurite-blob" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  fi
  npm install --prefix "$root/.tools" --no-audit --no-fund --loglevel=error azurite@3.37.0 >/dev/null 2>&1 \
    || npm install --prefix "$root/.tools" --no-audit --no-fund azurite@3.37.0
fi
cd "$root"
exec "$root/.venv/bin/python" -m pytest -p no:cacheprovider "$@"
