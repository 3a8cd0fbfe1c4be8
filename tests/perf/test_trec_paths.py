"""The TREC readers agree: regular, irregular and slow paths, bytes and file, any chunking.

The reference is written here, independently: split lines the way
``bytes.splitlines`` does, fields on ASCII whitespace, skip blank lines and
lines whose first field starts with ``#``, and ``float()`` the value.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankscope.data import trec, trec_chunks
from rankscope.data.tables import Run
from rankscope.errors import ParseError


def reference(data: bytes, kind: str) -> tuple[list[tuple[str, str, float]], list[str]] | int:
    """Rows and tags, or the 1-based line of the first bad line."""
    n_fields, value_at = (4, 3) if kind == "qrels" else (6, 4)
    rows: list[tuple[str, str, float]] = []
    tags: list[str] = []
    data = data.removeprefix(b"\xef\xbb\xbf")
    for number, line in enumerate(data.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != n_fields:
            return number
        try:
            value = float(fields[value_at])
            texts = [f.decode("utf-8") for f in fields]
        except (ValueError, UnicodeDecodeError):
            return number
        if not math.isfinite(value):
            return number
        rows.append((texts[0], texts[2], value))
        if kind == "run" and texts[5] not in tags:
            tags.append(texts[5])
    return rows, tags


def parsed(data: bytes, kind: str) -> tuple[list[tuple[str, str, float]], list[str]] | int:
    try:
        frame, tags = trec.parse_trec(data, "f", kind)  # type: ignore[arg-type]
    except ParseError as exc:
        assert exc.source == "f"
        assert exc.line is not None
        return exc.line
    return [tuple(r) for r in frame.iter_rows()], tags  # type: ignore[misc]


TOKENS = ["q1", "10", "9", "Q0", "d#1", "D-7", "é", "0", "1", "2", "-1", "2.5", "+1.5", ".5",
          "5.", "1e3", "1E-2", "00012", "-0", "nan", "inf", "1_0", "0x1", "1.5f", "x"]
SEPARATORS = [b" ", b" ", b" ", b"\t", b"  ", b" \t ", b"\x0b", b"\x0c"]
ENDINGS = [b"\n", b"\n", b"\n", b"\r\n", b"\r"]


@st.composite
def trec_files(draw: st.DrawFn, kind: str) -> bytes:
    n_fields = 4 if kind == "qrels" else 6
    value_at = 3 if kind == "qrels" else 4
    out = b""
    regular_sep = draw(st.sampled_from([b" ", b"\t"]))
    messy = draw(st.booleans())
    for _ in range(draw(st.integers(0, 12))):
        shape = draw(st.integers(0, 9))
        if shape == 0:
            line = b"# a comment  with\tspaces"
        elif shape == 1:
            line = draw(st.sampled_from([b"", b"   ", b"\t"]))
        else:
            count = n_fields if shape > 2 else draw(st.integers(1, n_fields + 1))
            fields = [draw(st.sampled_from(TOKENS)).encode() for _ in range(count)]
            if count == n_fields and draw(st.integers(0, 4)):
                fields[value_at] = draw(st.sampled_from([b"1", b"0", b"2.5", b"-3", b"7e-1"]))
            if messy:
                line = b"".join(
                    f + (draw(st.sampled_from(SEPARATORS)) if i < count - 1 else b"")
                    for i, f in enumerate(fields)
                )
                line = draw(st.sampled_from([b"", b" ", b"\t"])) + line
                line += draw(st.sampled_from([b"", b" ", b"\t "]))
            else:
                line = regular_sep.join(fields)
        out += line + (draw(st.sampled_from(ENDINGS)) if messy else b"\n")
    if draw(st.booleans()) and out.endswith(b"\n"):
        out = out[:-1]
    return out


@pytest.mark.parametrize("kind", ["qrels", "run"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bulk_and_slow_paths_agree(kind: str, data: st.DataObject) -> None:
    content = data.draw(trec_files(kind))
    assert parsed(content, kind) == reference(content, kind)


@pytest.mark.parametrize("kind", ["qrels", "run"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_each_bulk_reader_is_exact_when_it_accepts(kind: str, data: st.DataObject) -> None:
    content = data.draw(trec_files(kind))
    expected = reference(content, kind)
    for reader in (trec_chunks._read_regular, trec_chunks._read_irregular):
        got = reader(content, kind)  # type: ignore[arg-type]
        if got is None:
            continue  # refusing is always allowed; the next reader decides
        assert not isinstance(expected, int), f"{reader.__name__} accepted a bad file"
        rows = [tuple(r) for r in got[0].iter_rows()]
        assert (rows, got[1]) == expected


def _big(tmp_path: Path, irregular: bool) -> tuple[Path, bytes]:
    sep = "\t \t" if irregular else " "
    lines = []
    for i in range(3000):
        if i % 97 == 0:
            lines.append("# comment line\n")
        if i % 389 == 5:
            lines.append("\n")
        lines.append(f"q{i // 50}{sep}Q0{sep}d{i % 50}{sep}{i % 50 + 1}{sep}{(i * 7) % 13}.25"
                     f"{sep}run{i // 1000}\r\n" if i % 2 else
                     f"q{i // 50} Q0 d{i % 50} {i % 50 + 1} {(i * 7) % 13}.25 run{i // 1000}\n")
    content = "".join(lines).encode()
    path = tmp_path / "run.txt"
    path.write_bytes(content)
    return path, content


@pytest.mark.parametrize("irregular", [False, True])
@pytest.mark.parametrize("chunk", [97, 4096, 1 << 24])
def test_file_reader_matches_bytes_reader_at_any_chunk_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, irregular: bool, chunk: int
) -> None:
    path, content = _big(tmp_path, irregular)
    expected = reference(content, "run")
    monkeypatch.setattr(trec, "CHUNK_BYTES", chunk)
    found = trec.read_trec_file(path, "run")
    assert found is not None
    frame, tags, _, locate = found
    assert ([tuple(r) for r in frame.iter_rows()], tags) == expected
    assert parsed(content, "run") == expected
    # the locator maps data rows to the file's lines (comments and blanks skipped)
    lines = content.splitlines()
    for row in (0, 1, 1500, frame.height - 1):
        line = locate(row)
        assert line is not None
        fields = lines[line - 1].split()
        assert fields[0].decode() == frame.row(row)[0]
        assert fields[2].decode() == frame.row(row)[1]


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_values_of_many_chunks_are_one_column_even_past_the_first_chunks_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    # the first chunk's lines are long (few rows per byte), the rest short: the one
    # array of values sized from the first chunk is too small and must grow; every
    # value still matches the line-by-line reference, in one column chunk (the
    # ranking's to_numpy of it then copies nothing)
    pad = "x" * 300
    lines = []
    for i in range(4000):
        doc = f"d{i}{pad}" if i < 20 else f"d{i}"
        value = f"{(i * 37) % 101}.5"
        lines.append(f"q{i // 100} Q0 {doc} {i % 100 + 1} {value} t{i // 2000}\n"
                     if kind == "run" else f"q{i // 100} 0 {doc} {value}\n")
    content = "".join(lines).encode()
    path = tmp_path / "file.txt"
    path.write_bytes(content)
    expected = reference(content, kind)
    monkeypatch.setattr(trec, "CHUNK_BYTES", 2048)
    found = trec.read_trec_file(path, kind)  # type: ignore[arg-type]
    assert found is not None
    frame, tags = found[0], found[1]
    assert ([tuple(r) for r in frame.iter_rows()], tags) == expected
    assert frame.columns == ["query_id", "doc_id", "score" if kind == "run" else "grade"]
    assert frame.get_column(frame.columns[2]).n_chunks() == 1
    from_bytes, _ = trec.parse_trec(content, "f", kind)  # type: ignore[arg-type]
    assert from_bytes.get_column(frame.columns[2]).n_chunks() == 1
    assert parsed(content, kind) == expected


def test_a_qrels_file_read_in_chunks_holds_its_documents_in_one_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every run's matching gathers the judged documents at scattered lines: one chunk
    # made at reading, not a copy into one chunk at each matching (114 MB at 7 M lines)
    content = "".join(f"q{i // 40} 0 d{(i * 7) % 997} {i % 3}\n" for i in range(4000)).encode()
    path = tmp_path / "qrels.txt"
    path.write_bytes(content)
    monkeypatch.setattr(trec, "CHUNK_BYTES", 1024)
    found = trec.read_trec_file(path, "qrels")
    assert found is not None
    frame = found[0]
    assert frame.get_column("query_id").n_chunks() > 1  # it was read in pieces
    assert frame.get_column("doc_id").n_chunks() == 1
    assert [tuple(r) for r in frame.iter_rows()] == reference(content, "qrels")[0]


def test_error_line_is_exact_in_a_late_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, content = _big(tmp_path, False)
    lines = content.splitlines(keepends=True)
    lines[2500] = b"q1 Q0 dX 1 notanumber run\n"
    bad = b"".join(lines)
    path.write_bytes(bad)
    monkeypatch.setattr(trec, "CHUNK_BYTES", 1000)
    with pytest.raises(ParseError) as err:
        trec.read_trec_file(path, "run")
    assert err.value.line == 2501
    assert err.value.value == "notanumber"
    with pytest.raises(ParseError) as err2:
        trec.parse_trec(bad, "x", "run")
    assert err2.value.line == 2501


def test_duplicate_in_a_file_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("# header\nq1 Q0 a 1 3 t\n\nq1 Q0 b 2 2 t\nq2 Q0 a 1 1 t\nq1 Q0 a 3 1 t\n")
    found = trec.read_trec_file(path, "run")
    assert found is not None
    frame, _, source, locate = found
    with pytest.raises(Exception) as err:
        Run(frame, source=source, _locate=locate)
    assert getattr(err.value, "line", None) == 6
    assert "first at line 2" in str(err.value)


def test_gzip_and_stdin_are_left_to_the_bytes_reader(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(b"q Q0 d 1 1 t\n"))
    assert trec.read_trec_file(path, "run") is None
    assert trec.read_trec_file("-", "run") is None


def test_empty_and_comment_only_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for compact_from, held in ((trec.COMPACT_FROM, pl.String()), (0, pl.Categorical())):
        # a large run's query ids are held as codes (rankscope.data.trec._parse_all), even
        # when it has no line; a small one's as strings
        monkeypatch.setattr(trec, "COMPACT_FROM", compact_from)
        for content in (b"", b"# only\n", b"\n\n  \n"):
            frame, tags = trec.parse_trec(content, "f", "run")
            assert frame.height == 0 and tags == []
            assert frame.schema == pl.Schema(
                {"query_id": held, "doc_id": pl.String, "score": pl.Float64})


def test_a_run_below_compact_from_holds_strings_above_it_codes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same file either side of the threshold: the same rows, strings or codes held."""
    from rankscope.data.tables import Run

    path = tmp_path / "run.txt"
    path.write_text("q2 Q0 a 1 2.5 t\nq2 Q0 b 2 1.5 t\nq10 Q0 a 1 3.0 t\n")
    monkeypatch.setattr(trec, "COMPACT_FROM", path.stat().st_size + 1)
    small = Run.read(path)
    monkeypatch.setattr(trec, "COMPACT_FROM", path.stat().st_size)
    large = Run.read(path)
    assert small.held.schema["query_id"] == pl.String
    assert large.held.schema["query_id"] == pl.Categorical
    expected = [("q2", "a", 2.5), ("q2", "b", 1.5), ("q10", "a", 3.0)]
    assert small.frame.rows() == large.frame.rows() == expected


@pytest.mark.parametrize(("lines", "tags"), [
    ([b"q1 Q0 d1 1 2.0 a", b"q1 Q0 d2 2 1.0 a"], ["a"]),
    ([b"q1 Q0 d1 1 2.0 b", b"q1 Q0 d2 2 1.0 a", b"q2 Q0 d1 1 1.0 b"], ["b", "a"]),
    ([b"q1 Q0 d1 1 2.0 a", b"q1 Q0 d2 2 1.0 a", b"q2 Q0 d1 1 1.0 c"], ["a", "c"]),
])
def test_the_fast_reader_lists_each_tag_once_in_order_of_first_appearance(
        lines: list[bytes], tags: list[str]) -> None:
    frame, got = trec.parse_trec(b"\n".join(lines) + b"\n", "f", "run")
    assert got == tags and frame.height == len(lines)
