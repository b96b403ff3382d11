"""atomic_write: whole-file replacement, fsynced, with the permissions each caller needs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from picobot_tui.core import atomic_write as aw
from picobot_tui.core.atomic_write import atomic_write


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_new_file_gets_the_umask_default_or_the_given_mode(tmp_path: Path) -> None:
    atomic_write(tmp_path / "plain", b"x")
    assert (tmp_path / "plain").read_bytes() == b"x"
    assert _mode(tmp_path / "plain") == 0o666 & ~aw._UMASK
    atomic_write(tmp_path / "private", b"y", 0o600)
    assert _mode(tmp_path / "private") == 0o600


def test_existing_file_keeps_its_mode_unless_told_not_to(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"old")
    f.chmod(0o640)
    atomic_write(f, b"new", 0o600)
    assert f.read_bytes() == b"new" and _mode(f) == 0o640
    atomic_write(f, b"newer", 0o600, keep_mode=False)
    assert f.read_bytes() == b"newer" and _mode(f) == 0o600


def test_fsyncs_the_file_and_the_directory(tmp_path: Path, monkeypatch) -> None:
    synced: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    atomic_write(tmp_path / "f", b"data")
    assert synced == ["file", "dir"]


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch) -> None:
    d = tmp_path / "d"
    d.mkdir()
    f = d / "f"
    f.write_bytes(b"old")

    def boom(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        atomic_write(f, b"new")
    assert f.read_bytes() == b"old"
    assert [p.name for p in d.iterdir()] == ["f"]
