"""One reader family, two dialects: both read random irregular files as before.

The references below are the line-by-line readers as they were before the
dialects became rules of one reader (trec_eval's ``_qrels_slow``,
``_results_slow``, z-score and preference readers, rankscope's
``_read_slow``), written out here as plain loops: the recorded previous
behaviour. Every file is read by the whole reader (fast paths and the line
reader behind them) and by the line reader alone, and must give the same
rows, run tag and error (message, line, value, exit status) as the
reference.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from rankscope.data import trec
from rankscope.data.cnum import atof, atol
from rankscope.data.trec_dialect import (
    Blob,
    _qrels_slow,
    _results_slow,
    parse_qrels,
    parse_results,
    parse_zscores,
)
from rankscope.data.trec_dialect_prefs import parse_rel_info
from rankscope.errors import ParseError, TrecEvalExit

TOKENS = [b"q1", b"q2", b"10", b"Q0", b"0", b"d1", b"d#2", b"#x", b"1", b"2", b"-1", b"1.9",
          b"abc", b"inf", b"-nan", b"0x1p3", b"1e400", b"+.5", b"5.", b"\xc3\xa9", b"\xe9",
          b"run", b"tag2"]
SEPS = [b" ", b" ", b" ", b" ", b"\t", b"  ", b"\r", b"\x0b", b"\x0c", b" \t"]


def random_file(rng: random.Random, n_fields: int) -> bytes:
    if rng.random() < 0.3:  # regular: what the fast paths accept
        lines = [b" ".join(rng.choice(TOKENS) for _ in range(n_fields))
                 for _ in range(rng.randint(1, 8))]
        return b"\n".join(lines) + b"\n"
    lines = []
    for _ in range(rng.randint(0, 8)):
        shape = rng.random()
        if shape < 0.08:
            lines.append(b"")
        elif shape < 0.16:
            lines.append(rng.choice([b"#", b"# c", b" # c", b"#a b c d e f"]))
        else:
            count = n_fields if rng.random() < 0.8 else rng.randint(1, n_fields + 2)
            fields = [rng.choice(TOKENS) for _ in range(count)]
            irregular = rng.random() < 0.4
            sep = (lambda: rng.choice(SEPS)) if irregular else (lambda: b" ")
            line = b"".join(f + (sep() if i < count - 1 else b"") for i, f in enumerate(fields))
            if irregular and rng.random() < 0.3:
                line = rng.choice([b" ", b"\t"]) + line
            if irregular and rng.random() < 0.3:
                line += rng.choice([b" ", b"\r", b"\t"])
            lines.append(line)
    data = b"\n".join(lines)
    return data + b"\n" if rng.random() < 0.8 else data


def _encoding(data: bytes) -> str:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8"


def _key(value: object) -> object:
    return repr(value) if isinstance(value, float) else value  # nan == nan, -0.0 != 0.0


def _split(data: bytes) -> list[bytes]:
    if not data.endswith(b"\n"):
        data += b"\n"
    return data.split(b"\n")[:-1]


def _quit(message: str) -> tuple[str, str, int]:
    return ("error", f"{message}\ntrec_eval: Quit in file 'f'\n", 2)


# -- the previous readers, recorded -----------------------------------------------------------

def old_qrels(data: bytes, enc: str) -> object:
    rows = []
    may_skip = True
    for line in _split(data):
        if may_skip and line.startswith(b"#"):
            may_skip = False
            continue
        may_skip = True
        fields = line.split()
        if len(fields) != 4:
            return _quit(f"trec_eval.get_qrels: Malformed line {len(rows) + 1}")
        rows.append((fields[0].decode(enc), fields[2].decode(enc),
                     atol(fields[3].decode("latin-1"))))
    return rows


def old_results(data: bytes, enc: str) -> object:
    rows = []
    run_id = b""
    for line in _split(data):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) < 6:
            return _quit(f"trec_eval.get_results: Malformed line {len(rows) + 1}")
        rows.append((fields[0].decode(enc), fields[2].decode(enc),
                     _key(atof(fields[4].decode("latin-1")))))
        run_id = fields[5]
    return rows, run_id.decode(enc)


def old_zscores(data: bytes, enc: str) -> object:
    rows = []
    for number, line in enumerate(_split(data), start=1):
        fields = line.split()
        if len(fields) != 4:
            return ("error", f"trec_eval.get_zscores: Malformed line {number}\n", 255)
        rows.append((fields[0].decode(enc), fields[1].decode(enc),
                     _key(atof(fields[2].decode("latin-1"))),
                     _key(atof(fields[3].decode("latin-1")))))
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


def old_rel_info(data: bytes, enc: str, n_fields: int, reader: str) -> object:
    rows = []
    may_skip = True
    for line in _split(data):
        if may_skip and line.startswith(b"#"):
            may_skip = False
            continue
        may_skip = True
        fields = line.split()
        if len(fields) != n_fields:
            return _quit(f"trec_eval.{reader}: Malformed line {len(rows) + 1}")
        rows.append(tuple(f.decode(enc) for f in fields))
    return rows


def old_core(data: bytes, kind: str) -> object:
    n_fields, at, layout = (4, 3, "query iteration document grade") if kind == "qrels" else (
        6, 4, "query Q0 document rank score tag")
    name = "grade" if kind == "qrels" else "score"
    rows, tags = [], []
    for number, line in enumerate(data.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        try:
            text = [f.decode("utf-8") for f in fields]
        except UnicodeDecodeError:
            return ("not valid UTF-8 text", number, line.decode("utf-8", errors="replace"))
        if len(fields) != n_fields:
            return (f"expected {n_fields} fields ({layout}), found {len(fields)}", number,
                    " ".join(text))
        try:
            value = float(text[at])
        except ValueError:
            return (f"{name} is not a number", number, text[at])
        if not math.isfinite(value):
            return (f"{name} is not a finite number", number, text[at])
        rows.append((text[0], text[2], value))
        if kind == "run" and text[5] not in tags:
            tags.append(text[5])
    return rows, tags


# -- the readers now ---------------------------------------------------------------------------

def _outcome(read, *args):  # type: ignore[no-untyped-def]
    try:
        return read(*args)
    except TrecEvalExit as stop:
        return ("error", stop.stderr, stop.status)


def _rows(frame, *names: str) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    return [tuple(_key(v) for v in row) for row in frame.select(*names).iter_rows()]


@pytest.mark.parametrize("seed", range(4))
def test_trec_eval_qrels_and_results_read_as_before(seed: int) -> None:
    rng = random.Random(seed)
    for case in range(400):
        qrels = random_file(rng, 4)
        enc = _encoding(qrels)
        expected = old_qrels(qrels, enc)
        for read, arg in ((lambda b, e: parse_qrels(b, "f", e).frame, Blob(qrels)),
                          (lambda b, e: _qrels_slow(b, "f", e), qrels)):
            got = _outcome(read, arg, enc)
            if not isinstance(got, tuple):
                got = _rows(got, "query_id", "doc_id", "rel")
            assert got == expected, (case, qrels)
        run = random_file(rng, 6)
        enc = _encoding(run)
        expected = old_results(run, enc)
        for read, arg in ((lambda b, e: parse_results(b, "f", e), Blob(run)),
                          (lambda b, e: _results_slow(b, "f", e), run)):
            got = _outcome(read, arg, enc)
            if not (isinstance(got, tuple) and got[0] == "error"):
                got = (_rows(got.frame, "query_id", "doc_id", "score"), got.run_id)
            assert got == expected, (case, run)


def test_trec_eval_zscores_and_preferences_read_as_before(tmp_path: Path) -> None:
    rng = random.Random(5)
    path = tmp_path / "f"
    for case in range(400):
        data = random_file(rng, 4)
        enc = _encoding(data)
        if data:  # an empty file cannot be read (another error, not the line reader's)
            path.write_bytes(data)
            got = _outcome(parse_zscores, str(path), enc)
            if not isinstance(got, tuple):
                got = [(*k, _key(m), _key(s))
                       for k, m, s in zip(got.keys, got.mean, got.stddev, strict=True)]
            assert got == old_zscores(data, enc), (case, data)
        for fmt, n_fields, reader in (("prefs", 5, "get_prefs"),
                                      ("qrels_prefs", 4, "get_qrels_prefs"),
                                      ("qrels_jg", 4, "get_qrels_jg")):
            data = random_file(rng, n_fields)
            enc = _encoding(data)
            expected = old_rel_info(data, enc, n_fields, reader)
            got = _outcome(parse_rel_info, fmt, Blob(data), "f", enc)
            if isinstance(expected, tuple):  # the error
                assert got == expected, (case, fmt, data)
            elif not isinstance(got, tuple):  # qrels_jg's duplicate check may fail later
                assert sorted(map(str, got.frame.rows())) == sorted(
                    map(str, _reshape(expected, fmt))), (case, fmt, data)


def _reshape(rows: list[tuple[str, ...]], fmt: str) -> list[tuple[object, ...]]:
    if fmt == "qrels_jg":
        return [(q, jg, d, atol(r)) for q, jg, d, r in rows]
    if fmt == "qrels_prefs":
        rows = [(q, jg, "0", d, lv) for q, jg, d, lv in rows]
    return [(q, jg, jsg, d, atof(lv)) for q, jg, jsg, d, lv in rows]


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_core_rules_read_and_fail_as_before(kind: str) -> None:
    rng = random.Random(13)
    n_fields = 4 if kind == "qrels" else 6
    for case in range(600):
        data = random_file(rng, n_fields)
        if rng.random() < 0.3:
            data = data.replace(b"\n", rng.choice([b"\r\n", b"\r"]))
        expected = old_core(data, kind)
        try:
            frame, tags = trec.parse_trec(data, "f", kind)  # type: ignore[arg-type]
            got: object = ([tuple(r) for r in frame.iter_rows()], tags)
        except ParseError as exc:
            assert exc.source == "f"
            got = (exc.message, exc.line, exc.value)
        assert got == expected, (case, data)
