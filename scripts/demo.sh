#!/usr/bin/env bash
# The README's demo command: embedded broker + local Spark + local data lake, on defaults.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/bootstrap.sh" demo
cd "$root"
exec "$root/.venv/bin/python" -m streamspark.demo "$@"
