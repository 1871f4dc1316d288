#!/usr/bin/env bash
# The README's test command: installs everything (venv, packages, the noida-db broker) and runs the tests.
# Extra arguments go to pytest, e.g. scripts/test.sh tests/dataframe -k filter
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/bootstrap.sh" test
cd "$root"
exec "$root/.venv/bin/python" -m pytest -p no:cacheprovider "$@"
