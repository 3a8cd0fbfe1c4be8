"""Pool the demo collection: rank every demo query with both demo endpoints.

A development tool for whoever grades the demo collection: it runs the
embedded engine's contract (SQLite FTS5, BM25; see ``demo_data/README.md``)
with nothing but Python's ``sqlite3``, for the endpoints ``baseline.toml``
and ``tuned.toml`` in ``src/rankscope/demo_data/``, and writes

- ``OUT/run_<endpoint>.txt``: TREC runs (score = the engine's score, ``-bm25``),
  ``--depth`` documents per query;
- ``OUT/pool.tsv``: ``query_id, doc_id, rank in each endpoint`` for the union
  of both endpoints' top ``--pool-depth`` (the documents to grade), with a
  ``graded`` column saying whether ``qrels.txt`` already grades the pair.
  Documents whose score ties with the last pooled one are pooled as well, so
  the top k is fully judged under any tie-break.

It reads the endpoint files, so a changed configuration is pooled as written.
Run: ``python3 scripts/make_demo_pools.py -o /tmp/pools``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sqlite3
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "src" / "rankscope" / "demo_data"
ENDPOINTS = ("baseline", "tuned")


def load_corpus(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def field_text(doc: dict[str, Any], field: str) -> str:
    """A field as indexed: missing -> '', string as is, anything else as its JSON text."""
    value = doc.get(field)
    if value is None and field not in doc:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def build_index(db: sqlite3.Connection, docs: list[dict[str, Any]], config: dict[str, Any]) -> None:
    fields: list[str] = list(config["fields"])
    tokenizer: str = config.get("tokenizer", "unicode61")
    id_field: str = config.get("id_field", "id")
    columns = ", ".join(fields)
    db.execute(
        "CREATE TABLE docs("
        "rowid INTEGER PRIMARY KEY, doc_id TEXT UNIQUE NOT NULL, body TEXT NOT NULL)"
    )
    db.execute(f"CREATE VIRTUAL TABLE fts USING fts5({columns}, tokenize='{tokenizer}')")
    marks = ", ".join("?" for _ in fields)
    for rowid, doc in enumerate(docs, start=1):
        db.execute(
            "INSERT INTO docs(rowid, doc_id, body) VALUES (?, ?, ?)",
            (rowid, str(doc[id_field]), json.dumps(doc, ensure_ascii=False)),
        )
        db.execute(
            f"INSERT INTO fts(rowid, {columns}) VALUES (?, {marks})",
            (rowid, *(field_text(doc, f) for f in fields)),
        )
    db.commit()


def match_expression(text: str) -> str | None:
    terms = list(dict.fromkeys(re.findall(r"\w+", text.casefold())))
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms)


def search(
    db: sqlite3.Connection, config: dict[str, Any], text: str, depth: int
) -> list[tuple[str, float]]:
    expression = match_expression(text)
    if expression is None:
        return []
    weights_cfg: dict[str, float] = config.get("weights", {})
    weights = [float(weights_cfg.get(f, 1.0)) for f in config["fields"]]
    args = ", ".join(repr(w) for w in weights)
    rows = db.execute(
        f"SELECT d.doc_id, bm25(fts, {args}) AS r FROM fts JOIN docs d ON d.rowid = fts.rowid "
        "WHERE fts MATCH ? ORDER BY r ASC, d.doc_id ASC LIMIT ?",
        (expression, depth),
    ).fetchall()
    return [(doc_id, -r) for doc_id, r in rows]


def read_queries(path: Path) -> list[tuple[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines[1:]:  # header: query_id<TAB>text
        if line.strip():
            qid, text = line.split("\t", 1)
            out.append((qid, text))
    return out


def read_graded(path: Path) -> set[tuple[str, str]]:
    if not path.exists():
        return set()
    return {
        (parts[0], parts[2])
        for parts in (line.split() for line in path.read_text().splitlines())
        if len(parts) == 4
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path, required=True, help="output directory")
    parser.add_argument("--depth", type=int, default=100, help="documents per query in the runs")
    parser.add_argument("--pool-depth", type=int, default=10, help="top k of each endpoint pooled")
    args = parser.parse_args()
    docs = load_corpus(DATA / "corpus.jsonl.gz")
    queries = read_queries(DATA / "queries.tsv")
    graded = read_graded(DATA / "qrels.txt")
    args.out.mkdir(parents=True, exist_ok=True)
    ranks: dict[tuple[str, str], dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ENDPOINTS:
            config = tomllib.loads((DATA / f"{name}.toml").read_text(encoding="utf-8"))
            db = sqlite3.connect(Path(tmp) / f"{name}.sqlite")
            build_index(db, docs, config)
            lines = []
            for qid, text in queries:
                hits = search(db, config, text, max(args.depth, args.pool_depth + 50))
                # The cut-off score: documents tied with the last pooled one are
                # pooled too, so the top k is judged whatever the tie-break
                # (the engine breaks ties by id ascending, trec_eval descending).
                cut = hits[args.pool_depth - 1][1] if len(hits) >= args.pool_depth else None
                for rank, (doc_id, score) in enumerate(hits, start=1):
                    if rank <= args.depth:
                        lines.append(f"{qid} Q0 {doc_id} {rank} {score!r} {config['name']}")
                    if rank <= args.pool_depth or score == cut:
                        ranks.setdefault((qid, doc_id), {})[name] = rank
            db.close()
            (args.out / f"run_{name}.txt").write_text("\n".join(lines) + "\n")
    order = {qid: i for i, (qid, _) in enumerate(queries)}
    rows = ["query_id\tdoc_id\t" + "\t".join(ENDPOINTS) + "\tgraded"]
    for (qid, doc_id), where in sorted(ranks.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
        cells = [str(where.get(n, "")) for n in ENDPOINTS]
        rows.append(f"{qid}\t{doc_id}\t" + "\t".join(cells) + f"\t{int((qid, doc_id) in graded)}")
    (args.out / "pool.tsv").write_text("\n".join(rows) + "\n")
    missing = sum(1 for key in ranks if key not in graded)
    sys.stdout.write(
        f"{len(queries)} queries, {len(ranks)} pooled pairs, {missing} not yet graded; "
        f"runs and pool in {args.out}\n"
    )


if __name__ == "__main__":
    main()
