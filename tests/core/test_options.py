"""One options object for every driver (EvalOptions), checked against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

import rankscope
from rankscope.engine.options import EvalOptions
from rankscope.engine.streaming import evaluate_streaming
from rankscope.errors import OptionError
from rankscope.judgments.evaluation import evaluate_judgments

# The data has queries on one side only, on purpose: the overlap warning is expected.
pytestmark = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")

QRELS = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 1}, "q3": {"e": 3}}
RUN = {"q1": {"a": 0.5, "b": 0.9, "c": 0.5, "x": 0.1}, "q2": {"z": 1.0, "d": 0.2}}


def test_fields_are_checked():
    with pytest.raises(OptionError, match="ties must be one of"):
        EvalOptions(ties="random")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="unknown option"):
        EvalOptions.merged(None, {"tie": "trec"})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(OptionError, match="rel must be a number"):
        EvalOptions(rel="2")  # type: ignore[arg-type]


def test_keywords_go_on_top_of_the_object():
    base = EvalOptions(ties="input", queries="intersection")
    merged = EvalOptions.merged(base, {"queries": "nonnull"})
    assert (merged.ties, merged.queries) == ("input", "nonnull")
    assert EvalOptions.merged(base, {}) is base


def test_relevance_threshold_applies_to_every_metric_with_one():
    # trec ties (doc id descending): q1 ranks b(1) c(0) a(2) x; q2 z d(1); q3 is missing
    # (empty ranking). With rel=2 only a (q1) and e (q3) are relevant.
    result = rankscope.evaluate(QRELS, RUN, ["P@3", "RR", "num_ret"], rel=2)
    assert result.per_query["q1"]["P@3"] == pytest.approx(1 / 3)
    assert result.per_query["q2"]["P@3"] == 0.0
    assert result["RR"] == pytest.approx((1 / 3) / 3)
    assert result["num_ret"] == 6  # no threshold: unchanged (4 + 2 + 0)
    default = rankscope.evaluate(QRELS, RUN, ["P@3"])
    assert default.per_query["q1"]["P@3"] == pytest.approx(2 / 3)  # b and a at rel=1


def test_the_object_and_the_keywords_give_the_same_result():
    opts = EvalOptions(ties="input", queries="nonnull", unjudged="condensed")
    a = rankscope.evaluate(QRELS, RUN, ["P@2", "AP", "nDCG@3"], options=opts)
    b = rankscope.evaluate(QRELS, RUN, ["P@2", "AP", "nDCG@3"], ties="input",
                           queries="nonnull", unjudged="condensed")
    np.testing.assert_array_equal(a.values, b.values)
    assert a.info == b.info
    # input order keeps a above c (tied at 0.5); condensed drops x; nonnull: q3 has no value
    assert a.per_query["q3"]["AP"] is None
    assert a.per_query["q1"]["AP"] == pytest.approx((1 / 1 + 2 / 2) / 2)


def test_streaming_and_judgments_take_the_same_object(tmp_path):
    run_path = tmp_path / "run.txt"
    lines = [f"{q} Q0 {d} 0 {s} r" for q, docs in RUN.items()
             for d, s in sorted(docs.items(), key=lambda kv: -kv[1])]
    run_path.write_text("\n".join(lines) + "\n")
    opts = EvalOptions(queries="intersection", rel=2)
    local = rankscope.evaluate(QRELS, str(run_path), ["P@2", "AP"], options=opts)
    streamed = evaluate_streaming(QRELS, run_path, ["P@2", "AP"], options=opts)
    judged = evaluate_judgments(rankscope.Qrels.from_dict(QRELS), str(run_path), ["P@2", "AP"],
                                strategy="max", options=opts)
    assert local.query_ids == streamed.query_ids == judged.query_ids == ["q1", "q2"]
    np.testing.assert_array_equal(local.values, streamed.values)
    np.testing.assert_array_equal(local.values, judged.values)
    assert local.per_query["q1"]["AP"] == pytest.approx(1 / 3)  # a (grade 2) 3rd of b c a x
    assert local.info.missing_from_run == judged.info.missing_from_run == ["q3"]
