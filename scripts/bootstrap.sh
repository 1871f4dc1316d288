#!/usr/bin/env bash
# Creates .venv in the repository root and installs streamspark with the given extras.
# Idempotent: re-running only installs what changed. Needs Python 3.11+ and Java 17 (for Spark).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
extras="${1:-test}"
python="${PYTHON:-python3}"
if ! command -v java >/dev/null 2>&1; then
  echo "Java is required by Spark; installing openjdk-17-jre-headless" >&2
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  else
    echo "Install Java 17 and re-run" >&2; exit 1
  fi
fi
if [ ! -x "$root/.venv/bin/python" ]; then
  "$python" -m venv "$root/.venv"
fi
stamp="$root/.venv/.streamspark-installed-$extras"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
  # pip's output (setuptools' editable-install warnings among it) is shown only when it fails
  log="$root/.venv/pip-install.log"
  if ! { "$root/.venv/bin/python" -m pip install -q --upgrade pip \
         && "$root/.venv/bin/python" -m pip install -q -e "$root[$extras]"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "pip install failed (the log is above, and in $log)" >&2
    exit 1
  fi
  "$root/.venv/bin/python" -c "import streamspark, pyspark" 
  touch "$stamp"
fi
# Bytecode for the package, as a regular (non-editable) pip install writes it: every Python process
# Spark starts imports streamspark, and with PYTHONDONTWRITEBYTECODE set (or a read-only checkout)
# each would compile it again (~0.2 CPU-s a process). Cheap when nothing changed.
"$root/.venv/bin/python" -m compileall -q "$root/streamspark" >/dev/null || true
# Spark's JVM class archive (streamspark/engine/jvm_archive.py): about a minute, once per Java and
# PySpark installation; it cuts ~40% off a local Spark session's start. Spark starts without it if this fails.
# The same command first compiles the local file system of engine/local_file_system.py (a second or two).
case "$extras" in
  *test*|*demo*|*broker*)
    "$root/.venv/bin/python" -m streamspark.engine.jvm_archive 2>&1 | tail -n 3 || true ;;
esac
