"""``rankscope trec_eval -h``: every requested measure's description, as trec_eval prints it.

The whole help text is compared with the binary's in ``test_binary_diff.py`` and with
its recorded answers in ``test_golden.py`` (``cases.HELP_COMBOS``).
"""

from __future__ import annotations

from rankscope.trec_eval.catalog import MEASURES, NICKNAMES
from rankscope.trec_eval.helptext import measure_docs

from .util import ours

MEASURE_DOCS = measure_docs()


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

