"""Each idea has one implementation (issue 28): the copies that existed are gone, and a new
one is noticed. Structural checks over the source, each naming the one home of its idea;
the behaviour of each home is tested where it lives."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rankscope"


def _modules() -> dict[str, str]:
    return {str(p.relative_to(SRC)): p.read_text() for p in sorted(SRC.rglob("*.py"))}


def _where(pattern: str) -> list[str]:
    found = re.compile(pattern)
    return [name for name, text in _modules().items() if found.search(text)]


def _calls(function: str) -> list[str]:
    """Modules that call ``function`` (by name)."""
    out = []
    for name, text in _modules().items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if called == function:
                    out.append(name)
                    break
    return out


def test_one_writer_of_trec_run_lines():
    # a TREC run line is formatted in data/trec_writer.py only (the snapshot exports and
    # every frame writer go through it)
    assert _where(r"""[\"'] Q0 |Q0 \{""") == []
    assert _where(r"""lit\(["']Q0["']\)""") == ["data/trec_writer.py"]


def test_one_search_hit_and_one_query_record():
    # the store records search's Hit and QueryItem; no copy of them field by field
    assert _where(r"class (HitRow|NewQuery)\b") == []
    assert _where(r"class Hit\b") == ["search/types.py"]
    assert _where(r"class QueryItem\b") == ["search/types.py"]


def test_one_loader_of_a_snapshots_hits():
    # every reader of a stored snapshot's hits goes through store.snapshots.read_snapshot
    assert _calls("snapshot_hits") == ["store/snapshots.py"]


def test_one_reader_of_a_query_set():
    # a query set's TSV and its header aliases are read in search/queries.py only; the LLM
    # judges' inputs call it (before: llm_judge/inputs.py had its own TSV reader and aliases)
    assert _where(r"_(ID|TEXT|NEED)_(HEADERS|NAMES) =") == ["search/queries.py"]
    assert _calls("has_rater_column") == []  # a qrels argument is read once, by read_relevance


def test_one_majority_vote_and_one_pairing_of_a_rater_against_a_reference():
    # the vote lives in judgments/aggregate.py (the LLM judge's agreement had its own);
    # stacking two grade columns as two raters in judgments/agreement.py (the LLM judge's
    # agreement and the app's adjudication each built it)
    assert _where(r"def _?majority") == ["judgments/aggregate.py"]
    assert _where(r"""pl\.lit\(["'](human|llm|grader|consensus)["']\)\.alias\(["']rater""") == []
    assert _calls("two_raters") == ["llm_judge/agreement.py", "services/adjudication.py"]


def test_one_retrying_http_transport():
    # the retry loop, the backoff and the client statistics live in retry.py; the search
    # client and the LLM judge's client send through it (each had its own loop, backoff
    # formula and ClientStats)
    assert _where(r"for attempt in range\(self\.max_retries") == []
    assert _where(r"class ClientStats\b") == ["retry.py"]
    assert _where(r"\bbackoff \* 2\.0 ?\*\*") == []
    assert sorted(_calls("retrying")) == ["llm_judge/client.py", "search/client.py"]
    assert sorted(_calls("exchange")) == ["llm_judge/client.py", "search/client.py"]


def test_the_llm_answer_cache_has_no_schema_of_its_own():
    # the cache's table is the store's, built by alembic (llm_judge/cache.py created its own
    # with sqlite3 and added columns by hand)
    assert _where(r"CREATE TABLE|ALTER TABLE") == ["search/embedded_index.py"]  # its own index
    assert _where(r"__tablename__ = \"llm_answers\"") == ["store/llm_cache.py"]
