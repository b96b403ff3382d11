"""MCP over stdio, end to end: the installed console script, the local scripted model, and
real MCP servers (mcp-server-time from PyPI, tests/support/mcp_test_server.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.headless.conftest import cli_env, picobot_exe, read_messages, run_cli, session_files
from tests.mcp.conftest import JsonAgent, test_server_entry, wait_for, write_mcp_config
from tests.support.mcp_test_server import STDERR_LINE
from tests.support.openai_server import (
    OpenAITestServer,
    ToolCall,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)
from tests.support.sent import as_stored

pytestmark = pytest.mark.e2e


def _tool_messages(home: Path) -> dict[str, dict[str, object]]:
    [path] = session_files(home)
    return {m["tool_call_id"]: m for m in read_messages(path) if m["role"] == "tool"}


def test_calls_results_and_failures_through_the_console_script(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    """One `-m --yes` run: mcp-server-time, then the test server's isError, a call that
    never answers (toolTimeout), a server killed mid-call, and the reconnect after it."""
    marker, slow_marker = tmp_path / "marker", tmp_path / "slow"
    write_mcp_config(
        configured_home,
        {
            "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
            "t": test_server_entry(marker),
            # Its own server, so the short toolTimeout applies to the call that never ends.
            "slow": test_server_entry(slow_marker, toolTimeout=0.5),
        },
    )
    llm_server.script(
        [
            tool_call_reply("mcp_time_get_current_time", {"timezone": "UTC"}, id="time"),
            tool_call_reply("mcp_t_fail", {"reason": "no such city"}, id="fail"),
            tool_call_reply("mcp_slow_sleep", {"seconds": 3600}, id="sleep"),
            # Two calls in one reply: the second runs at once, while the dropped
            # connection is still being closed, and must wait for the reconnect.
            tool_calls_reply(
                [
                    ToolCall("mcp_t_crash", {}, "crash"),
                    ToolCall("mcp_t_echo", {"text": "back again"}, "echo"),
                ]
            ),
            text_reply("All done."),
        ]
    )
    res = run_cli(configured_home, "agent", "-m", "go", "--yes")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "All done.\n"
    assert "Traceback" not in res.stderr
    tools = _tool_messages(configured_home)

    time = tools["time"]
    assert time["status"] == "ok" and time["name"] == "mcp_time_get_current_time"
    assert json.loads(str(time["content"]))["timezone"] == "UTC"

    assert tools["fail"]["status"] == "error"
    assert tools["fail"]["content"] == "Error: no such city"

    # Never answers: the call fails as timed out, and the server was told to stop.
    assert tools["sleep"]["status"] == "error"
    assert "did not answer within 0.5 s (toolTimeout)" in str(tools["sleep"]["content"])
    assert (slow_marker / "call-sleep").exists() and (slow_marker / "cancelled").exists()

    # Killed mid-call: a clear error, then the next call reconnects (a new process), even
    # right after it.
    assert tools["crash"]["status"] == "error"
    assert "closed the connection during `crash`" in str(tools["crash"]["content"])
    assert tools["echo"] == {**tools["echo"], "status": "ok", "content": "back again"}
    # The model read the same results (the SDK's {"result": ...} is not shown twice).
    sent = {m.get("tool_call_id"): m for m in as_stored(llm_server.last_body["messages"])}
    assert sent["echo"]["content"] == "back again"
    assert sent["fail"]["content"] == "Error: no such city"
    # The terminal lines name the status of each call.
    assert "✗ mcp_t_fail error" in res.stderr and "✓ mcp_t_echo ok" in res.stderr
    # A server's stderr goes to the log (both processes: the first and the reconnected one).
    assert STDERR_LINE not in res.stderr and STDERR_LINE not in res.stdout
    log = (configured_home / "data" / "logs" / "picobot.log").read_text()
    assert log.count(f"[t stderr] {STDERR_LINE}") == 2


def test_approval_allow_and_deny_over_json(
    configured_home: Path,
    llm_server: OpenAITestServer,
    tmp_path: Path,
    json_agent: Callable[..., JsonAgent],
) -> None:
    """trust "ask" (the default): each call is an approval; an allowed call runs, a denied
    one never reaches the server and the model reads the reason."""
    marker = tmp_path / "marker"
    write_mcp_config(configured_home, {"t": test_server_entry(marker)})
    llm_server.script(
        [
            tool_call_reply("mcp_t_echo", {"text": "allowed"}, id="yes"),
            tool_call_reply("mcp_t_sleep", {"seconds": 0}, id="no"),
            text_reply("ok"),
        ]
    )
    agent = json_agent()
    agent.send(type="message", content="go")
    asked = agent.until("approval_requested")
    assert asked["id"] == "yes" and asked["name"] == "mcp_t_echo"
    assert asked["preview"].startswith("MCP server: t\ntool: echo\narguments:\n")
    assert '"text": "allowed"' in asked["preview"]
    agent.send(type="approval", id="yes", decision="allow")
    asked = agent.until("approval_requested")
    assert asked["id"] == "no" and asked["name"] == "mcp_t_sleep"
    agent.send(type="approval", id="no", decision="deny", reason="not now")
    assert agent.until("turn_finished")["outcome"] == "final"
    code, err = agent.close()
    assert code == 0, err
    finished = {e["id"]: e for e in agent.of("tool_call_finished")}
    assert finished["yes"]["status"] == "ok" and finished["yes"]["result"] == "allowed"
    assert finished["no"]["status"] == "denied" and "not now" in finished["no"]["result"]
    started = {e["id"]: e for e in agent.of("tool_call_started")}
    assert started["yes"]["server"] == "t"
    assert (marker / "call-echo").read_text() == "allowed"
    assert not (marker / "call-sleep").exists()  # the denied call never reached the server


def test_sigint_cancels_an_in_flight_call(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    """SIGINT (the headless Esc) during a slow call: the turn is cancelled, the session
    records the call as cancelled, and the server received notifications/cancelled."""
    marker = tmp_path / "marker"
    write_mcp_config(configured_home, {"t": test_server_entry(marker, trust="auto")})
    llm_server.script([tool_call_reply("mcp_t_sleep", {"seconds": 3600}, id="slow")])
    proc = subprocess.Popen(
        [*picobot_exe(), "agent", "-m", "wait"],
        cwd=configured_home / "workspace",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(configured_home),
    )
    try:
        wait_for(lambda: (marker / "call-sleep").exists(), "the server to receive the call")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert (marker / "cancelled").exists(), "the server never saw notifications/cancelled"
    [path] = session_files(configured_home)
    tool = [m for m in read_messages(path) if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["status"]) for m in tool] == [("slow", "cancelled")]
