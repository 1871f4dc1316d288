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
# Database servers for the sink tests (Debian): PostgreSQL, Redis, InfluxDB 1.x
need=()
command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v influxd >/dev/null 2>&1 || need+=(influxdb)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (apt)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # the packages start system services; the tests run their own servers
  for svc in postgresql redis-server influxdb; do service "$svc" stop >/dev/null 2>&1 || true; done
fi
# BigQuery emulator in its own venv: it needs DuckDB 1.4.4, whose spatial extension is on PyPI
bq="$root/.tools/bqemu"
if [ ! -f "$bq/.installed" ]; then
  python3 -m venv "$bq"
  "$bq/bin/pip" install -q bqemulator==1.4.0 duckdb==1.4.4 duckdb-ext-spatial==1.4.4.20260205 numpy 2>&1 \
    | grep -v "^WARNING: Location" || true
  ext="$bq/home/.duckdb/extensions/v1.4.4/linux_amd64"
  mkdir -p "$ext"
  src="$("$bq/bin/python" -c 'import duckdb_ext; print(list(duckdb_ext.__path__)[0])')"
  cp "$src/extensions/v1.4.4/linux_amd64/spatial.duckdb_extension" "$ext/"
  touch "$bq/.installed"
fi
cd "$root"
exec "$root/.venv/bin/python" -m pytest -p no:cacheprovider "$@"
