"""trec_eval's reader lets go of a memory-mapped input's pages as it passes over them
(issue 30 section 5: read whole, the map counted 334 MB of resident memory at 10^7
lines beside the CSV reader's own map of the file). What it finds must not change:
each fact is checked against its definition on the bytes, with windows of a few
bytes so that every window edge and every release is crossed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.data import trec_input
from rankscope.data.trec_input import read_input

CONTENTS = [
    b"q1 Q0 d1 1 2.5 run\nq1 Q0 d2 2 1.5 run\n" * 40,
    b"q1 Q0 d1 1 2.5 run\n" * 30 + b"# a comment\n" + b"q2 Q0 d3 1 1 run \n" * 30,
    b"q1 Q0 d1 1 2.5 run\n" * 50 + b"q1\tQ0 d2  2 1 run\r\n" + b"q2 Q0 d\xc3\xa9 1 1 run ",
    b"q1 Q0 d1 1 2.5 run\n" * 64,
]


@pytest.mark.parametrize("content", CONTENTS)
@pytest.mark.parametrize(("chunk", "window"), [(4, 16), (8, 64), (1 << 20, 1 << 24)])
def test_a_mapped_file_reads_as_its_bytes(content: bytes, chunk: int, window: int,
                                          tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trec_input, "_CHUNK", chunk)
    monkeypatch.setattr(trec_input, "_WINDOW", window)
    path = tmp_path / "run"
    path.write_bytes(content)
    blob = read_input(str(path), "results")
    assert blob is not None and not isinstance(blob.data, bytes)  # the memory-mapped path
    for needle in (b"#", b"\t", b"\r", b"\v", b"\f", b"\n", b"x"):
        assert blob.contains(needle) == (needle in content)
    assert blob.is_ascii() == content.isascii()
    layout = blob.layout()
    # the definitions (trec_input.Layout), on the bytes themselves
    assert layout.spaces == content.count(b" ")
    assert layout.double_space == (b"  " in content)
    assert layout.loose_space == (content.endswith(b" ") or any(
        content[i] == 32 and content[i + 1] <= 32 for i in range(len(content) - 1)))
    assert layout.odd_whitespace == any(ch in content for ch in (b"\t", b"\r", b"\v", b"\f"))
    assert blob.as_bytes() == content  # pages let go are read again from the file
