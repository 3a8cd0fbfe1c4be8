"""Every output is written whole or not at all (rankscope.data._io.atomic_output)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rankscope.data._io import atomic_output, write_bytes
from rankscope.errors import OutputWriteError


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("before\n")
    with pytest.raises(RuntimeError), atomic_output(target) as handle:
        handle.write(b"half of the ")
        raise RuntimeError("the command failed half way")
    assert target.read_text() == "before\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_whole_write_replaces_the_file_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("before\n")
    target.chmod(0o640)
    write_bytes(target, b"after\n")
    assert target.read_text() == "after\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_new_file_gets_the_umask_not_mkstemp_private_mode(tmp_path: Path) -> None:
    write_bytes(tmp_path / "new.txt", b"x")
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~mask


def test_a_link_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_bytes(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_missing_directory_is_an_output_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(OutputWriteError, match=r"cannot write .*nodir/x\.txt: no such directory"):
        write_bytes(tmp_path / "nodir" / "x.txt", b"x")


def test_a_directory_in_the_way_is_an_output_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(OutputWriteError, match="is a directory"):
        write_bytes(tmp_path / "d", b"x")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_device_is_an_output_error_and_stays_a_device() -> None:
    # a character device is written directly (a rename would replace the device node)
    with pytest.raises(OutputWriteError, match="No space left on device"):
        write_bytes("/dev/full", b"x" * 100_000)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
