"""Without an extra: the embedded engine and run files still work; the rest says which extra."""

from __future__ import annotations

import subprocess
import sys

from rankscope.cli.main import main

from .conftest import STANDIN

BLOCK = "import sys; sys.modules.update({m: None for m in %r}); "
RUN = "from rankscope.cli.main import main; raise SystemExit(main(%r))"


def cli(blocked, argv):
    code = BLOCK % (blocked,) + RUN % ([str(a) for a in argv],)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_core_install_snapshots_the_embedded_engine_to_a_run_file(tmp_path):
    import shutil

    for name in ("corpus.jsonl", "baseline.toml", "queries.tsv"):
        shutil.copy(STANDIN / name, tmp_path / name)
    blocked = ["httpx", "sqlalchemy", "alembic", "psycopg", "tantivy", "scipy"]
    done = cli(blocked, ["snapshot", tmp_path / "baseline.toml", tmp_path / "queries.tsv",
                         "-o", tmp_path / "run.txt"])
    assert done.returncode == 0, done.stderr
    # the same run as with every extra installed (this process), and one for every query
    full = tmp_path / "full"
    full.mkdir()
    for name in ("corpus.jsonl", "baseline.toml", "queries.tsv"):
        shutil.copy(STANDIN / name, full / name)
    assert main(["snapshot", str(full / "baseline.toml"), str(full / "queries.tsv"), "-o",
                 str(full / "run.txt"), "--quiet"]) == 0
    text = (tmp_path / "run.txt").read_text()
    assert text == (full / "run.txt").read_text()
    queries = [line.split("\t")[0] for line in (STANDIN / "queries.tsv").read_text()
               .splitlines()[1:]]
    assert sorted({line.split()[0] for line in text.splitlines()}) == sorted(queries)
    done = cli(blocked, ["snapshot", tmp_path / "baseline.toml", tmp_path / "queries.tsv",
                         "--store", tmp_path / "s.sqlite"])
    assert done.returncode == 2
    assert done.stderr.strip().endswith("pip install 'rankscope[store]'")
    assert done.stderr.count("\n") == 1


def test_remote_kinds_name_the_search_extra(tmp_path):
    (tmp_path / "q.tsv").write_text("q1\tboots\n")
    (tmp_path / "es.toml").write_text('kind = "elasticsearch"\nurl = "http://127.0.0.1:9"\n'
                                      'index = "p"\n')
    done = cli(["httpx"], ["snapshot", tmp_path / "es.toml", tmp_path / "q.tsv", "-o",
                           tmp_path / "r.txt"])
    assert done.returncode == 2 and "pip install 'rankscope[search]'" in done.stderr
    assert done.stderr.count("\n") == 1
    done = cli(["sqlalchemy"], ["snapshots", "list", "--store", tmp_path / "s.sqlite"])
    assert done.returncode == 2 and "pip install 'rankscope[store]'" in done.stderr
