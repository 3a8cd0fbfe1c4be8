"""C number parsing (against the C library itself) and trec_eval's getopt rules."""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankscope.data.cnum import atof, atof_series, atol, atol_series
from rankscope.trec_eval.exits import TrecEvalExit
from rankscope.trec_eval.options import parse_args


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    lib = ctypes.CDLL(name)
    lib.atof.restype = ctypes.c_double
    lib.atof.argtypes = [ctypes.c_char_p]
    lib.atol.restype = ctypes.c_long
    lib.atol.argtypes = [ctypes.c_char_p]
    return lib


LIBC = _libc()
needs_libc = pytest.mark.skipif(LIBC is None, reason="no C library to compare with")

SAMPLES = ["1", "1.9", "+1", "-3", "abc", "", " 7", "1e3", "1e", "1.5abc", "1,5", ".5", "5.",
           "-.5e-2", "0x1p0", "0x1.8p1", "0x", "inf", "-INF", "infinity", "nan", "NaN(1)",
           "9223372036854775808", "-9223372036854775809", "1e400", "4.9e-324", "00012",
           "\t\n 42x", "+-1", "--1", "0x.8", "1e+5", "1E-5"]


def _same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@needs_libc
@pytest.mark.parametrize("text", SAMPLES)
def test_atof_and_atol_match_the_c_library(text):
    assert LIBC is not None
    raw = text.encode()
    assert _same_float(atof(text), LIBC.atof(raw))
    assert atol(text) == LIBC.atol(raw)


@needs_libc
@given(st.text(alphabet="0123456789+-.eExXpPabcfinINF ", max_size=12))
def test_atof_and_atol_match_the_c_library_on_any_text(text):
    assert LIBC is not None
    raw = text.encode()
    assert _same_float(atof(text), LIBC.atof(raw))
    assert atol(text) == LIBC.atol(raw)


def test_series_versions_agree_with_scalars():
    series = pl.Series(SAMPLES)
    assert [atol(s) for s in SAMPLES] == atol_series(series).tolist()
    floats = atof_series(series).tolist()
    assert all(_same_float(a, atof(s)) for a, s in zip(floats, SAMPLES, strict=True))


def test_attached_and_separate_values_and_permutation():
    opts = parse_args(["qrels", "-mndcg_cut.10,20", "-l2", "run", "-M100", "-q", "-c", "-J"])
    assert opts.files == ["qrels", "run"]
    assert opts.level == 2 and opts.max_ret == 100
    assert opts.query and opts.complete and opts.judged_only
    assert "ndcg_cut" in opts.marked and opts.measure_params["ndcg_cut"] == "10,20"


def test_grouped_flags_take_the_rest_as_value():
    opts = parse_args(["-qcmP.5", "a", "b"])
    assert opts.query and opts.complete and opts.measure_params == {"P": "5"}


def test_long_options_with_prefixes_and_equals():
    opts = parse_args(["--meas=map", "--level_for_rel", "3", "--Judged", "a", "b"])
    assert "map" in opts.marked and opts.level == 3 and opts.judged_only


def test_double_dash_ends_options_and_dash_is_a_file():
    opts = parse_args(["-q", "--", "-n", "-"])
    assert opts.files == ["-n", "-"] and opts.summary


def test_first_parameters_win_and_nicknames_mark_members():
    opts = parse_args(["-m", "P.5", "-m", "P.10", "-m", "official", "a", "b"])
    assert opts.measure_params["P"] == "5"
    assert {"runid", "num_q", "map", "iprec_at_recall", "P"} <= opts.marked


def test_atol_values_of_options():
    opts = parse_args(["-labc", "-N12.7", "-D", "3.q9", "a", "b"])
    assert (opts.level, opts.n_docs, opts.debug_level, opts.debug_query) == (0, 12, 3, "q9")


def test_version_wins_when_it_comes_first_only():
    with pytest.raises(TrecEvalExit) as first:
        parse_args(["-v", "-m", "foo"])
    assert first.value.status == 0
    with pytest.raises(TrecEvalExit) as second:
        parse_args(["-m", "foo", "-v"])
    assert second.value.status == 1
