#!/usr/bin/env bash
# Install rankscope into .venv and evaluate the two bundled sample runs against the sample qrels.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
DATA=src/rankscope/sample_data
.venv/bin/rankscope evaluate "$DATA/qrels.txt" "$DATA/run_a.txt" "$DATA/run_b.txt" \
  -m ndcg@10 -m P@5 -m map -m recip_rank -m R@100 -m bpref
