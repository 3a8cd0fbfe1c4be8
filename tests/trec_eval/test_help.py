"""``rankscope trec_eval -h``: every requested measure's description, as trec_eval prints it."""

from __future__ import annotations

import pytest

from rankscope.trec_eval.catalog import MEASURES, NICKNAMES
from rankscope.trec_eval.helptext import measure_docs

from .util import ours, reference_binary, theirs

MEASURE_DOCS = measure_docs()

COMBOS = [
    ["-h"],
    ["-h", "-m", "all_trec"],
    ["-h", "-m", "official"],
    ["-h", "-m", "set"],
    ["-h", "-m", "all_prefs", "-R", "prefs"],
    ["-h", "-m", "prefs", "-R", "qrels_prefs"],
    ["-h", "-m", "qrels_jg", "-R", "qrels_jg"],
    ["-h", "-m", "all_trec", "-m", "all_prefs", "-m", "qrels_jg", "-m", "yaap", "-m", "dcg",
     "-m", "ideal_dcg"],
    ["-m", "P.5", "--help", "-T", "nope"],
    ["-h", "-R", "nope", "-m", "map"],
]


def test_every_measure_has_a_description():
    assert set(MEASURE_DOCS) == {m.name for m in MEASURES}


def test_help_lists_requested_measures_in_table_order():
    got = ours(["-h", "-m", "set", "-m", "map"])
    assert got.status == 0 and got.stderr == ""
    tail = got.stdout.split("Individual measure documentation for requested measures\n")[1]
    wanted = [m.name for m in MEASURES if m.name in {*NICKNAMES["set"], "map"}]
    positions = [tail.index(f"{name}\n{MEASURE_DOCS[name]}") for name in wanted]
    assert positions == sorted(positions)


def test_help_without_measures_says_so():
    got = ours(["-h"])
    assert got.stdout.startswith("trec_eval [-h] [-q] [-m measure[.params] [-c] [-n]")
    assert got.stdout.endswith("-- No measures indicated.\n"
                               "   Request measure documentation using <-m measure> on "
                               "command line\n")


@pytest.mark.skipif(reference_binary() is None, reason="no trec_eval binary (set TREC_EVAL_BIN)")
@pytest.mark.parametrize("args", COMBOS, ids=[" ".join(c) for c in COMBOS])
def test_help_is_trec_evals(args):
    binary = reference_binary()
    assert binary is not None
    want = theirs(binary, args)
    got = ours(args)
    assert (got.status, got.stdout, got.stderr) == (want.status, want.stdout, want.stderr)
