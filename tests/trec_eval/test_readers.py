"""trec_eval's input rules, checked on small files worked out by hand."""

from __future__ import annotations

import subprocess
import sys

from .util import ours


def _files(tmp_path, qrels: bytes, run: bytes) -> None:
    (tmp_path / "qrels").write_bytes(qrels)
    (tmp_path / "run").write_bytes(run)


def _summary(out: str) -> dict[str, str]:
    return {n.strip(): v for n, q, v in (line.split("\t") for line in out.splitlines())
            if q == "all"}


def test_relevance_is_read_with_atol(tmp_path):
    # "1.9" is level 1 and "2x" level 2: relevant at -l1, only the second at -l2
    _files(tmp_path, b"q 0 a 1.9\nq 0 b 2x\n", b"q Q0 a 1 2 r\nq Q0 b 2 1 r\n")
    assert _summary(ours(["-m", "num_rel", "qrels", "run"], cwd=tmp_path).stdout) == {
        "num_rel": "2"}
    assert _summary(ours(["-l2", "-m", "num_rel", "qrels", "run"], cwd=tmp_path).stdout) == {
        "num_rel": "1"}


def test_scores_are_read_with_atof_and_ties_go_to_the_larger_id(tmp_path):
    # "0.5abc" is 0.5, tying with b's 0.5: b ranks first (ids descending), so the
    # relevant a is at rank 2: P_1 = 0, recip_rank = 1/2
    _files(tmp_path, b"q 0 a 1\nq 0 b 0\n", b"q Q0 a 1 0.5abc r\nq Q0 b 2 0.5 r\n")
    out = _summary(ours(["-m", "P.1", "-m", "recip_rank", "qrels", "run"], cwd=tmp_path).stdout)
    assert out == {"P_1": "0.0000", "recip_rank": "0.5000"}


def test_run_comments_blank_lines_crlf_and_extra_fields(tmp_path):
    _files(tmp_path, b"q 0 a 1\r\n", b"\n  # note\nq Q0 a 1 3 first extra\r\n\nq Q0 b 2 1 last\n")
    got = ours(["-m", "runid", "-m", "num_ret", "qrels", "run"], cwd=tmp_path)
    # runid is the tag of the last data line; both data lines count
    assert got.stdout == "runid                 \tall\tlast\nnum_ret               \tall\t2\n"


def test_ids_are_bytes(tmp_path):
    # Latin-1 bytes that are not UTF-8 print back unchanged
    _files(tmp_path, b"q\xe9 0 a 1\n", b"q\xe9 Q0 a 1 1 r\xff\n")
    done = subprocess.run(
        [sys.executable, "-m", "rankscope", "trec_eval", "-q", "-m", "runid", "-m", "num_ret",
         "qrels", "run"], cwd=tmp_path, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (b"num_ret               \tq\xe9\t1\n"
                           b"runid                 \tall\tr\xff\n"
                           b"num_ret               \tall\t1\n")


# -- the fast columnar run reader against the line-by-line one ---------------------

_TOKENS = [b"q1", b"q2", b"q10", b"Q0", b"d1", b"d2", b"D3", b"1", b"2", b"0.5", b"-0.0",
           b"1e2", b"run", b"tag", b"#x", b"x#", b"3abc"]
_SEPARATORS = [b" "] * 12 + [b"  ", b"\t", b" \t"]


def _random_run(rng) -> bytes:
    lines = []
    for _ in range(rng.randint(0, 8)):
        kind = rng.random()
        if kind < 0.08:
            lines.append(b"")
        elif kind < 0.12:
            lines.append(b"# comment " + rng.choice(_TOKENS))
        else:
            n = rng.choice([6, 6, 6, 6, 6, 5, 7, 8])
            fields = [rng.choice(_TOKENS[:3]), b"Q0", rng.choice(_TOKENS[4:7]),
                      rng.choice(_TOKENS[7:9]), rng.choice([*_TOKENS[7:12], b"3abc"]),
                      rng.choice(_TOKENS[12:14])] + [rng.choice(_TOKENS) for _ in range(2)]
            line = fields[0]
            for field in fields[1:n]:
                line += rng.choice(_SEPARATORS) + field
            if rng.random() < 0.1:
                line = rng.choice([b" ", b"\t"]) + line
            if rng.random() < 0.1:
                line += rng.choice([b" ", b"\r", b"  "])
            lines.append(line)
    text = b"\n".join(lines)
    return text + b"\n" if rng.random() < 0.8 else text


def _outcome(parse, *args):
    from rankscope.trec_eval.exits import TrecEvalExit

    try:
        table = parse(*args)
    except TrecEvalExit as stop:
        return ("error", stop.stderr, stop.status)
    frame = table.frame.with_columns(table.frame.get_column("query_id").cast(str))
    return (frame.rows(), table.run_id)


def test_layout_scan_matches_a_byte_by_byte_count(monkeypatch):
    import random

    import rankscope.data.trec_dialect as readers
    import rankscope.data.trec_input as trec_input

    monkeypatch.setattr(trec_input, "_CHUNK", 5)  # many chunk boundaries
    rng = random.Random(7)
    for _ in range(3000):
        data = bytes(rng.choice(b"ab  \n\x01#\t\r\x0b\x0c") for _ in range(rng.randint(0, 30)))
        got = readers.Blob(data).layout()
        loose = any(data[i] == 32 and (i + 1 == len(data) or data[i + 1] <= 32)
                    for i in range(len(data)))
        assert got == readers.Layout(
            odd_whitespace=any(c in data for c in b"\t\r\x0b\x0c"),
            double_space=b"  " in data, loose_space=loose, spaces=data.count(b" ")), data


def test_fast_run_reader_equals_the_line_by_line_reader(monkeypatch):
    import random

    import polars as pl

    import rankscope.data.trec_dialect as readers
    import rankscope.data.trec_input as trec_input

    monkeypatch.setattr(trec_input, "_CHUNK", 7)
    rng = random.Random(11)
    paths = {"lean": 0}
    lean = readers._lean_table

    def counting(*args):
        table = lean(*args)
        paths["lean"] += table is not None
        return table

    monkeypatch.setattr(readers, "_lean_table", counting)
    for case in range(1500):
        data = _random_run(rng)
        queries = rng.choice([None, pl.Series(["q1", "q10", "q2"]), pl.Series(["q1"])])
        fast = _outcome(readers.parse_results, readers.Blob(data), "run", "utf-8", queries)
        slow = _outcome(readers._results_slow, data, "run", "utf-8")
        assert fast == slow, (case, data)
    assert paths["lean"] > 100  # the lean read is exercised, not only the fallbacks
