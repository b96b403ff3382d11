"""A server's stderr in picobot's log (issue 21, point 7): a flood during a turn leaves the
log folder bounded and the server's last lines in it; a line with no end cannot grow in
memory; the last lines are shown with the error."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from picobot_tui.core import log_budget
from picobot_tui.core.mcp.stderr import LINE_CHARS, TAIL_LINES, StderrCopy
from picobot_tui.run.log_file import LOG_BACKUPS, LOG_MAX_BYTES, log_bound
from tests.headless.conftest import run_cli
from tests.mcp.conftest import test_server_entry, write_mcp_config
from tests.support.mcp_test_server import FLOOD_LAST_LINE, STDERR_LINE
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

MiB = 1 << 20
FLOOD_MB = 128
"""Twice the issue's bound: without a bound the log alone would pass 64 MiB."""


def _prefill(logs: Path) -> None:
    """A log folder already at its bound: picobot.log 1 KiB short of rotating, and every
    rotated file full, each of lines naming the file."""
    logs.mkdir(parents=True, mode=0o700)
    for name, size in [("picobot.log", LOG_MAX_BYTES - 1024)] + [
        (f"picobot.log.{i}", LOG_MAX_BYTES) for i in range(1, LOG_BACKUPS + 1)
    ]:
        line = f"PREFILL {name} old line\n".encode()
        path = logs / name
        path.write_bytes(line * (size // len(line)))
        path.chmod(0o600)


@pytest.mark.e2e
def test_a_server_flooding_stderr_during_a_turn_leaves_the_log_bounded(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    """`-m`: the model calls a tool that writes 128 MiB to stderr and kills its server. The
    log folder (full before the run) stays under 64 MiB; the flood's last line, the count of
    what was left out and a quiet server's line are in it; the oldest file rotated away."""
    write_mcp_config(
        configured_home,
        {
            "t": test_server_entry(tmp_path / "t"),
            "quiet": test_server_entry(tmp_path / "quiet", tag="quiet-one"),
        },
    )
    logs = configured_home / "data" / "logs"
    _prefill(logs)
    llm_server.script(
        [
            tool_call_reply("mcp_t_flood", {"megabytes": FLOOD_MB}, id="flood"),
            text_reply("The server died."),
        ]
    )
    res = run_cli(configured_home, "agent", "-m", "go", "--yes")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "The server died.\n"
    assert "x" * 100 not in res.stderr  # nothing of the flood reaches the terminal
    assert (tmp_path / "t" / "call-flood").read_text() == str(FLOOD_MB)

    files = {p.name: p for p in logs.iterdir()}
    assert set(files) <= {"picobot.log", "picobot.log.lock"} | {
        f"picobot.log.{i}" for i in range(1, LOG_BACKUPS + 1)
    }, sorted(files)
    total = sum(p.stat().st_size for p in files.values())
    assert total < 64 * MiB and total <= log_bound(), f"{total / MiB:.1f} MiB of logs"
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in files.values())
    text = "".join(p.read_text(errors="replace") for p in files.values())
    assert f"[t stderr] {FLOOD_LAST_LINE}" in text
    assert "lines (" in text and "not logged: the server writes more than the log takes" in text
    assert f"[quiet stderr] {STDERR_LINE} quiet-one" in text
    # Rotated: the oldest file's lines are gone, the current one's moved to .1.
    assert "PREFILL picobot.log.4 " not in text
    assert "PREFILL picobot.log old" in files["picobot.log.1"].read_text()


# -- the copier alone ------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _feed(copy: StderrCopy, data: bytes) -> None:
    """Write `data` as the server would (from another thread: the pipe is small), then
    close every write end and wait for the copier to finish."""
    fd = os.dup(copy.file.fileno())
    copy.close()
    writer = threading.Thread(target=lambda: (os.write(fd, data) if data else 0, os.close(fd)))
    writer.start()
    assert copy.wait_closed(60), "the copier did not reach the end of the stream"
    writer.join()


def _records(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "picobot.mcp"]


def test_a_line_with_no_end_is_cut_and_the_next_lines_still_come(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """8 MiB with no newline, then two lines: one record of LINE_CHARS for the long one."""
    caplog.set_level(logging.INFO, logger="picobot.mcp")
    copy = StderrCopy("s")
    _feed(copy, b"y" * (8 * MiB) + b"\nsecond\nthird")
    records = _records(caplog)
    assert records == [f"[s stderr] {'y' * LINE_CHARS}", "[s stderr] second", "[s stderr] third"]
    assert copy.tail() == ["y" * LINE_CHARS, "second", "third"]


def test_a_flood_past_the_budget_is_counted_and_its_last_lines_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """With the clock stopped, the burst is logged, the rest counted in one line, and the
    last TAIL_LINES lines (past the budget) logged at the end, in order."""
    caplog.set_level(logging.INFO, logger="picobot.mcp")
    copy = StderrCopy("f", clock=_Clock())
    line = "z" * 999
    count = 3 * log_budget.BURST_BYTES // 1000
    lines = [f"{i:06d} {line}" for i in range(count)]
    _feed(copy, ("\n".join(lines) + "\n").encode())
    records = _records(caplog)
    logged = [r for r in records if r.startswith("[f stderr] 0")]
    burst = len(logged) - TAIL_LINES
    assert 0 < burst * 1000 <= log_budget.BURST_BYTES
    assert logged[:burst] == [f"[f stderr] {x}" for x in lines[:burst]]
    assert logged[burst:] == [f"[f stderr] {x}" for x in lines[-TAIL_LINES:]]
    [count_line] = [r for r in records if "not logged" in r]
    assert f"… {count - burst - TAIL_LINES} lines (" in count_line
    assert records.index(count_line) == burst  # between the burst and the last lines


def test_the_budget_comes_back_with_time(caplog: pytest.LogCaptureFixture) -> None:
    """After the burst, a second of quiet lets RATE_BYTES through again."""
    caplog.set_level(logging.INFO, logger="picobot.mcp")
    clock = _Clock()
    copy = StderrCopy("r", clock=clock)
    big = "b" * 1900
    spent = 0
    while copy._budget.take(len(big) + 80):  # spend the burst directly
        spent += 1
    assert not copy._budget.take(10)  # spent: even a small line waits for a second's worth
    clock.now = 1.0
    assert copy._budget.take(10)
    _feed(copy, b"")
    assert spent * 1980 <= log_budget.BURST_BYTES


async def test_a_failed_servers_error_names_its_last_stderr_line(tmp_path: Path) -> None:
    """A server that dies at start-up after printing why: its state's error ends with it."""
    from picobot_tui.core.mcp.manager import McpManager
    from picobot_tui.core.shapes.mcp_server import McpServerConfig

    code = "import sys; print('starting', file=sys.stderr); sys.exit('ERROR: no licence key')"
    config = McpServerConfig(command=sys.executable, args=["-c", code])
    manager = McpManager(
        {"dies": config}, workspace=tmp_path, registry=None, connect_timeout=60, scrub=str.upper
    )
    try:
        assert await manager.wait_ready() == []
        [status] = manager.statuses()
    finally:
        await manager.close()
    assert status.state == "failed"
    assert status.error is not None
    assert "its stderr ended with: «STARTING» / «ERROR: NO LICENCE KEY»" in status.error
    assert "(it exited)" in status.error and "MCPError" not in status.error
    assert status.stderr_tail == ("STARTING", "ERROR: NO LICENCE KEY")


MEMORY = """
import os, threading
from picobot_tui.core.mcp.stderr import StderrCopy

copy = StderrCopy("m")
fd = os.dup(copy.file.fileno())
copy.close()

def write():
    chunk = b"y" * (1 << 20)
    for _ in range(256):
        os.write(fd, chunk)
    os.write(fd, b"\\nlast\\n")
    os.close(fd)

threading.Thread(target=write).start()
assert copy.wait_closed(120)
assert copy.tail()[-1] == "last"
# VmHWM is this process's own peak: getrusage's ru_maxrss starts at the RSS of the process
# that forked it (Linux carries it over exec), which a test reading big logs had grown.
[peak] = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(int(peak.split()[1]) // 1024)
"""


def test_a_256_mib_line_does_not_grow_in_memory() -> None:
    """The copier reads a 256 MiB line with no newline in bounded pieces: the process stays
    small (the line-iterating copier before it held the whole line, twice: 1 GiB of RSS for
    a 512 MiB line, measured)."""
    done = subprocess.run(
        [sys.executable, "-c", MEMORY], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 128, f"{done.stdout.strip()} MiB of RSS"
