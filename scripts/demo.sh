#!/usr/bin/env bash
# Install rankscope into .venv and run the snapshot loop on the bundled demo collection:
# write the collection, snapshot its two configurations (the embedded engine: no server, no
# network), evaluate both runs against the hand-made judgments, and diff the two snapshots.
# DEMO_DIR=... keeps the files somewhere you choose (default: a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip_install() { .venv/bin/python -m pip install -q --disable-pip-version-check "$@"; }
# The store and the paired tests are extras; without them the loop still runs on run files.
pip_install -e '.[store,stats]' 2>/dev/null || pip_install -e .
R=.venv/bin/rankscope
DEMO=${DEMO_DIR:-$(mktemp -d)/demo}
if .venv/bin/python -c 'import sqlalchemy, alembic, scipy' 2>/dev/null; then
  STORE=(--store "$DEMO/snapshots.sqlite")
else
  STORE=()
fi
set -x
$R demo init "$DEMO"
$R snapshot "$DEMO/endpoint.toml" "$DEMO/queries.tsv" -o "$DEMO/baseline.txt" "${STORE[@]}"
$R snapshot "$DEMO/endpoint_tuned.toml" "$DEMO/queries.tsv" -o "$DEMO/tuned.txt" "${STORE[@]}"
$R evaluate "$DEMO/qrels.txt" "$DEMO/baseline.txt" "$DEMO/tuned.txt" -m nDCG@10 -m P@5 -m recip_rank
if [ ${#STORE[@]} -gt 0 ]; then
  $R snapshots diff demo-baseline demo-tuned "${STORE[@]}" --qrels "$DEMO/qrels.txt" -m nDCG@10 -m P@5
else
  $R snapshots diff "$DEMO/baseline.txt" "$DEMO/tuned.txt" --ties input
fi
