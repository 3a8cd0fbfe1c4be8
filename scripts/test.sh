#!/usr/bin/env bash
# Install everything the test suite needs into .venv, then run lint, types and every test.
# Works on a fresh machine with only Python, pip and apt: as root it installs with apt what
# the tests need outside Python (a headless Java for Spark, PostgreSQL for the database
# tests, Debian's Chromium for the browser tests) and starts a throwaway PostgreSQL cluster on 127.0.0.1 for the run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'

need=()
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)   # the web app's browser tests (Playwright)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
     --no-install-recommends "${need[@]}" >/dev/null) \
    || echo "note: could not install ${need[*]}; the tests needing them will be skipped" >&2
fi

if [ -z "${RANKSCOPE_TEST_PG_URL:-}" ]; then
  pgdir=$(mktemp -d)
  trap 'bash scripts/pg_test_server.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
  eval "$(bash scripts/pg_test_server.sh start "$pgdir")" \
    || echo "note: could not start PostgreSQL; its tests will be skipped" >&2
fi

.venv/bin/ruff check src tests benchmarks scripts
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
