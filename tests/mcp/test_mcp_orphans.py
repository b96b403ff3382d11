"""No MCP server process outlives picobot: SIGTERM closes them on the way out, and after a
SIGKILL of picobot (which nothing can clean up after) a stdio server sees EOF and exits."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.headless.conftest import cli_env, picobot_exe, read_messages, session_files
from tests.mcp.conftest import pids_with, test_server_entry, wait_for, write_mcp_config
from tests.support.openai_server import OpenAITestServer, tool_call_reply

pytestmark = pytest.mark.e2e


def _start_slow_call(
    home: Path, server: OpenAITestServer | None, marker: Path, tag: str
) -> subprocess.Popen[str]:
    """picobot in the middle of an MCP call that never ends on its own: `agent -m` with the
    scripted model, or (no model server) `mcp call`, which loads no model client."""
    write_mcp_config(home, {"t": test_server_entry(marker, tag, trust="auto")})
    if server is not None:
        server.script([tool_call_reply("mcp_t_sleep", {"seconds": 3600}, id="slow")])
        command = ["agent", "-m", "wait"]
    else:
        command = ["mcp", "call", "t", "sleep", "--args", '{"seconds": 3600}']
    proc = subprocess.Popen(
        [*picobot_exe(), *command],
        cwd=home / "workspace",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(home),
    )
    wait_for(lambda: (marker / "call-sleep").exists() or proc.poll() is not None, "the call")
    assert proc.poll() is None, proc.communicate()[1]
    assert pids_with(tag), "the server process is not found by its tag"
    return proc


def test_sigterm_leaves_no_server_process(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    tag = f"orphan-test-{uuid.uuid4().hex}"
    marker = tmp_path / "marker"
    proc = _start_slow_call(configured_home, llm_server, marker, tag)
    try:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    # picobot closed its servers before exiting: none is left (a short bound for /proc to
    # settle, e.g. a process being reaped).
    wait_for(lambda: not pids_with(tag), "no server process left", timeout=5)
    assert (marker / "cancelled").exists()  # the call was cancelled, not just cut off
    [path] = session_files(configured_home)
    tool = [m for m in read_messages(path) if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["status"]) for m in tool] == [("slow", "cancelled")]


def test_server_exits_on_eof_after_sigkill_of_picobot(
    configured_home: Path, tmp_path: Path
) -> None:
    """Nothing can close the server after SIGKILL (the issue's one exception): its stdin
    reaches EOF, and it exits by itself."""
    tag = f"orphan-test-{uuid.uuid4().hex}"
    proc = _start_slow_call(configured_home, None, tmp_path / "marker", tag)
    [server_pid] = pids_with(tag)
    proc.kill()
    proc.communicate(timeout=30)
    try:
        # Its stdin is now at EOF: a stdio server must exit, even mid-call.
        wait_for(lambda: not pids_with(tag), "the server to exit on EOF", timeout=10)
    finally:
        for pid in pids_with(tag):  # never leave one behind, whatever happened
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert server_pid not in pids_with(tag)
