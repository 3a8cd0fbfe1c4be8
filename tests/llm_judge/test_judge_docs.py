"""docs/llm_judges.md: the walk-through's commands run as written on the demo collection,
with the scripted local server standing in for the model server.

The stand-in "model" knows the shipped judgments and answers with them, changed for a
fixed quarter or so of the pairs, and with a made-up grade (or, now and then, no grade at
all) for the holes. Every figure the walk-through prints is then checked against the same
figure computed here from what the server answered: scikit-learn for the kappas and the
confusion matrix, pytrec_eval for nDCG@10, scipy for Kendall's tau.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import threading
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from rankscope.cli.main import main

from .conftest import Reply

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "llm_judges.md"
MODEL_URL = "http://127.0.0.1:8080/v1"


def _commands() -> list[list[str]]:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", DOC.read_text(), flags=re.DOTALL):
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("rankscope "):
                out.append(shlex.split(line)[1:])
    return out


def _h(*parts: str) -> int:
    return int(hashlib.sha256(" ".join(parts).encode()).hexdigest(), 16)


class StandIn:
    """The scripted model: identifies (query, document) in the prompt, answers, records."""

    def __init__(self, demo: Path) -> None:
        self.qrels: dict[tuple[str, str], int] = {}
        for line in (demo / "qrels.txt").read_text().splitlines():
            q, _, d, g = line.split()
            self.qrels[(q, d)] = int(g)
        self.by_text = {}
        for line in (demo / "queries.tsv").read_text().splitlines()[1:]:
            q, text = line.split("\t")
            self.by_text[text] = q
        self.by_url = {}
        with open(demo / "corpus.jsonl", encoding="utf-8") as handle:
            for line in handle:
                doc = json.loads(line)
                self.by_url[doc["url"]] = doc["id"]
        self.answered: dict[tuple[str, str], int | None] = {}
        self.lock = threading.Lock()

    def grade(self, q: str, d: str) -> int | None:
        h = _h(q, d)
        if (q, d) in self.qrels:
            g = self.qrels[(q, d)]
            if h % 4 == 0:
                return min(3, g + 1)
            return max(0, g - 1) if h % 7 == 0 else g
        if h % 40 == 0:
            return None  # an answer with no grade in it
        return [0, 0, 0, 1, 1, 2, 3][h % 7]

    def __call__(self, doc: str, n: int, body: dict) -> Reply:
        text = body["messages"][-1]["content"]
        q = self.by_text[re.search(r"^Query: (.*)$", text, re.MULTILINE).group(1)]
        d = self.by_url[re.search(r"^url: (\S+)$", text, re.MULTILINE).group(1)]
        grade = self.grade(q, d)
        with self.lock:
            assert (q, d) not in self.answered, "asked twice"
            self.answered[(q, d)] = grade
        return Reply("I cannot tell from this." if grade is None
                     else json.dumps({"grade": grade}))


def _run_file(path: Path) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in path.read_text().splitlines():
        q, _, d, rank, _, _ = line.split()
        ranked.setdefault(q, []).append((int(rank), d))
    return {q: [d for _, d in sorted(v)] for q, v in ranked.items()}


def _mean_ndcg10(qrels: dict[tuple[str, str], int], run: Path, queries: set[str]) -> float:
    nested: dict[str, dict[str, int]] = {}
    for (q, d), g in qrels.items():
        if q in queries:
            nested.setdefault(q, {})[d] = g
    scores: dict[str, dict[str, float]] = {}
    for line in run.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        scores.setdefault(q, {})[d] = float(s)
    per = pytrec_eval.RelevanceEvaluator(nested, {"ndcg_cut"}).evaluate(scores)
    assert set(per) == set(nested)  # every judged query has results
    return float(np.mean([v["ndcg_cut_10"] for v in per.values()]))


@pytest.mark.slow
def test_the_walk_through_runs_on_the_demo_collection(server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    doc_text = " ".join(DOC.read_text().split())  # the prose, line breaks as spaces
    ran: list[tuple[list[str], int, str]] = []
    model: StandIn | None = None
    for argv in _commands():
        argv = [server.url if a == MODEL_URL else a for a in argv]
        before = server.count
        assert main(argv) == 0, argv
        ran.append((argv, server.count - before, capsys.readouterr().out))
        if argv[:2] == ["demo", "init"]:
            model = StandIn(tmp_path / "demo")
            server.script = model
    assert model is not None
    demo = tmp_path / "demo"
    kinds = [" ".join(a[:2]) for a, _, _ in ran]
    assert kinds == ["demo init", "snapshot demo/endpoint_tuned.toml",
                     "snapshot demo/endpoint.toml", "snapshots holes", "judge --endpoint",
                     "judge --endpoint", "judge --endpoint", "judge agreement",
                     "judge --endpoint", "judge agreement", "judgments aggregate",
                     "coverage demo/filled.txt", "evaluate demo/filled.txt"]
    (_, _, holes_out), (_, dry, dry_out), (_, holes, _), (_, sample, sample_out) = ran[3:7]
    (_, _, agreement_out), (_, top10, _), (_, _, ranking_out) = ran[7:10]

    # the numbers the guide states, computed from the run files and the judgments
    tuned, baseline = _run_file(demo / "tuned.txt"), _run_file(demo / "baseline.txt")
    top20 = [(q, d) for q, docs in tuned.items() for d in docs]
    hole_pairs = [p for p in top20 if p not in model.qrels]
    judged20 = [p for p in top20 if p in model.qrels]
    pool10 = {(q, d) for run in (tuned, baseline) for q, docs in run.items() for d in docs[:10]}
    assert all(p in model.qrels for p in pool10)  # the judgments cover every top 10
    assert f"hold {len(hole_pairs)} results nobody graded" in doc_text
    assert f"reports {len(hole_pairs)} unjudged of {len(top20)}" in doc_text
    coverage = 1 - len(hole_pairs) / len(top20)
    assert re.search(rf"{len(top20)}\s+{len(hole_pairs)}\s+{coverage:.3f}", holes_out)
    assert f"grade ({len(judged20)} of the {len(top20)})" in doc_text
    assert f"({len(pool10)} pairs, all graded" in doc_text

    # 3. the dry run sends nothing and counts the holes; 4. the run asks each hole once
    assert dry == 0 and f"pairs {len(hole_pairs)}: 0 already done" in dry_out
    assert f"pairs ({len(hole_pairs)})" in doc_text
    prompt_tokens = int(re.search(r"estimated tokens: (\d+) prompt", dry_out).group(1))
    assert 1800 < prompt_tokens / len(hole_pairs) < 2000  # "about 1,900 a request"
    assert holes == len(hole_pairs)
    asked_holes = set(list(model.answered)[:holes])
    assert asked_holes == set(hole_pairs)

    # 5. a sample of 100 graded pairs of the tuned top 20, and the agreement report
    assert sample == 100
    sampled = list(model.answered)[holes:holes + sample]
    assert all(p in model.qrels and p in set(top20) for p in sampled)
    assert "100 results graded by both" in sample_out

    def overlap(pairs):
        items = [p for p in pairs if model.answered[p] is not None]
        return [model.qrels[p] for p in items], [model.answered[p] for p in items]

    h, m = overlap(sampled)
    assert f"{len(h)} results graded by both" in agreement_out
    kappa = re.search(r"^Cohen's kappa +(\S+)", agreement_out, re.MULTILINE).group(1)
    assert float(kappa) == pytest.approx(cohen_kappa_score(h, m, labels=[0, 1, 2, 3]),
                                         abs=5e-4)

    # 6. the full top 10 of both runs, the sample not asked again
    assert top10 == len(pool10 - set(sampled))
    checked = set(sampled) | pool10
    assert set(model.answered) == set(hole_pairs) | checked
    assert main(["judge", "agreement", "demo/qrels.txt", "demo/llm_check.csv", "--runs",
                 "demo/baseline.txt", "demo/tuned.txt", "-m", "nDCG@10", "-f", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    h, m = overlap(sorted(checked))
    labels = [0, 1, 2, 3]
    assert report["n_items"] == len(h)
    assert report["kappa"] == pytest.approx(cohen_kappa_score(h, m, labels=labels))
    assert report["kappa_linear"] == pytest.approx(
        cohen_kappa_score(h, m, labels=labels, weights="linear"))
    assert report["kappa_quadratic"] == pytest.approx(
        cohen_kappa_score(h, m, labels=labels, weights="quadratic"))
    hb, mb = [int(g >= 1) for g in h], [int(g >= 1) for g in m]
    assert report["kappa_binary"] == pytest.approx(cohen_kappa_score(hb, mb))
    assert report["base_rate_human"] == pytest.approx(np.mean(hb))
    assert report["base_rate_llm"] == pytest.approx(np.mean(mb))
    table = confusion_matrix(h, m, labels=labels)
    assert [[report["confusion"][str(a)][str(b)] for b in labels] for a in labels] \
        == table.tolist()
    # the system ranking: nDCG@10 under each set of grades, on the results both graded
    llm = {p: g for p, g in model.answered.items() if p in checked and g is not None}
    human_common = {p: g for p, g in model.qrels.items() if p in llm}
    queries = {q for q, _ in human_common}
    ranking = report["ranking"]
    assert ranking["n_queries"] == len(queries) and ranking["common"] is True
    assert ranking["n_pairs"] == len(human_common) == len(llm)
    assert ranking["human_only"] == len(model.qrels) - len(human_common)
    assert (f"here the {len(model.qrels) - len(human_common)} results of the judgments the "
            "model never graded") in doc_text
    runs = {"demo-baseline": demo / "baseline.txt", "demo-tuned": demo / "tuned.txt"}
    expected = {name: (_mean_ndcg10(human_common, path, queries),
                       _mean_ndcg10(llm, path, queries)) for name, path in runs.items()}
    for row in ranking["runs"]:
        human_score, llm_score = expected[row["run"]]
        assert row["human"] == pytest.approx(human_score)
        assert row["llm"] == pytest.approx(llm_score)
        assert row["delta"] == pytest.approx(llm_score - human_score)
    names = sorted(expected)
    tau = kendalltau([expected[n][0] for n in names], [expected[n][1] for n in names])
    assert ranking["kendall_tau"] == pytest.approx(tau.statistic)
    assert "Kendall's tau" in ranking_out and "demo-tuned: human" in ranking_out

    # 7. the holes filled: the tuned top 20 graded but for the answers with no grade
    filled = {tuple(line.split()[::2][:2]) for line in
              (demo / "filled.txt").read_text().splitlines()}
    no_grade = {p for p in hole_pairs if model.answered[p] is None}
    assert no_grade and {p for p in top20 if p not in filled} == no_grade
