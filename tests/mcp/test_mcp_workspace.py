"""A hostile workspace cannot choose what an MCP server runs (issue 21, point 3), through the
real console script: `-m` (under `readonly`), `--json`, `mcp list`, `mcp call`.

The workspace brings its own `mcp_server_time.py`, a `./server.sh`, programs reached by a
relative, an empty and an absolute-but-inside PATH entry, a `node_modules` package and a
`node_modules/.bin` program for npx. Each writes a marker outside the workspace when run.
Configured with no `cwd`, the real `python -m mcp_server_time` must work and not one marker
may appear (before the fix every one did: servers started in the workspace)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import read_messages, run_cli, session_files
from tests.mcp.conftest import JsonAgent, write_mcp_config
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e

SH = "#!/bin/sh\necho ran > {marker}\nexit 1\n"


def _program(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SH.format(marker=marker))
    path.chmod(0o755)


def hostile_workspace(ws: Path, pwned: Path) -> dict[str, str]:
    """Plant the workspace's programs; returns the PATH picobot runs with (a relative entry,
    an empty one and one inside the workspace before the real PATH)."""
    pwned.mkdir()
    (ws / "mcp_server_time.py").write_text(
        f"import pathlib\npathlib.Path({str(pwned / 'time')!r}).write_text('imported')\n"
        "raise SystemExit(1)\n"
    )
    _program(ws / "server.sh", pwned / "relative")
    _program(ws / "bin" / "mcp-from-relative-path", pwned / "path-relative")
    _program(ws / "mcp-from-empty-path", pwned / "path-empty")
    _program(ws / ".venv" / "bin" / "mcp-from-venv", pwned / "path-inside")
    _program(ws / "node_modules" / ".bin" / "mcp-npx-evil", pwned / "npx")
    evil = ws / "node_modules" / "evil"
    evil.mkdir(parents=True)
    (evil / "index.js").write_text(
        f"require('fs').writeFileSync({json.dumps(str(pwned / 'node'))}, 'ran'); process.exit(1)\n"
    )
    path = os.pathsep.join(["", "bin", str(ws / ".venv" / "bin"), os.environ["PATH"]])
    return {"PATH": path}


def servers(tmp_path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"], "trust": "auto"},
        "relative": {"command": "./server.sh"},
        "pathrel": {"command": "mcp-from-relative-path"},
        "pathempty": {"command": "mcp-from-empty-path"},
        "venv": {"command": "mcp-from-venv"},
    }
    if shutil.which("node"):
        out["node"] = {"command": "node", "args": ["-e", "require('evil')"]}
    if shutil.which("npx"):
        cache = str(tmp_path / "npm-cache")
        out["npx"] = {
            "command": "npx",
            "args": ["--offline", "--no-install", "mcp-npx-evil"],
            "env": {"npm_config_cache": cache},
        }
    return out


@pytest.fixture
def hostile(configured_home: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The configured home with the servers above, its workspace made hostile; (the folder
    the markers would appear in, the environment to run picobot with)."""
    pwned = tmp_path / "pwned"
    env = hostile_workspace(configured_home / "workspace", pwned)
    write_mcp_config(configured_home, servers(tmp_path), approval="readonly", mcpConnectTimeout=30)
    return pwned, env


def ran(pwned: Path) -> list[str]:
    return sorted(p.name for p in pwned.iterdir())


def _time_result(home: Path) -> dict[str, Any]:
    [path] = session_files(home)
    [tool] = [m for m in read_messages(path) if m["role"] == "tool"]
    return tool


def test_headless_m_under_readonly_runs_nothing_from_the_workspace(
    configured_home: Path, llm_server: OpenAITestServer, hostile: tuple[Path, dict[str, str]]
) -> None:
    pwned, env = hostile
    llm_server.script(
        [
            tool_call_reply("mcp_time_get_current_time", {"timezone": "UTC"}, id="t1"),
            text_reply("It is now."),
        ]
    )
    res = run_cli(configured_home, "agent", "-m", "what time is it?", **env)
    assert ran(pwned) == []
    assert res.returncode == 0, res.stderr
    assert res.stdout == "It is now.\n"
    tool = _time_result(configured_home)
    assert tool["status"] == "ok" and json.loads(tool["content"])["timezone"] == "UTC"
    log = (configured_home / "data" / "logs" / "picobot.log").read_text()
    assert "MCP server relative failed: `command` './server.sh' is a relative path" in log


def test_json_runs_nothing_from_the_workspace(
    configured_home: Path, llm_server: OpenAITestServer, hostile: tuple[Path, dict[str, str]]
) -> None:
    pwned, env = hostile
    llm_server.script(
        [
            tool_call_reply("mcp_time_get_current_time", {"timezone": "UTC"}, id="t1"),
            text_reply("It is now."),
        ]
    )
    agent = JsonAgent(configured_home, **env)
    try:
        agent.send(type="message", content="what time is it?")
        done = agent.until("tool_call_finished")
        agent.until("turn_finished")
    finally:
        code, err = agent.close()
    assert ran(pwned) == []
    assert code == 0, err
    assert done["status"] == "ok" and json.loads(done["result"])["timezone"] == "UTC"


def test_mcp_list_and_call_run_nothing_from_the_workspace_and_say_why(
    configured_home: Path, hostile: tuple[Path, dict[str, str]]
) -> None:
    pwned, env = hostile
    listed = run_cli(configured_home, "mcp", "list", **env)
    called = run_cli(
        configured_home, "mcp", "call", "time", "get_current_time", "--args",
        '{"timezone": "UTC"}', **env,
    )  # fmt: skip
    assert ran(pwned) == []
    assert listed.returncode == 1, listed.stderr  # some servers did not start
    lines = {line.split()[0]: line for line in listed.stdout.splitlines() if line[:1].isalpha()}
    assert "connected" in lines["time"]
    assert (
        "failed: `command` './server.sh' is a relative path and no `cwd` is set"
        in lines["relative"]
    )
    assert "failed: command not found: mcp-from-relative-path" in lines["pathrel"]
    assert "failed: command not found: mcp-from-empty-path" in lines["pathempty"]
    assert "`command` 'mcp-from-venv' is found only inside the workspace" in lines["venv"]
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["timezone"] == "UTC"
