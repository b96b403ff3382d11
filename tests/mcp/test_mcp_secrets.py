"""MCP `env` and `headers` values are secrets: a real server that echoes them back (in a tool
result, and on its stderr, which goes to the log) never gets them into the session file, the
trace, the log, the model's requests or the terminal. Through the installed console script,
the scripted local model, and tests/mcp/echo_server.py over stdio and Streamable HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core.secrets import MASK, MIN_SECRET_CHARS
from tests.headless.conftest import SECRET, read_messages, run_cli, session_files
from tests.mcp.conftest import write_mcp_config as _write_mcp_config
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

ECHO_SERVER = Path(__file__).with_name("echo_server.py")
ENV_SECRET = "mcp-env-SECRET-5f1c0a7e9b"
HEADER_TOKEN = "hdr-TOKEN-8d2e4b6a1c3f"
API_KEY = "x-api-KEY-0b9a8c7d6e5f"

assert min(len(s) for s in (ENV_SECRET, HEADER_TOKEN, API_KEY)) >= MIN_SECRET_CHARS


def write_mcp_config(home: Path, servers: dict[str, Any]) -> None:
    # A bound on the wait for a loaded machine (2 cores, other suites), not a timing.
    _write_mcp_config(home, servers, mcpConnectTimeout=120)


def everything_written(home: Path) -> dict[str, str]:
    """Every file picobot wrote under its home (sessions, traces, logs, ...)."""
    return {
        str(p.relative_to(home)): p.read_text(errors="replace")
        for p in home.rglob("*")
        if p.is_file() and p.name != "config.json"
    }


def assert_nowhere(secrets: tuple[str, ...], home: Path, llm: OpenAITestServer, *texts: str):
    written = everything_written(home)
    assert any(name.startswith("sessions/") for name in written), written.keys()
    assert any("trace" in name for name in written), written.keys()
    assert "data/logs/picobot.log" in written
    sent = [json.dumps(r.body) for r in llm.completions]
    assert sent
    for secret in secrets:
        for name, text in written.items():
            assert secret not in text, f"{secret} in {name}"
        for body in sent:
            assert secret not in body, "a secret reached the model"
        for text in texts:
            assert secret not in text


def tool_results(home: Path) -> list[str]:
    [path] = session_files(home)
    return [m["content"] for m in read_messages(path) if m.get("role") == "tool"]


def test_an_env_secret_echoed_by_a_stdio_server(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    entry = {
        "command": sys.executable,
        "args": [str(ECHO_SERVER)],
        "env": {"PICO_MCP_TOKEN": ENV_SECRET},
        "trust": "auto",
    }
    write_mcp_config(configured_home, {"sec": entry})
    llm_server.script(
        [
            tool_call_reply("mcp_sec_env", {"name": "PICO_MCP_TOKEN"}, id="t1"),
            text_reply("done"),
        ]
    )
    res = run_cli(configured_home, "agent", "-m", "show the token", "--logs")
    assert res.returncode == 0, res.stderr
    # The server did answer with the value: masked on its way everywhere.
    assert tool_results(configured_home) == [f"PICO_MCP_TOKEN={MASK}"]
    tool_message = llm_server.completions[1].body["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == f"PICO_MCP_TOKEN={MASK}"
    log = (configured_home / "data" / "logs" / "picobot.log").read_text()
    assert f"[sec stderr] echo server: PICO_MCP_TOKEN is {MASK}" in log
    assert f"echo server: PICO_MCP_TOKEN is {MASK}" in res.stderr  # --logs
    assert_nowhere((ENV_SECRET, SECRET), configured_home, llm_server, res.stdout, res.stderr)


@pytest.fixture
def http_echo() -> Iterator[str]:
    """tests/mcp/echo_server.py over Streamable HTTP; its endpoint."""
    proc = subprocess.Popen(
        [sys.executable, str(ECHO_SERVER), "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # written once the socket listens
        assert url.startswith("http://127.0.0.1:"), f"the server did not start: {url!r}"
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_header_secrets_echoed_by_an_http_server(
    configured_home: Path, llm_server: OpenAITestServer, http_echo: str
) -> None:
    headers = {"Authorization": f"Bearer {HEADER_TOKEN}", "X-Api-Key": API_KEY}
    write_mcp_config(configured_home, {"web": {"url": http_echo, "headers": headers}})
    llm_server.script(
        [
            tool_call_reply("mcp_web_header", {"name": "authorization"}, id="a"),
            tool_call_reply("mcp_web_header", {"name": "x-api-key"}, id="b"),
            text_reply("done"),
        ]
    )
    res = run_cli(configured_home, "agent", "-m", "show the headers", "--yes", "--logs")
    assert res.returncode == 0, res.stderr
    assert tool_results(configured_home) == [f"authorization: {MASK}", f"x-api-key: {MASK}"]
    secrets = (HEADER_TOKEN, API_KEY, SECRET)
    assert_nowhere(secrets, configured_home, llm_server, res.stdout, res.stderr)


def test_mcp_call_and_list_print_no_secret(picobot_home: Path, http_echo: str) -> None:
    (picobot_home / "config.json").write_text("{}")
    stdio = {
        "command": sys.executable,
        "args": [str(ECHO_SERVER)],
        "env": {"PICO_MCP_TOKEN": ENV_SECRET},
    }
    # The secret is in the URL's query too: a failing server's error names its URL.
    bad_url = f"http://127.0.0.1:9/mcp?key={API_KEY}"
    write_mcp_config(
        picobot_home,
        {
            "sec": stdio,
            "web": {"url": http_echo, "headers": {"Authorization": f"Bearer {HEADER_TOKEN}"}},
            "down": {"url": bad_url, "headers": {"X-Key": API_KEY}},
        },
    )
    res = run_cli(picobot_home, "mcp", "call", "sec", "env", "--args", '{"name": "PICO_MCP_TOKEN"}')
    assert (res.returncode, res.stdout) == (0, f"PICO_MCP_TOKEN={MASK}\n"), res.stderr
    outputs = [res.stdout, res.stderr]
    res = run_cli(
        picobot_home, "mcp", "call", "web", "header", "--args", '{"name": "authorization"}'
    )
    assert (res.returncode, res.stdout) == (0, f"authorization: {MASK}\n"), res.stderr
    outputs += [res.stdout, res.stderr]
    res = run_cli(picobot_home, "mcp", "list", "--logs")
    assert res.returncode == 1  # `down` does not connect
    [down] = [line for line in res.stdout.splitlines() if line.startswith("down ")]
    assert "failed: " in down
    outputs += [res.stdout, res.stderr]
    log = (picobot_home / "data" / "logs" / "picobot.log").read_text()
    for secret in (ENV_SECRET, HEADER_TOKEN, API_KEY):
        assert secret not in log
        for text in outputs:
            assert secret not in text
