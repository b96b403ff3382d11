"""MCP in the TUI (issue 12): the status bar's cell, `/mcp` and its pane (live while open),
a turn calling a server's tool through the approval modal, Esc cancelling a slow call, the
servers ended on the way out, and a first frame that loads nothing of MCP.

Real servers only: `python -m mcp_server_time`, the SDK test server
(tests/support/mcp_test_server.py), a command that does not exist, and a server gated on a
file so a test can watch it connect. Every wait is on a condition."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from picobot_tui.widgets.approval import ApprovalScreen
from picobot_tui.widgets.blocks import Notice
from picobot_tui.widgets.mcp_pane import McpPane
from textual.widgets import Static

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.scripted import text, tool_call
from picobot_tui.core.mcp.manager import ServerStatus
from picobot_tui.core.shapes.mcp_server import McpServerConfig
from picobot_tui.tui.view_events import McpShown
from tests.tui.app_support import make_app, session_lines, type_and_send, wait_for, wait_idle
from tests.tui.settle import settle
from tests.tui.test_approval_snapshot import _fixed_session

TEST_SERVER = Path(__file__).parents[1] / "support" / "mcp_test_server.py"
MISSING = "/nonexistent/picobot-no-such-mcp-server"


def time_server() -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=["-m", "mcp_server_time"])


def gated_time_server(gate: Path) -> McpServerConfig:
    """The time server, started only once `gate` exists: it stays `connecting` until then."""
    code = (
        "import os, sys, time\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'mcp_server_time'])\n"
    )
    return McpServerConfig(command=sys.executable, args=["-c", code])


def test_server(marker: Path, trust: str = "ask") -> McpServerConfig:
    marker.mkdir(exist_ok=True)
    return McpServerConfig(
        command=sys.executable, args=[str(TEST_SERVER), "--marker", str(marker)], trust=trust
    )


test_server.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def pane_text(pane: McpPane) -> str:
    return "\n".join(str(w.content) for w in pane.query(Static))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- the pane, drawn from fixed statuses (a snapshot) ------------------------------------------

FIXED = [
    ServerStatus(
        "time", "stdio", "connected", None, ("get_current_time", "convert_time"), 412.0, "ask"
    ),
    ServerStatus("notes", "http", "connecting", None, (), None, "auto"),
    ServerStatus(
        "broken",
        "stdio",
        "failed",
        f"command not found: {MISSING}",
        (),
        None,
        "ask",
    ),
    ServerStatus(
        "search", "sse", "connected", None, ("query",), 1530.0, "auto", unknown_enabled=("fetch",)
    ),
]


async def _pane(pilot) -> None:
    await _fixed_session(pilot)
    await pilot.app.router.apply(McpShown("mcp 2/4", "failed"))
    await pilot.app.push_screen(McpPane(FIXED))
    await settle(pilot)


def test_mcp_pane_snapshot(snap_compare, settings):
    """Each server: transport, state (the time it took, or the error), trust, its tools;
    and the status bar's cell, red with a failed server."""
    assert snap_compare(make_app(settings), terminal_size=(120, 36), run_before=_pane)


# -- /mcp with real servers --------------------------------------------------------------------


async def test_slash_mcp_lists_real_servers_live_and_the_status_bar_follows(
    settings: Settings, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    settings.tools.mcp_servers = {
        "time": time_server(),
        "broken": McpServerConfig(command=MISSING),
        "later": gated_time_server(gate),
    }
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        status = app.status
        await wait_for(
            pilot,
            lambda: status.mcp == "mcp 1/3" and status.mcp_state == "failed",
            "time connected, broken failed, later connecting",
        )
        assert "mcp 1/3 ✗" in str(status.render())
        listeners = len(app.runtime.mcp.listeners)  # the status bar's
        await type_and_send(pilot, "/mcp")
        pane = await wait_for(pilot, lambda: isinstance(app.screen, McpPane) and app.screen)
        await wait_for(pilot, lambda: "1/3 connected" in pane_text(pane), "pane drawn")
        shown = pane_text(pane)
        assert "time  stdio  connected in " in shown
        assert "get_current_time" in shown and "convert_time" in shown
        assert "broken  stdio  failed" in shown and f"command not found: {MISSING}" in shown
        assert "later  stdio  connecting…" in shown
        gate.touch()  # `later` connects while the pane is open: the pane follows
        await wait_for(pilot, lambda: "2/3 connected" in pane_text(pane), "pane refreshed")
        assert "later  stdio  connected in " in pane_text(pane)
        assert status.mcp == "mcp 2/3" and status.mcp_state == "failed"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main_screen, "pane closed")
        assert len(app.runtime.mcp.listeners) == listeners, "the closed pane still listens"
    assert {s.state for s in app.runtime.mcp.statuses()} == {"closed"}


async def test_a_failed_servers_stderr_and_log_show_in_the_pane_and_the_notice(
    settings: Settings,
) -> None:
    """Issue 25, point 4: before, `/mcp` said `MCPError: Connection closed` and one line."""
    code = (
        "import sys\n"
        "for line in ('fetching mcp-server-time', 'retrying', 'invalid peer certificate'):\n"
        "    print(line, file=sys.stderr)\n"
        "sys.exit(2)\n"
    )
    settings.tools.mcp_servers = {"uvx": McpServerConfig(command=sys.executable, args=["-c", code])}
    app = make_app(settings, [text("ok")])
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.status.mcp_state == "failed", "the server failed")
        await type_and_send(pilot, "/mcp")
        pane = await wait_for(pilot, lambda: isinstance(app.screen, McpPane) and app.screen)
        await wait_for(pilot, lambda: "0/1 connected" in pane_text(pane), "pane drawn")
        shown = " ".join(pane_text(pane).split())
        assert "«fetching mcp-server-time» / «retrying» / «invalid peer certificate»" in shown
        assert str(settings.log_path) in shown and "MCPError" not in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main_screen, "pane closed")
        await type_and_send(pilot, "hi")
        await wait_idle(pilot)
        notices = [n.text for n in app.conversation.transcript.query(Notice)]
        assert any("«invalid peer certificate»" in n and "MCP server `uvx`" in n for n in notices)


async def test_no_server_configured_no_cell_and_the_pane_says_so(settings: Settings) -> None:
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        assert app.runtime.mcp is None and app.status.mcp == ""
        assert "mcp" not in str(app.status.render())
        await app.run_action("mcp")  # the palette's entry runs this action
        pane = await wait_for(pilot, lambda: isinstance(app.screen, McpPane) and app.screen)
        await wait_for(pilot, lambda: "No MCP servers configured" in pane_text(pane), "text")


# -- a turn calls a server's tool --------------------------------------------------------------


async def test_a_turn_calls_an_mcp_tool_through_the_approval_modal_and_always_saves_it(
    settings: Settings, picobot_home: Path
) -> None:
    """Sent at once (the servers still connecting): the turn waits for them, says that one
    failed, asks about the call (server, tool, arguments as JSON), and "always" saves the
    tool's name. The call shows as `time › get_current_time`."""
    config = picobot_home / "config.json"
    config.write_text(json.dumps({"tools": {"approval": "ask"}}))
    settings.tools.mcp_servers = {"time": time_server(), "broken": McpServerConfig(command=MISSING)}
    name = "mcp_time_get_current_time"
    steps = [tool_call(name, {"timezone": "UTC"}, call_id="m1"), text("It is noon.")]
    app = make_app(settings, steps)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        await type_and_send(pilot, "what time is it?")
        modal = await wait_for(
            pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen, "modal"
        )
        assert modal.tool_name == name
        assert modal.preview == (
            'MCP server: time\ntool: get_current_time\narguments:\n{\n  "timezone": "UTC"\n}'
        )
        await pilot.pause()
        body = modal.query_one("#approval-preview-body", Static)
        assert '"timezone": "UTC"' in str(body.content)
        await pilot.press("e")  # always, everywhere: config.json
        await wait_idle(pilot)
        block = app.conversation.tool_block("m1")
        assert block.status == "ok" and block.tool_name == "time › get_current_time"
        assert '"timezone": "UTC"' in block.result
        entry = app.timeline.entries["m1"]
        assert entry.name == "time › get_current_time" and entry.status == "ok"
        notices = [str(b.text) for b in app.conversation.blocks() if hasattr(b, "kind")]
        assert any("MCP server `broken` failed: command not found" in n for n in notices)
    saved = json.loads(config.read_text())
    assert saved["tools"] == {"approval": "ask", "alwaysAllow": [name]}
    assert name in settings.tools.always_allow
    result = next(m for m in session_lines(app) if m["role"] == "tool")
    assert result["tool_call_id"] == "m1" and result["status"] == "ok"


async def test_a_turn_goes_on_without_a_server_still_connecting_and_says_so(
    settings: Settings, tmp_path: Path
) -> None:
    """The first turn waits at most tools.mcpConnectTimeout for a server that cannot connect
    yet (gated), then answers without it; the notice names it, and it joins later."""
    gate = tmp_path / "gate"
    settings.tools.mcp_servers = {"later": gated_time_server(gate)}
    settings.tools.mcp_connect_timeout = 0.2
    app = make_app(settings, [text("Answered without it.")])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        # The servers start once the loaded frame is painted (tui/mcp_wiring.start_after_paint).
        await wait_for(pilot, lambda: app.status.mcp == "mcp 0/1", "the status cell")
        assert app.status.mcp_state == "connecting"
        await type_and_send(pilot, "hello")
        await wait_idle(pilot)
        notices = [str(b.text) for b in app.conversation.blocks() if hasattr(b, "kind")]
        assert any("going on without `later`" in n for n in notices), notices
        assert "Answered without it." in app.conversation.last_response()
        gate.touch()
        await wait_for(pilot, lambda: app.status.mcp == "mcp 1/1", "later joined", tries=4000)
        assert app.status.mcp_state == "connected"
        assert "mcp_later_get_current_time" in app.runtime.tools.names()


async def test_escape_during_a_slow_mcp_call_cancels_it_and_the_server_hears_it(
    settings: Settings, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    settings.tools.mcp_servers = {"slow": test_server(marker, trust="auto")}
    steps = [tool_call("mcp_slow_sleep", {"seconds": 3600}, call_id="s1"), text("never")]
    app = make_app(settings, steps)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        await type_and_send(pilot, "sleep")
        await wait_for(pilot, lambda: (marker / "call-sleep").exists(), "the call reached it")
        assert app.timeline.entries["s1"].name == "slow › sleep"
        assert app.conversation.tool_block("s1").status == "running"
        await pilot.press("escape")
        await wait_idle(pilot)
        assert app.conversation.tool_block("s1").status == "cancelled"
        assert app.timeline.entries["s1"].status == "cancelled"
        await wait_for(pilot, lambda: (marker / "cancelled").exists(), "notifications/cancelled")
        assert app.runtime.mcp.find("slow").state == "connected"  # the server stays up
    result = next(m for m in session_lines(app) if m["role"] == "tool")
    assert result["tool_call_id"] == "s1" and result["status"] == "cancelled"


# -- no orphans ---------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["quit", "ctrl+c twice", "crash"])
async def test_every_way_out_ends_the_server_processes(
    settings: Settings, tmp_path: Path, how: str
) -> None:
    marker = tmp_path / "marker"
    settings.tools.mcp_servers = {"probe": test_server(marker)}
    app = make_app(settings)
    with pytest.raises(RuntimeError) if how == "crash" else _nothing():
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_for(pilot, lambda: app.status.mcp == "mcp 1/1", "probe connected")
            pid = int((marker / "started").read_text())
            assert pid_alive(pid)
            if how == "quit":
                await type_and_send(pilot, "/quit")
            elif how == "ctrl+c twice":
                await pilot.press("ctrl+c", "ctrl+c")
            else:
                app.call_later(_raise)
            await wait_for(pilot, lambda: not app.is_running, "app exited", tries=4000)
    assert app.runtime.mcp.find("probe").state == "closed"
    assert not pid_alive(pid), "the server process outlived the app"


def _raise() -> None:
    raise RuntimeError("boom")


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.mark.e2e
def test_sigterm_ends_the_tui_and_its_server_process(tmp_path: Path) -> None:
    """`kill -TERM` of a running `picobot agent` (the TUI under a pty) once its server is
    connected: exit 143 and the server's process (its pid from the marker) is gone."""
    import fcntl
    import pty
    import select
    import signal
    import struct
    import termios
    import time

    from tests.headless.conftest import cli_env, picobot_exe

    home, marker = tmp_path / "home", tmp_path / "marker"
    workspace = home / "workspace"
    workspace.mkdir(parents=True)
    probe = test_server(marker)
    servers = {"probe": {"command": probe.command, "args": probe.args}}
    (home / "config.json").write_text(json.dumps({"tools": {"mcpServers": servers}}))
    argv = [*picobot_exe(), "agent", "--model", "demo", "--workspace", str(workspace)]
    env = cli_env(home, TERM="xterm-256color")
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    out = bytearray()

    def pump(until, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not until() and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    out.extend(os.read(fd, 65536))
                except OSError:
                    return

    try:
        pump(lambda: b"mcp 1/1" in out)  # the status bar: the probe is connected
        assert b"mcp 1/1" in out, "the server never connected"
        server_pid = int((marker / "started").read_text())
        assert pid_alive(server_pid)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while (status := os.waitpid(pid, os.WNOHANG))[0] == 0:
            assert time.monotonic() < deadline, "the app did not exit"
            pump(lambda: False, 0.1)
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status[1]) == 143
    assert b"Traceback" not in out
    assert not pid_alive(server_pid), "the server process outlived picobot"


# -- the first frame loads nothing of MCP ------------------------------------------------------


def test_the_first_frame_imports_neither_mcp_nor_the_mcp_core(
    tmp_path: Path, picobot_home: Path
) -> None:
    """With a server configured, the first frame comes before the `mcp` SDK and
    `picobot_tui.core.mcp` are imported; both load after it, and the server connects."""
    (picobot_home / "config.json").write_text(
        json.dumps({"tools": {"mcpServers": {"time": {"command": sys.executable,
                                                          "args": ["-m", "mcp_server_time"]}}}})
    )  # fmt: skip
    script = textwrap.dedent(
        f"""
        import asyncio, json, sys
        from pathlib import Path
        from picobot_tui.run.options import RunOptions
        from picobot_tui.tui.app import PicobotApp

        WATCH = ("mcp", "picobot_tui.core.mcp")
        app = PicobotApp(options=RunOptions(model="demo", workspace=Path({str(tmp_path)!r})))
        seen = {{}}
        original = app._display

        def display(screen, renderable):
            if renderable is not None and "first" not in seen:
                seen["first"] = [m for m in WATCH if m in sys.modules]
            original(screen, renderable)

        app._display = display

        async def main():
            async with app.run_test(size=(120, 36)) as pilot:
                for _ in range(4000):
                    if app.ready and app.status.mcp == "mcp 1/1":
                        break
                    await pilot.pause(0.005)
                seen["status"] = app.status.mcp
                seen["later"] = [m for m in WATCH if m in sys.modules]

        asyncio.run(main())
        print(json.dumps(seen))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"first": [], "status": "mcp 1/1", "later": ["mcp", "picobot_tui.core.mcp"]}
