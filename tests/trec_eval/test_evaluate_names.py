"""trec_eval's measures through ``rankscope.evaluate`` and ``rankscope evaluate``.

The expected numbers are trec_eval 10.0's own summary lines in the
conformance folder (``out.test.a`` is ``-m all_trec`` on qrels.test and
results.test).
"""

from __future__ import annotations

import pytest

import rankscope
from rankscope.cli.main import main
from rankscope.errors import MetricParameterError, RankscopeWarning
from rankscope.metrics import make_metric, parse_metric

from .util import CONFORMANCE


def _summary(name: str) -> dict[str, str]:
    lines = (CONFORMANCE / name).read_text().splitlines()
    return {n.strip(): v for n, q, v in (line.split("\t") for line in lines) if q == "all"}


NAMES = ["gm_map", "gm_bpref", "infAP", "binG", "11pt_avg", "iprec_at_recall_0.10",
         "iprec_at_recall_1.00", "Rprec_mult_0.20", "Rprec_mult_2.00", "utility", "relative_P_5",
         "relative_P_100", "unj_10", "set_relative_P", "set_map", "num_nonrel_judged_ret", "G",
         "ndcg_rel", "Rndcg", "rbp_resid"]


def test_trec_eval_names_give_trec_eval_numbers():
    expected = _summary("out.test.a")
    result = rankscope.evaluate(CONFORMANCE / "qrels.test", CONFORMANCE / "results.test", NAMES)
    for name in NAMES:
        value = result[name]
        shown = str(int(value)) if name.startswith("num_") else f"{value:6.4f}"
        assert shown == expected[name], name


def test_nicknames_and_rbp_under_its_own_name():
    expected = _summary("out.test.a")
    result = rankscope.evaluate(CONFORMANCE / "qrels.test", CONFORMANCE / "results.test",
                                ["all_trec"])
    compared = 0
    for label, value in result.means.items():
        if label in expected and value is not None:
            shown = str(int(value)) if label.startswith("num_") else f"{value:6.4f}"
            assert shown == expected[label], label
            compared += 1
    assert compared >= 90 and "rbp" in result.means


def test_level_and_missing_queries_follow_trec_eval_c(tmp_path):
    # results.trunc lacks queries of qrels.test: scored as trec_eval -c scores them.
    # (Its lines carry extra fields, which rankscope's general reader refuses.)
    trunc = tmp_path / "results.trunc"
    trunc.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in
                             (CONFORMANCE / "results.trunc").read_text().splitlines()))
    expected = _summary("out.test.aqc")
    with pytest.warns(RankscopeWarning, match=r"2 of the 2 queries of .*results.trunc are in "
                                              r".*qrels.test \(3 queries\); 1 only in"):
        result = rankscope.evaluate(CONFORMANCE / "qrels.test", trunc,
                                    ["11pt_avg", "iprec_at_recall_0.00", "infAP", "rbp_resid"])
    for name in ("11pt_avg", "iprec_at_recall_0.00", "infAP", "rbp_resid"):
        assert f"{result[name]:6.4f}" == expected[name], name


def test_spellings_parse_to_one_metric_each():
    assert parse_metric("iprec_at_recall(0.35)").get("p") == 0.35
    assert parse_metric("Rprec_mult(x=1.5)").get("x") == 1.5
    assert parse_metric("relative_P_20").k == 20
    assert parse_metric("unj_5").k == 5
    assert parse_metric("trec_rbp(p=0.8)").get("p") == 0.8
    assert len(rankscope.parse_metrics("iprec_at_recall")) == 11  # trec_eval's 11 points
    with pytest.raises(MetricParameterError):
        rankscope.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [make_metric("iprec_at_recall")])


def test_evaluate_command_accepts_trec_eval_names(capsys):
    code = main(["evaluate", str(CONFORMANCE / "qrels.test"), str(CONFORMANCE / "results.test"),
                 "-m", "iprec_at_recall_0.10", "-m", "gm_map", "-m", "11pt_avg", "-m", "P_5",
                 "-f", "tsv"])
    assert code == 0
    # columns: run, metric, value, n_queries
    rows = {line.split("\t")[1]: line.split("\t")[2]
            for line in capsys.readouterr().out.splitlines()[1:]}
    expected = _summary("out.test.a")
    for name in ("iprec_at_recall_0.10", "gm_map", "11pt_avg", "P_5"):
        assert f"{float(rows[name]):6.4f}" == expected[name], name
