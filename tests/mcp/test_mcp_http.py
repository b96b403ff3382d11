"""MCP over HTTP: McpManager against real SDK servers on 127.0.0.1 (tests/support/
mcp_http_server.py, each a process of its own): Streamable HTTP with a header the server
checks, and a server that speaks only SSE, reached through the fallback."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from picobot_tui.core.mcp.manager import McpManager
from picobot_tui.core.settings import ToolsConfig
from picobot_tui.core.shapes.mcp_server import McpServerConfig
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.registry import ToolRegistry
from tests.mcp.conftest import REPO

TOKEN = "Bearer tok-http-test-0123456789"


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start an HTTP MCP server; returns its base URL (http://127.0.0.1:PORT)."""
    procs: list[subprocess.Popen[str]] = []

    def start(transport: str, *, require: str = "", marker: Path | None = None) -> str:
        cmd = [sys.executable, "-m", "tests.support.mcp_http_server", "--transport", transport]
        if require:
            cmd += ["--require-header", require]
        if marker is not None:
            marker.mkdir(parents=True, exist_ok=True)
            cmd += ["--marker", str(marker)]
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until it listens (or exits: "")
        assert line.startswith("PORT "), f"the server did not start: {line!r}"
        return f"http://127.0.0.1:{int(line.split()[1])}"

    yield start
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _manager(tmp_path: Path, servers: dict[str, McpServerConfig]) -> McpManager:
    ctx = ToolContext(workspace=tmp_path, config=ToolsConfig())
    return McpManager(
        servers, workspace=tmp_path, registry=ToolRegistry([], ctx), connect_timeout=30
    )


def test_streamable_http_with_headers_and_sse_fallback(
    http_server: Callable[..., str], tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    streamable = http_server("streamable", require=f"Authorization={TOKEN}", marker=marker)
    sse_only = http_server("sse")
    servers = {
        "h": McpServerConfig(url=f"{streamable}/mcp", headers={"Authorization": TOKEN}),
        # The same server without the header: refused (401), so it fails with a reason.
        "noauth": McpServerConfig(url=f"{streamable}/mcp", type="http"),
        # `url` alone: Streamable HTTP first; this server only speaks SSE.
        "s": McpServerConfig(url=f"{sse_only}/sse"),
        "sx": McpServerConfig(url=f"{sse_only}/sse", type="sse"),
    }

    async def scenario() -> None:
        manager = _manager(tmp_path, servers)
        manager.start()
        try:
            assert await manager.wait_ready(60) == []
            status = {s.name: s for s in manager.statuses()}
            assert status["h"].state == "connected" and status["h"].transport == "http"
            assert status["s"].state == "connected" and status["s"].transport == "sse"
            assert status["sx"].state == "connected" and status["sx"].transport == "sse"
            assert status["noauth"].state == "failed", status["noauth"]
            assert (status["noauth"].error or "").startswith("HTTP 401 Unauthorized from ")
            assert "echo" in status["h"].tools and "sleep" in status["s"].tools
            registry = manager.registry
            assert registry is not None
            for name in ("mcp_h_echo", "mcp_s_echo", "mcp_sx_echo"):
                result = await registry.call(name, {"text": f"via {name}"})
                assert (result.ok, result.content) == (True, f"via {name}")
            image = await registry.call("mcp_h_image", {})
            assert image.content == "[image: image/png, 70 bytes, not shown]"
            structured = await registry.call("mcp_s_structured", {"city": "Oslo"})
            assert '"celsius": 21.5' in structured.content
            failed = await registry.call("mcp_h_fail", {"reason": "over http"})
            assert (failed.ok, failed.status, failed.content) == (
                False,
                "error",
                "Error: over http",
            )
            # A fallback's first attempt ending is not the SSE connection's end: still up.
            assert {s.name: s.state for s in manager.statuses()} == {
                "h": "connected",
                "noauth": "failed",
                "s": "connected",
                "sx": "connected",
            }
        finally:
            await manager.close()
        assert {s.state for s in manager.statuses()} == {"closed"}

    asyncio.run(scenario())
    # The header reached the server (it answers 401 without it).
    assert (marker / "authorized").read_text() == TOKEN
    assert (marker / "refused").read_text() == ""
