"""picobot.log's bound (issue 21, point 7): rotated at LOG_MAX_BYTES into LOG_BACKUPS files,
under 64 MiB in all, and correct while several processes write it at once."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from picobot_tui.run.log_file import (
    LOG_BACKUPS,
    LOG_MAX_BYTES,
    MAX_RECORD_CHARS,
    SharedRotatingFileHandler,
    log_bound,
    log_formatter,
)

MiB = 1 << 20
WRITERS = 3
LINES = 3000
MAX = 32 << 10
BACKUPS = 3

WRITER = textwrap.dedent(
    """
    import logging, sys, time
    from pathlib import Path
    from picobot_tui.run.log_file import SharedRotatingFileHandler, log_formatter

    path, me, lines, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    handler = SharedRotatingFileHandler(path, max_bytes={max}, backups={backups})
    handler.setFormatter(log_formatter())
    log = logging.getLogger("w")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    while not go.exists():  # all start together
        time.sleep(0.005)
    for i in range(lines):
        log.info("%s %05d %s", me, i, "." * 40)
    """
).format(max=MAX, backups=BACKUPS)
LINE = re.compile(r"^\S+ \S+ INFO w: (w\d) (\d{5}) \.{40}$")


def _record(text: str) -> logging.LogRecord:
    return logging.LogRecord("picobot", logging.INFO, __file__, 1, "%s", (text,), None)


def test_the_default_bound_is_under_64_mib() -> None:
    """5 files of 10 MiB, each at most one cut record over: ~50 MiB, under the issue's 64;
    and at least one older file, so the lines just before a rotation are still there."""
    assert LOG_BACKUPS >= 1
    assert log_bound() == (LOG_BACKUPS + 1) * (LOG_MAX_BYTES + 4 * MAX_RECORD_CHARS)
    assert log_bound() < 64 * MiB


def test_a_record_is_cut_at_its_limit(tmp_path: Path) -> None:
    """A 1 MiB message is written as MAX_RECORD_CHARS and a note of how much was cut."""
    path = tmp_path / "picobot.log"
    handler = SharedRotatingFileHandler(path)
    handler.setFormatter(log_formatter())
    handler.handle(_record("q" * MiB))
    handler.close()
    text = path.read_text()
    head, note = text.rsplit(" … (", 1)
    assert len(head) == MAX_RECORD_CHARS and head.endswith("q" * 1000)
    cut = int(note.split(" ")[0].replace(",", ""))
    assert cut == MiB - head.count("q")  # the rest of the message
    assert note.endswith("more characters not logged)\n")


def test_several_processes_share_one_rotating_log_and_lose_no_line(tmp_path: Path) -> None:
    """Three processes write 3,000 lines each at once into a log rotated every 32 KiB into
    3 older files. The files kept are the newest, in order: for each writer, a run of its
    lines with no gap that ends at its last line; no line torn; no file rotated early; every
    file 0600. (The stdlib's RotatingFileHandler fails this: each process checks the size
    of the file it has open, which another may have renamed away, and writes into it.)"""
    path = tmp_path / "logs" / "picobot.log"
    path.parent.mkdir()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"w{i}", str(LINES), str(go)])
        for i in range(WRITERS)
    ]
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=120) == 0

    ordered = [path.parent / f"picobot.log.{i}" for i in range(BACKUPS, 0, -1)] + [path]
    seen: dict[str, list[int]] = {f"w{i}": [] for i in range(WRITERS)}
    for file in ordered:
        for line in file.read_text().splitlines():
            match = LINE.match(line)
            assert match, f"torn or mixed line in {file.name}: {line!r}"
            seen[match[1]].append(int(match[2]))
    for writer, kept in seen.items():
        assert kept == list(range(LINES - len(kept), LINES)), f"{writer}: a gap or disorder"
    for rotated in ordered[:-1]:
        assert MAX - 200 <= rotated.stat().st_size <= MAX, rotated.name  # not rotated early
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == sorted(
        ["picobot.log", "picobot.log.lock"] + [f"picobot.log.{i}" for i in range(1, BACKUPS + 1)]
    )
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in path.parent.iterdir())


@pytest.mark.parametrize("gone", [True, False])
def test_a_handler_follows_a_rotation_made_by_another(tmp_path: Path, gone: bool) -> None:
    """The file it holds renamed (or deleted) by someone else: its next record goes to the
    current picobot.log, not into the old file."""
    path = tmp_path / "picobot.log"
    handler = SharedRotatingFileHandler(path)
    handler.setFormatter(log_formatter())
    handler.handle(_record("first"))
    if gone:
        path.unlink()
    else:
        path.rename(tmp_path / "picobot.log.1")
    handler.handle(_record("second"))
    handler.close()
    assert "second" in path.read_text() and "first" not in path.read_text()


def test_a_lock_held_elsewhere_does_not_stop_the_logging(tmp_path: Path) -> None:
    """Another process stopped (Ctrl+Z) while holding the lock: the record is still written,
    after LOCK_WAIT, without a rotation (even when one is due)."""
    import fcntl
    import os

    path = tmp_path / "picobot.log"
    handler = SharedRotatingFileHandler(path, max_bytes=10, backups=1)
    handler.setFormatter(log_formatter())
    holder = os.open(f"{path}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        handler.handle(_record("while locked, a record past max_bytes"))
        handler.handle(_record("and another"))
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
    handler.handle(_record("unlocked: rotates"))
    handler.close()
    assert "while locked" in (tmp_path / "picobot.log.1").read_text()
    assert "and another" in (tmp_path / "picobot.log.1").read_text()
    assert "unlocked: rotates" in path.read_text()
