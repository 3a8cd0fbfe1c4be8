"""rankscope sweep: every configuration's numbers are those of `rankscope snapshot` of its own
endpoint file and `rankscope evaluate` of that run; a grid over a template variable sends
each value; the correction, the verdict, the holes; bad grids refused before any request."""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from rankscope.services.demo import init_demo

from .conftest import PACKAGED, run_cli

METRICS = ["nDCG@10", "P@5"]


def _each(option: str, values: list[str]) -> list[str]:
    """``[option, v1, option, v2, ...]``."""
    return [part for value in values for part in (option, value)]


def _grid_value(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) and " " in value else str(value)


def _hand_file(folder: Path, number: int, title: float, tokenizer: str) -> Path:
    """The demo's endpoint file with the two settings changed by hand (an index of its own)."""
    text = (folder / "endpoint.toml").read_text()
    text = re.sub(r"(?m)^weights = .*$", f"weights = {{ title = {title}, text = 1.0 }}", text)
    text = re.sub(r"(?m)^tokenizer = .*$", f'tokenizer = "{tokenizer}"', text)
    text = re.sub(r"(?m)^index = .*$", f'index = "hand-{number}.index.sqlite"', text)
    path = folder / f"hand-{number}.toml"
    path.write_text(text)
    return path


def _every_configuration_is_snapshot_then_evaluate(folder: Path, out: Path,
                                                   titles: list[float], tokenizers: list[str]):
    code, printed, err = run_cli(
        ["sweep", folder / "endpoint.toml", folder / "queries.tsv", "--qrels",
         folder / "qrels.txt", "--grid", "weights.title=" + ",".join(map(str, titles)),
         "--grid", "tokenizer=" + ",".join(tokenizers), *_each("-m", METRICS),
         "-f", "json", "-o", out, "--quiet"])
    assert code == 0, err
    swept = json.loads(printed)
    rows = swept["configurations"]
    assert len(rows) == len(titles) * len(tokenizers)
    assert sum(r["base"] for r in rows) == 1
    for number, (title, tokenizer) in enumerate(itertools.product(titles, tokenizers)):
        hand = _hand_file(folder, number, title, tokenizer)
        run = folder / f"hand-{number}.txt"
        assert run_cli(["snapshot", hand, folder / "queries.tsv", "-o", run, "--quiet"])[0] == 0
        code, evaluated, err = run_cli(["evaluate", folder / "qrels.txt", run,
                                        *_each("-m", METRICS), "-f", "json"])
        assert code == 0, err
        expected = json.loads(evaluated)
        row = next(r for r in rows if r["values"] == {"weights.title": title,
                                                      "tokenizer": tokenizer})
        # the same numbers, to the last bit: the means and their intervals
        assert row["means"] == expected["mean"], (title, tokenizer)
        assert row["intervals"] == expected["interval"], (title, tokenizer)
        # and the same run, line for line (the run tags aside)
        written = Path(row["run"]).read_text().splitlines()
        assert [line.rsplit(" ", 1)[0] for line in written] == [
            line.rsplit(" ", 1)[0] for line in run.read_text().splitlines()]
    return swept


def test_every_configuration_equals_snapshot_then_evaluate_of_its_file(demo, tmp_path):
    # the stand-in collection (laid out as `rankscope demo init` writes the demo)
    swept = _every_configuration_is_snapshot_then_evaluate(
        demo, tmp_path / "out", [1, 4], ["unicode61", "porter unicode61"])
    base = next(r for r in swept["configurations"] if r["base"])
    assert base["values"] == {"weights.title": 1, "tokenizer": "unicode61"}  # the file: 1.0


@pytest.mark.slow
def test_the_sweeps_corners_on_the_demo_collection_are_snapshot_then_evaluate(tmp_path):
    if not (PACKAGED / "corpus.jsonl.gz").is_file():
        pytest.skip("the packaged demo collection is not in this checkout")
    init_demo(tmp_path / "demo", source=PACKAGED)
    _every_configuration_is_snapshot_then_evaluate(
        tmp_path / "demo", tmp_path / "out", [1, 4], ["unicode61", "porter unicode61"])


ES_TEMPLATE = ('{"query": {"function_score": {"query": {"match": {"title": "{{query}}"}}, '
               '"weight": "{{boost}}"}}}')


def _es_files(tmp_path: Path, url: str) -> tuple[Path, Path, Path]:
    endpoint = tmp_path / "shop.toml"
    endpoint.write_text(f'kind = "elasticsearch"\nurl = "{url}"\nindex = "products"\n'
                        f"template = '{ES_TEMPLATE}'\nvariables = {{ boost = 1 }}\n")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\thiking boots\nq2\ttrail shoes\nq3\twool socks\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 p-101 2\nq2 0 p-207 1\nq3 0 p-033 1\nq3 0 p-101 0\n")
    return endpoint, queries, qrels


@pytest.mark.parametrize("key", ["boost", "{{boost}}", "variables.boost"])
def test_a_grid_over_a_template_variable_sends_each_value(engine, tmp_path, key):
    from search.engine_server import Reply

    engine.route("POST", "/products/_search", Reply("es8_search.json"))
    engine.route("GET", "/", Reply("es8_root.json"))
    endpoint, queries, qrels = _es_files(tmp_path, engine.url)
    code, out, err = run_cli(["sweep", endpoint, queries, "--qrels", qrels,
                              "--grid", f"{key}=1,2.5,4", "-m", "P@3", "-f", "json", "--quiet"])
    assert code == 0, err
    bodies = [r.body for r in engine.seen("/products/_search")]
    sent = Counter(b["query"]["function_score"]["weight"] for b in bodies)
    # every value, with every query, as the number it reads as (not the text)
    assert sent == {1: 3, 2.5: 3, 4: 3}
    assert sorted(type(v).__name__ for v in sent) == ["float", "int", "int"]
    assert {b["query"]["function_score"]["query"]["match"]["title"] for b in bodies} == {
        "hiking boots", "trail shoes", "wool socks"}
    rows = json.loads(out)["configurations"]
    assert [r["values"] for r in rows if r["base"]] == [{"variables.boost": 1}]
    assert sorted(r["values"]["variables.boost"] for r in rows) == [1, 2.5, 4]


def test_the_p_values_are_the_paired_test_corrected_by_holm_across_configurations(demo,
                                                                                tmp_path):
    scipy_stats = pytest.importorskip("scipy.stats")
    import rankscope

    code, _, err = run_cli(["sweep", demo / "endpoint.toml", demo / "queries.tsv",
                            "--qrels", demo / "qrels.txt", "--grid", "weights.title=1,2,4",
                            "--grid", "tokenizer=unicode61,porter unicode61", "-m", "P@5",
                            "-m", "nDCG@10", "-o", tmp_path / "out", "--quiet"])
    assert code == 0, err
    swept = json.loads((tmp_path / "out" / "sweep.json").read_text())
    rows = swept["configurations"]
    base = next(r for r in rows if r["base"])
    qrels = demo / "qrels.txt"

    def per_query(row, metric):
        result = rankscope.evaluate(str(qrels), row["run"], [metric], per_query=True)
        return [result.per_query[q][metric] for q in sorted(result.per_query)]

    for metric in ("P@5", "nDCG@10"):
        others = [r for r in rows if not r["base"]]
        raw = [scipy_stats.ttest_rel(per_query(r, metric), per_query(base, metric)).pvalue
               for r in others]
        raw = [1.0 if p != p else p for p in raw]  # identical values: p = 1, as documented
        # Holm by hand: the i-th smallest of m times (m - i), running maximum, at most 1
        order = sorted(range(len(raw)), key=lambda i: raw[i])
        holm, running = [0.0] * len(raw), 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (len(raw) - rank) * raw[i]))
            holm[i] = running
        for row, p, adjusted in zip(others, raw, holm, strict=True):
            said = row["against_base"][metric]
            assert said["p_value"] == pytest.approx(p, rel=1e-9, abs=1e-12)
            assert said["p_adjusted"] == pytest.approx(adjusted, rel=1e-9, abs=1e-12)
    assert swept["correction_said"] == (
        "paired t-test of each configuration against the base, p-values adjusted by Holm's "
        "method across the 5 comparisons of each metric")
    # the table says so too, and names the best by the first metric
    code, table, _ = run_cli(["sweep", demo / "endpoint.toml", demo / "queries.tsv",
                              "--qrels", demo / "qrels.txt", "--grid", "weights.title=1,2,4",
                              "--grid", "tokenizer=unicode61,porter unicode61", "-m", "P@5",
                              "--quiet"])
    assert "adjusted by Holm's method across the 5 comparisons" in table
    best = max(rows, key=lambda r: r["means"]["P@5"])
    assert f"best on P@5: {best['label']}" in table or "the file as written" in table


def test_holes_that_could_turn_the_order_are_warned_about(demo, tmp_path):
    # judgments of the file's own top 10 only (its top 3 relevant): every other
    # configuration brings up documents nobody judged
    run = tmp_path / "base.txt"
    assert run_cli(["snapshot", demo / "endpoint.toml", demo / "queries.tsv", "-o", run,
                    "--quiet"])[0] == 0
    lines = [line.split() for line in run.read_text().splitlines()]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {int(int(rank) <= 3)}\n"
                             for q, _, d, rank, _, _ in lines))
    code, out, err = run_cli(["sweep", demo / "endpoint.toml", demo / "queries.tsv",
                              "--qrels", qrels, "--grid", "tokenizer=unicode61,porter unicode61",
                              "--grid", "weights.title=1,8", "-m", "P@5", "-o", tmp_path / "o",
                              "-f", "json", "--quiet"])
    assert code == 0, err
    swept = json.loads(out)
    rows = {r["label"]: r for r in swept["configurations"]}
    assert swept["best"] == next(r["label"] for r in rows.values() if r["base"])
    assert "holes could change the order" in err
    assert sum(r["holes"] > 0 for r in rows.values()) >= 2
    # were a configuration's holes relevant: the test's own qrels with them at grade 1
    holes = list(csv.DictReader((tmp_path / "o" / "holes.csv").open()))
    for row in rows.values():
        if row["base"]:
            assert row["holes"] == 0 and row["if_holes_relevant"]["P@5"] is None
            continue
        name = row["name"]
        mine = {(h["query_id"], h["doc_id"]) for h in holes if name in h["found_in"].split("; ")}
        assert len(mine) == row["holes"]
        if not mine:
            assert row["if_holes_relevant"]["P@5"] is None
            continue
        filled = tmp_path / f"filled-{row['label'][1:]}.txt"
        filled.write_text(qrels.read_text() + "".join(f"{q} 0 {d} 1\n" for q, d in mine))
        code, evaluated, _ = run_cli(["evaluate", filled, row["run"], "-m", "P@5", "-f", "json"])
        assert row["if_holes_relevant"]["P@5"] == json.loads(evaluated)["mean"]["P@5"]
        if row["if_holes_relevant"]["P@5"] > rows[swept["best"]]["means"]["P@5"]:
            assert row["label"] in err


def test_k1_and_b_are_swept_and_fts5s_own_values_give_the_files_results(demo, tmp_path):
    code, out, err = run_cli(["sweep", demo / "endpoint.toml", demo / "queries.tsv", "--qrels",
                              demo / "qrels.txt", "--grid", "k1=0.6,1.2", "--grid", "b=0.3,0.75",
                              "-m", "nDCG@10", "-f", "json", "-o", tmp_path / "o", "--quiet"])
    assert code == 0, err
    rows = json.loads(out)["configurations"]
    # the file sets neither: it is measured apart, as #0
    base = next(r for r in rows if r["base"])
    assert base["label"] == "#0" and base["values"] == {}
    same = next(r for r in rows if r["values"] == {"k1": 1.2, "b": 0.75})
    cut = [line.rsplit(" ", 1)[0] for line in Path(same["run"]).read_text().splitlines()]
    assert cut == [line.rsplit(" ", 1)[0] for line in
                   Path(base["run"]).read_text().splitlines()]
    other = next(r for r in rows if r["values"] == {"k1": 0.6, "b": 0.3})
    assert Path(other["run"]).read_text() != Path(base["run"]).read_text()
    # the endpoint file written for a configuration is one `rankscope snapshot` takes
    toml = Path(other["run"]).with_suffix(".toml")
    assert "k1 = 0.6" in toml.read_text() and "b = 0.3" in toml.read_text()
    rerun = tmp_path / "rerun.txt"
    assert run_cli(["snapshot", toml, demo / "queries.tsv", "-o", rerun, "--quiet"])[0] == 0
    assert rerun.read_text() == Path(other["run"]).read_text()


def test_the_endpoint_file_is_never_written_and_the_store_names_snapshots_by_values(demo,
                                                                                   tmp_path):
    endpoint = demo / "endpoint.toml"
    before = (endpoint.read_bytes(), endpoint.stat().st_mtime_ns)
    store = tmp_path / "s.sqlite"
    code, out, err = run_cli(["sweep", endpoint, demo / "queries.tsv", "--qrels",
                              demo / "qrels.txt", "--grid", "weights.title=1,3", "-m", "P@5",
                              "--store", store, "--quiet", "-f", "csv"])
    assert code == 0, err
    assert (endpoint.read_bytes(), endpoint.stat().st_mtime_ns) == before
    code, listed, _ = run_cli(["snapshots", "list", "--store", store, "-f", "json"])
    names = sorted(s["name"] for s in json.loads(listed))
    assert names == ["demo-baseline", "demo-baseline[weights.title=3]"]
    table = list(csv.DictReader(out.splitlines()))
    assert {r["weights.title"] for r in table} == {"1", "3"}
    assert all(r["snapshot"] for r in table)


@pytest.mark.parametrize("grid, said", [
    (["wieghts.title=1,2"], "did you mean 'weights'"),
    (['weights.title="4"'], "weights.title must be a number"),
    (["k1=0.5", "k1=1"], "given twice"),
    (["weights.title=1,1.0"], "listed twice"),
    (["weights.title=1,,2"], "empty value"),
    (["b=0.5,2"], "b must be a number from 0 to 1"),
    (["tokenizer.x=1"], "tokenizer is not a table"),
    (["weights.title=" + ",".join(str(i) for i in range(40)), "k1=" + ",".join(
        str(i) for i in range(30))], "more than 1,000"),
])
def test_a_bad_grid_is_refused_before_anything_is_sent(demo, tmp_path, grid, said):
    store = tmp_path / "s.sqlite"
    code, _, err = run_cli(["sweep", demo / "endpoint.toml", demo / "queries.tsv",
                            "--qrels", demo / "qrels.txt", *_each("--grid", grid),
                            "-m", "P@5", "--store", store])
    assert code == 2 and said in err, err
    assert "Traceback" not in err and not store.exists()


def test_other_bad_inputs_exit_2(demo, tmp_path):
    base = ["sweep", demo / "endpoint.toml", demo / "queries.tsv", "--qrels",
            demo / "qrels.txt", "--grid", "weights.title=1,2"]
    code, _, err = run_cli([*base, "-m", "nDGC@10"])
    assert code == 2 and "nDGC@10" in err
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "sweep.csv").write_text("q1 0 d 1\n")
    code, _, err = run_cli(["sweep", demo / "endpoint.toml", demo / "queries.tsv", "--qrels",
                            tmp_path / "o" / "sweep.csv", "--grid", "weights.title=1,2",
                            "-m", "P@5", "-o", tmp_path / "o"])
    assert code == 2 and "would write over the input" in err
    assert (tmp_path / "o" / "sweep.csv").read_text() == "q1 0 d 1\n"
    code, _, err = run_cli([*base, "-m", "P@5", "-o", demo / "qrels.txt"])
    assert code == 2 and "not a directory" in err
    code, _, err = run_cli([*base, "-m", "P@5", "--depth", "0"])
    assert code == 2 and "--depth" in err
    store = tmp_path / "s.sqlite"
    code, _, err = run_cli([*base, "-m", "P@5", "--store", store, "-o",
                            demo / "qrels.txt" / "sub"])
    assert code == 4 and "Traceback" not in err and not store.exists()  # before any request


def test_the_help_has_an_example():
    import contextlib
    import io

    from rankscope.cli.main import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        main(["sweep", "--help"])
    assert "example" in buffer.getvalue()
    assert "rankscope sweep demo/endpoint.toml" in buffer.getvalue()


def test_a_configuration_whose_queries_fail_for_good_exits_3_and_keeps_what_was_measured(
        engine, tmp_path):
    from search.engine_server import Reply

    engine.route("POST", "/products/_search", Reply("es8_search.json"))
    engine.route("GET", "/", Reply("es8_root.json"))
    endpoint, queries, qrels = _es_files(tmp_path, engine.url)
    store = tmp_path / "s.sqlite"
    # the second index does not exist: the fake engine answers 404 to its every query
    code, out, err = run_cli(["sweep", endpoint, queries, "--qrels", qrels, "--grid",
                              "index=products,nowhere", "-m", "P@3", "--store", store,
                              "--quiet"])
    assert code == 3 and "sweep stopped" in err and "Traceback" not in err, err
    assert out == ""
    code, listed, _ = run_cli(["snapshots", "list", "--store", store, "-f", "json"])
    kept = {s["name"]: s["status"] for s in json.loads(listed)}
    assert kept["shop"] == "complete" and len(kept) == 2
    assert len(engine.seen("/products/_search")) == 3


def test_a_random_sample_of_a_large_grid(demo, tmp_path):
    titles = [str(t) for t in range(1, 41)]  # 40 x 30 = 1,200: too many to measure whole
    k1s = [f"{0.1 * i:.1f}" for i in range(1, 31)]
    base = ["sweep", demo / "endpoint.toml", demo / "queries.tsv", "--qrels",
            demo / "qrels.txt", "--grid", "weights.title=" + ",".join(titles), "--grid",
            "k1=" + ",".join(k1s), "-m", "P@5", "-f", "json", "--quiet"]
    code, _, err = run_cli(base)
    assert code == 2 and "--sample" in err
    code, out, err = run_cli([*base, "--sample", "3", "--seed", "7"])
    assert code == 0, err
    swept = json.loads(out)
    assert swept["sample"] == {"of": 1200, "seed": 7}
    rows = swept["configurations"]
    # the file sets no k1: its base is measured apart (#0), besides the 3 drawn
    assert len(rows) == 4 and [r["label"] for r in rows if r["base"]] == ["#0"]
    for row in rows:
        if row["base"]:
            continue
        # a drawn configuration is numbered by its place in the whole grid (k1 fastest)
        index = int(row["label"][1:]) - 1
        assert row["values"] == {"weights.title": int(titles[index // 30]),
                                 "k1": float(k1s[index % 30])}
    again = json.loads(run_cli([*base, "--sample", "3", "--seed", "7"])[1])
    assert sorted(r["label"] for r in again["configurations"]) == sorted(
        r["label"] for r in rows)
    code, _, err = run_cli([*base, "--sample", "0"])
    assert code == 2 and "--sample" in err
    # the file as written is in this grid (title 1.0 is point #1): measured, drawn or not
    code, out, err = run_cli(["sweep", demo / "endpoint.toml", demo / "queries.tsv",
                              "--qrels", demo / "qrels.txt", "--grid",
                              "weights.title=" + ",".join(titles), "-m", "P@5", "-f", "json",
                              "--quiet", "--sample", "2", "--seed", "3"])
    assert code == 0, err
    rows = json.loads(out)["configurations"]
    assert [(r["label"], r["values"]) for r in rows if r["base"]] == [
        ("#1", {"weights.title": 1})]
    labels = [r["label"] for r in rows]
    assert len(set(labels)) == len(labels) and len(labels) in (2, 3)  # 2 drawn (+ the base)
