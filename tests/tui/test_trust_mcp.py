"""MCP servers and the trust question (issue 21, point 3): answered "No", no server starts
(the status bar says `mcp off`, `/mcp` says why, no process, nothing of the folder runs);
answered "Yes", the servers start, but not in the folder: its own `mcp_server_time.py` is
still not imported by `python -m mcp_server_time`."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from picobot_tui.widgets.mcp_pane import McpPane

from picobot_tui.core.shapes.mcp_server import McpServerConfig
from tests.mcp.conftest import pids_with
from tests.tui.app_support import make_app, transcript_text, type_and_send, wait_for
from tests.tui.test_mcp_tui import TEST_SERVER, pane_text
from tests.tui.test_trust import implicit_settings, wait_trust
from tests.tui.test_trust_e2e import _wait_file as wait_file
from tests.tui.test_tui_e2e import Tmux, tmux  # noqa: F401  (the fixture)

TAG = "picobot-trust-mcp-probe-5521"


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project folder (the current directory) whose `mcp_server_time.py` writes a marker
    outside it when imported; (the folder, the marker)."""
    folder = tmp_path / "project"
    folder.mkdir()
    pwned = tmp_path / "pwned"
    (folder / "mcp_server_time.py").write_text(
        f"import pathlib\npathlib.Path({str(pwned)!r}).write_text('imported')\n"
        "raise SystemExit(1)\n"
    )
    monkeypatch.chdir(folder)
    return folder, pwned


def settings_with_servers(marker: Path):
    settings = implicit_settings()
    marker.mkdir()
    settings.tools.mcp_servers = {
        "time": McpServerConfig(command=sys.executable, args=["-m", "mcp_server_time"]),
        "probe": McpServerConfig(
            command=sys.executable,
            args=[str(TEST_SERVER), "--marker", str(marker), "--tag", TAG],
            trust="auto",
        ),
    }
    return settings


async def test_no_trust_starts_no_server_and_says_why(
    hostile: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, pwned = hostile
    marker = tmp_path / "marker"
    app = make_app(settings_with_servers(marker))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_trust(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.ready, "app ready")
        status = app.status
        await wait_for(pilot, lambda: status.mcp == "mcp off", "the status bar's `mcp off`")
        assert status.mcp_state == "off" and "✗" not in str(status.render())
        assert "no MCP server is started" in transcript_text(app)
        manager = app.runtime.mcp
        assert {s.state for s in manager.statuses()} == {"off"}
        assert all(s._task is None for s in manager.servers.values())  # never started
        await type_and_send(pilot, "/mcp")
        pane = await wait_for(pilot, lambda: isinstance(app.screen, McpPane) and app.screen)
        await wait_for(pilot, lambda: "0/2 connected" in pane_text(pane), "pane drawn")
        shown = pane_text(pane)
        assert "time  stdio  off" in shown and "probe  stdio  off" in shown
        assert f"not started: the workspace {folder.resolve()} is not trusted" in shown
        assert pids_with(TAG) == []
    assert not pwned.exists()
    assert not (marker / "started").exists()


async def test_trust_starts_the_servers_outside_the_folder(
    hostile: tuple[Path, Path], tmp_path: Path
) -> None:
    _, pwned = hostile
    app = make_app(settings_with_servers(tmp_path / "marker"))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_trust(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.ready, "app ready")
        manager = app.runtime.mcp
        await wait_for(
            pilot, lambda: all(s.settled for s in manager.servers.values()), "settled", 12000
        )
        assert app.status.mcp == "mcp 2/2", manager.statuses()
        assert "get_current_time" in manager.statuses()[0].tools
    assert not pwned.exists()


@pytest.mark.e2e
def test_no_trust_in_a_real_terminal_starts_no_server(
    tmux: Tmux,  # noqa: F811
    picobot_home: Path,
    hostile: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    """The real `picobot agent` in tmux, started in the hostile folder: "n" at the trust
    question; the status bar says `mcp off`, `/mcp` says why, and once picobot has exited
    (every server it started closed) neither the folder's module nor the probe ever ran."""
    folder, pwned = hostile
    marker = tmp_path / "marker"
    marker.mkdir()
    probe = [str(TEST_SERVER), "--marker", str(marker), "--tag", TAG]
    config = {
        "agents": {"defaults": {"model": "demo"}},
        "ui": {"bell": "never"},
        "tools": {
            "mcpServers": {
                "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
                "probe": {"command": sys.executable, "args": probe, "trust": "auto"},
            }
        },
    }
    (picobot_home / "config.json").write_text(json.dumps(config))
    exit_file = tmp_path / "exit"
    tmux.start_agent(picobot_home, [], then=f"echo $? > {shlex.quote(str(exit_file))}", cwd=folder)
    tmux.wait_for(lambda s: "Trust this folder?" in s, "the trust question")
    tmux.keys("n")
    screen = tmux.wait_for(
        lambda s: "is not trusted" in s and re.search(r"mcp (off|\d/\d)", s) is not None,
        "the read-only notice and the MCP cell",
    )
    assert "mcp off" in screen, screen
    tmux.keys("-l", "/mcp")
    tmux.keys("Enter")
    screen = tmux.wait_for(lambda s: "0/2 connected" in s, "the /mcp pane")
    assert "time  stdio  off" in screen and "probe  stdio  off" in screen, screen
    assert screen.count("not started: the workspace") == 2, screen
    tmux.keys("Escape")
    tmux.keys("C-q")
    wait_file(exit_file)
    assert exit_file.read_text().strip() == "0"
    assert not pwned.exists()
    assert not (marker / "started").exists()
