"""Helpers for the MCP tests: real MCP servers (tests/support/mcp_*_server.py, mcp-server-time,
the npm ones) configured in tools.mcpServers, driven through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import (  # noqa: F401 (fixtures used by the MCP tests)
    cli_env,
    configured_home,
    home_workspace,
    llm_server,
    picobot_exe,
    server,
)

REPO = Path(__file__).resolve().parents[2]
TEST_SERVER = REPO / "tests" / "support" / "mcp_test_server.py"


def write_mcp_config(home: Path, servers: dict[str, Any], **tools: Any) -> None:
    """Add `tools.mcpServers` (and other tools keys) to the home's config.json."""
    path = home / "config.json"
    config = json.loads(path.read_text())
    section = config.setdefault("tools", {})
    section["mcpServers"] = servers
    section.update(tools)
    path.write_text(json.dumps(config))


def test_server_entry(marker: Path, tag: str = "", **extra: Any) -> dict[str, Any]:
    """A tools.mcpServers entry running tests/support/mcp_test_server.py over stdio;
    it records what it received in `marker` (made here)."""
    marker.mkdir(parents=True, exist_ok=True)
    args = [str(TEST_SERVER), "--marker", str(marker)]
    if tag:
        args += ["--tag", tag]
    return {"command": sys.executable, "args": args, **extra}


test_server_entry.__test__ = False  # type: ignore[attr-defined]  # not a test


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """Poll `check` until it returns something truthy; fail naming `what` after `timeout`
    (a bound on a wait, not an asserted timing)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def pids_with(tag: str) -> list[int]:
    """Live processes whose argv contains `tag` (zombies are dead: not counted)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        state = stat.rsplit(")", 1)[-1].split()[0]
        if state != "Z" and any(tag.encode() == a for a in argv):
            found.append(int(entry.name))
    return found


class JsonAgent:
    """`picobot agent --json` as a child process: send requests, read events."""

    def __init__(self, home: Path, *args: str, **env: str) -> None:
        self.proc = subprocess.Popen(
            [*picobot_exe(), "agent", "--json", *args],
            cwd=home_workspace(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(home, **env),
        )
        self.events: list[dict[str, Any]] = []

    def send(self, **payload: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(payload) + "\n")
        self.proc.stdin.flush()

    def until(self, kind: str) -> dict[str, Any]:
        """Read events up to the first of `kind` (EOF first fails with stderr)."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            event = json.loads(line)
            self.events.append(event)
            if event["type"] == kind:
                return event
        err = self.proc.stderr.read() if self.proc.stderr else ""
        pytest.fail(f"no {kind} event before EOF; stderr:\n{err}")

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    def close(self) -> tuple[int, str]:
        """EOF on stdin, then the exit code and stderr."""
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.proc.stdin.close()
        self.events += [json.loads(line) for line in self.proc.stdout]
        err = self.proc.stderr.read()
        return self.proc.wait(timeout=60), err


@pytest.fixture
def json_agent(configured_home: Path) -> Iterator[Callable[..., JsonAgent]]:  # noqa: F811
    started: list[JsonAgent] = []

    def start(*args: str) -> JsonAgent:
        agent = JsonAgent(configured_home, *args)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        if agent.proc.poll() is None:
            agent.proc.kill()
            agent.proc.wait()
