#!/usr/bin/env bash
# The README's test command: installs everything (venv, packages, the noida-db broker, the test
# servers) and runs the tests (two pytest workers; STREAMSPARK_TEST_WORKERS=0 for one). Extra arguments go to pytest, e.g. scripts/test.sh tests/dataframe -k filter
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# 1. Debian packages the tests need and do not find, in one apt run (apt holds a lock):
#    Node.js/npm for Azurite, PostgreSQL, Redis and InfluxDB 1.x for the sink tests
need=()
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v influxd >/dev/null 2>&1 || need+=(influxdb)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (apt)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # the packages start system services; the tests run their own servers
  for svc in postgresql redis-server influxdb; do service "$svc" stop >/dev/null 2>&1 || true; done
fi

# 2. Three independent downloads, side by side: the project venv, Azurite (npm, into .tools/)
#    and the BigQuery emulator's own venv (it needs DuckDB 1.4.4, whose spatial extension is on PyPI)
install_azurite() {
  [ -x "$root/.tools/node_modules/.bin/azurite-blob" ] && return 0
  npm install --prefix "$root/.tools" --no-audit --no-fund --loglevel=error azurite@3.37.0 >/dev/null 2>&1 \
    || npm install --prefix "$root/.tools" --no-audit --no-fund azurite@3.37.0
}
install_bqemu() {
  local bq="$root/.tools/bqemu"
  [ -f "$bq/.installed" ] && return 0
  python3 -m venv "$bq"
  "$bq/bin/pip" install -q bqemulator==1.4.0 duckdb==1.4.4 duckdb-ext-spatial==1.4.4.20260205 numpy 2>&1 \
    | grep -v "^WARNING: Location" || true
  local ext="$bq/home/.duckdb/extensions/v1.4.4/linux_amd64" src
  mkdir -p "$ext"
  src="$("$bq/bin/python" -c 'import duckdb_ext; print(list(duckdb_ext.__path__)[0])')"
  cp "$src/extensions/v1.4.4/linux_amd64/spatial.duckdb_extension" "$ext/"
  touch "$bq/.installed"
}
mkdir -p "$root/.tools"
"$root/scripts/bootstrap.sh" test & venv_job=$!
install_azurite & azurite_job=$!
install_bqemu & bqemu_job=$!
failed=0
wait "$venv_job" || { echo "installing the project venv failed" >&2; failed=1; }
wait "$azurite_job" || { echo "installing Azurite (npm) failed" >&2; failed=1; }
wait "$bqemu_job" || { echo "installing the BigQuery emulator venv failed" >&2; failed=1; }
[ "$failed" = 0 ] || exit 1

cd "$root"
# two pytest workers (xdist): the kill -9 harnesses mostly wait on subprocesses starting Spark,
# so the rest of the suite runs beside them; STREAMSPARK_TEST_WORKERS=0 runs in one process
workers="${STREAMSPARK_TEST_WORKERS:-2}"
parallel=()
# (loadgroup: tests marked with one xdist_group, e.g. the standalone cluster's, share a worker)
[ "$workers" != 0 ] && parallel=(-n "$workers" --dist loadgroup)
# format and lint (pyproject.toml [tool.ruff]) before the tests; types are checked by tests/test_typing.py
"$root/.venv/bin/python" -m ruff format --check -q "$root/streamspark" "$root/tests" "$root/bench" \
  || { echo "ruff format: the files above need .venv/bin/python -m ruff format" >&2; exit 1; }
"$root/.venv/bin/python" -m ruff check -q "$root/streamspark" "$root/tests" "$root/bench"
# the documentation (mkdocs.yml, docs/, the API reference from the docstrings) builds with no
# warning; its log is shown only when it fails (mkdocs' -q would also hide the warnings that
# --strict counts, so the build would pass with them)
if ! docs_log="$("$root/.venv/bin/python" -m mkdocs build --strict -f "$root/mkdocs.yml" -d "$root/.tools/site" 2>&1)"; then
  echo "$docs_log" >&2
  echo "mkdocs build --strict failed (the log is above)" >&2
  exit 1
fi
exec "$root/.venv/bin/python" -m pytest -p no:cacheprovider "${parallel[@]}" "$@"
