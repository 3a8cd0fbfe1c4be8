"""``rankscope compare / similarity / fuse / report`` from the outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.cli.main import main
from rankscope.compare.comparison import compare
from rankscope.compare.rank_similarity import similarity
from rankscope.data.tables import Qrels, Run
from rankscope.fusion.combine import fuse

from .data import make_qrels, make_run

pytest.importorskip("scipy")

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "sample_data"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    qrels = make_qrels(3, n_queries=20)
    Qrels.from_dict(qrels).write(tmp_path / "qrels.txt")
    out = {"qrels": tmp_path / "qrels.txt"}
    for name, seed, skill in (("bm25", 1, 0.8), ("dense", 2, 1.6), ("hybrid", 3, 1.2)):
        path = tmp_path / f"{name}.txt"
        Run.from_dict(make_run(qrels, seed, skill), name=name).write(path)
        out[name] = path
    return out


def test_compare_json(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]),
                 str(files["hybrid"]), "-m", "ndcg_cut_10", "-m", "P@5", "--format", "json",
                 "--test", "wilcoxon", "--correction", "bh"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["runs"]) == ["bm25", "dense", "hybrid"]  # run tags
    assert set(out["runs"]["dense"]["mean"]) == {"ndcg_cut_10", "P@5"}  # names as typed
    assert len(out["comparisons"]) == 4
    for c in out["comparisons"]:
        assert c["baseline"] == "bm25"
        assert {"metric", "run", "baseline", "delta", "p_value", "p_adjusted", "wins", "ties",
                "losses"} <= set(c)
    # The same numbers as the library on the same files.
    lib = compare(files["qrels"], [files["bm25"], files["dense"], files["hybrid"]],
                  ["ndcg_cut_10", "P@5"], test="wilcoxon", correction="bh")
    assert out == json.loads(lib.render("json"))


def test_compare_baseline_tags_and_formats(files: dict[str, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # Two files with the same run tag are told apart by file name.
    twin = tmp_path / "bm25_copy.txt"
    twin.write_text(files["bm25"].read_text())
    code = main(["compare", str(files["qrels"]), str(files["bm25"]), str(twin),
                 str(files["dense"]), "-m", "AP", "--baseline", "dense", "-f", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["runs"]) == ["bm25.txt", "bm25_copy.txt", "dense"]
    assert {c["baseline"] for c in out["comparisons"]} == {"dense"}
    for fmt, marker in (("latex", r"\toprule"), ("markdown", "| metric |"),
                        ("html", "<table"), ("csv", "metric,run,baseline"),
                        ("table", "baseline: bm25")):
        assert main(["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]),
                     "-m", "AP", "-f", fmt]) == 0
        assert marker in capsys.readouterr().out
    names = ["--name", "A", "--name", "B"]
    assert main(["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]),
                 "-m", "AP", "-f", "json", "--all-pairs", *names]) == 0
    assert list(json.loads(capsys.readouterr().out)["runs"]) == ["A", "B"]


def test_compare_errors(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(files["qrels"]), str(files["bm25"]), "-m", "AP"]) == 2
    assert "at least two runs" in capsys.readouterr().err
    assert main(["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]),
                 "-m", "AP", "--baseline", "nope"]) == 2
    assert "no run named 'nope'" in capsys.readouterr().err
    assert main(["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]),
                 "-m", "nDGC@10"]) == 2
    assert "unknown metric" in capsys.readouterr().err


def test_similarity_json_shape(files: dict[str, Path],
                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["similarity", str(files["bm25"]), str(files["dense"]), "-m", "rbo(p=0.9)",
                 "-m", "jaccard@10", "--per-query", "--format", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"mean", "per_query"}
    assert set(out["mean"]) == {"rbo(p=0.9)", "jaccard@10"}
    lib = similarity(files["bm25"], files["dense"], ["rbo(p=0.9)", "jaccard@10"])
    assert out["mean"] == lib.means
    assert set(out["per_query"]) == set(lib.query_ids)
    # Without --per-query: means only; default measure RBO(p=0.9).
    assert main(["similarity", str(files["bm25"]), str(files["bm25"]), "-f", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "per_query" not in out and out["mean"]["RBO(p=0.9)"] == pytest.approx(1.0)


def test_fuse_writes_the_library_run(files: dict[str, Path], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    fused_path = tmp_path / "fused.txt"
    code = main(["fuse", str(files["bm25"]), str(files["dense"]), "--method", "rrf",
                 "-o", str(fused_path)])
    assert code == 0
    written = Run.read(fused_path)
    assert written.name == "rrf"
    expected = fuse([files["bm25"], files["dense"]], method="rrf")
    got, want = written.to_dict(), expected.to_dict()
    assert set(got) == set(want)
    for q in want:
        assert got[q] == pytest.approx(want[q], rel=1e-12)
    code = main(["fuse", str(files["bm25"]), str(files["dense"]), "--method", "wsum",
                 "--weights", "0.3,0.7", "--name", "mix", "-o", str(fused_path)])
    assert code == 0
    assert Run.read(fused_path).name == "mix"


def test_fuse_optimize(files: dict[str, Path], tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    fused_path = tmp_path / "best.txt"
    code = main(["fuse", str(files["bm25"]), str(files["dense"]), "--method", "wsum",
                 "--optimize", "--qrels", str(files["qrels"]), "-m", "AP", "--step", "0.25",
                 "-o", str(fused_path)])
    assert code == 0
    err = capsys.readouterr().err
    assert "best: weights=" in err and len(err.strip().splitlines()) == 1 + 5 + 1
    assert Run.read(fused_path).n_queries == 20


def test_report_cli(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code = main(["report", str(files["qrels"]), str(files["bm25"]), str(files["dense"]),
                 "-m", "AP", "-m", "nDCG@10", "-o", str(out), "--max-k", "5"])
    assert code == 0
    page = out.read_text()
    # curves: nDCG@k and precision-recall; per metric: distribution + 1 difference plot
    assert "<table" in page and page.count("<svg ") == 2 + 2 * 2


def test_sample_data_comparison(capsys: pytest.CaptureFixture[str]) -> None:
    if not (SAMPLE / "run_b.txt").exists():
        pytest.skip("no sample data")
    code = main(["compare", str(SAMPLE / "qrels.txt"), str(SAMPLE / "run_a.txt"),
                 str(SAMPLE / "run_b.txt"), "-m", "nDCG@10", "-f", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["runs"]) == 2 and out["n_queries"]["nDCG@10"] > 0
