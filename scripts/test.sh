#!/usr/bin/env bash
# Install everything the test suite needs into .venv, then run lint, types and every test.
# Works on a fresh machine with only Python, pip and apt (as root, Java is installed for Spark).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
# The Spark tests need a Java runtime; install a headless one when we can (root + apt).
if ! command -v java >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends default-jre-headless >/dev/null) \
    || echo "note: could not install Java; Spark tests will be skipped" >&2
fi
.venv/bin/ruff check src tests benchmarks scripts
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
