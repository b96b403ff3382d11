"""@modelcontextprotocol/server-everything (npm, pinned in tests/mcp/node, installed by
.ci/run) through McpManager over stdio, Streamable HTTP and SSE: images, structured content,
resource links, a long-running operation that reports progress. Skipped where Node or the
package is missing, except in CI, where that is a failure."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from picobot_tui.core.mcp.manager import McpManager
from picobot_tui.core.settings import ToolsConfig
from picobot_tui.core.shapes.mcp_server import McpServerConfig
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.registry import ToolRegistry
from tests.headless.conftest import cli_env, picobot_exe
from tests.mcp.conftest import REPO

NODE_DIR = REPO / "tests" / "mcp" / "node"
EVERYTHING = NODE_DIR / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
LOOPBACK = NODE_DIR / "loopback.cjs"


def _node() -> str:
    """The node binary, or skip (fail in CI) saying what is missing."""
    node = shutil.which("node")
    missing = (
        "node is not installed"
        if node is None
        else None
        if EVERYTHING.exists()
        else "server-everything is not installed (npm ci --prefix tests/mcp/node)"
    )
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI: {missing}, so the server-everything tests would only skip")
        pytest.skip(missing)
    assert node is not None
    return node


@pytest.fixture
def everything_http() -> Iterator[dict[str, str]]:
    """server-everything's Streamable HTTP and SSE servers on 127.0.0.1 (the loopback shim
    makes their app.listen(PORT) listen there): {"streamable": url, "sse": url}."""
    node = _node()
    procs, urls = [], {}
    try:
        for mode, path in (("streamableHttp", "/mcp"), ("sse", "/sse")):
            proc = subprocess.Popen(
                [node, "--require", str(LOOPBACK), str(EVERYTHING), mode],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "PORT": "0"},
            )
            procs.append(proc)
            assert proc.stderr is not None
            for line in proc.stderr:  # until the shim says where it listens
                if line.startswith("LISTENING "):
                    # The rest is drained, so a chatty server never blocks on a full pipe.
                    threading.Thread(target=proc.stderr.read, daemon=True).start()
                    port, address = line.split()[1:3]
                    assert address == "127.0.0.1"
                    urls["streamable" if mode == "streamableHttp" else "sse"] = (
                        f"http://127.0.0.1:{port}{path}"
                    )
                    break
            else:
                pytest.fail(f"server-everything {mode} did not start")
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_everything_over_every_transport(everything_http: dict[str, str], tmp_path: Path) -> None:
    node = _node()
    servers = {
        "ev": McpServerConfig(command=node, args=[str(EVERYTHING), "stdio"]),
        "evh": McpServerConfig(url=everything_http["streamable"]),
        "evs": McpServerConfig(url=everything_http["sse"], type="sse"),
    }
    ctx = ToolContext(workspace=tmp_path, config=ToolsConfig())
    registry = ToolRegistry([], ctx)
    manager = McpManager(servers, workspace=tmp_path, registry=registry, connect_timeout=30)

    async def scenario() -> None:
        manager.start()
        try:
            assert await manager.wait_ready(60) == []
            status = {s.name: s for s in manager.statuses()}
            assert [status[n].transport for n in ("ev", "evh", "evs")] == ["stdio", "http", "sse"]
            # server-everything 2026.8.31 speaks the handshake era (`initialize`); the modern
            # era (2026-07-28 discovery) is mcp-server-time's, checked below: both eras work.
            assert status["ev"].protocol == "2025-11-25", status["ev"]
            for name in ("ev", "evh", "evs"):
                assert status[name].state == "connected", status[name]
                echo = await registry.call(f"mcp_{name}_echo", {"message": f"hi {name}"})
                assert (echo.ok, echo.content) == (True, f"Echo: hi {name}")
            image = await registry.call("mcp_ev_get-tiny-image", {})
            assert image.ok and "[image: image/png, " in image.content
            assert "bytes, not shown]" in image.content or " KB, not shown]" in image.content
            weather = await registry.call("mcp_evh_get-structured-content", {"location": "Chicago"})
            assert weather.ok and '"conditions":"Light rain / drizzle"' in weather.content
            links = await registry.call("mcp_evs_get-resource-links", {"count": 2})
            assert "[resource link: " in links.content and "demo://resource/" in links.content
            # Progress notifications arrive while it runs; the result is the final text.
            long = await registry.call(
                "mcp_ev_trigger-long-running-operation", {"duration": 0.3, "steps": 3}
            )
            assert long.ok and "Long running operation completed" in long.content
            summed = await registry.call("mcp_evh_get-sum", {"a": 2, "b": 3})
            assert summed.ok and "5" in summed.content
        finally:
            await manager.close()
        modern = McpManager(
            {"time": McpServerConfig(command=sys.executable, args=["-m", "mcp_server_time"])},
            workspace=tmp_path,
            registry=None,
            connect_timeout=60,
        )
        try:
            assert await modern.wait_ready(60) == []
            assert modern.statuses()[0].protocol == "2026-07-28", modern.statuses()
        finally:
            await modern.close()

    asyncio.run(scenario())


# -- conformance ------------------------------------------------------------------------------
CONFORMANCE = NODE_DIR / "node_modules/@modelcontextprotocol/conformance/dist/index.js"
CLIENT = '''\
"""The client the conformance suite runs: picobot, told the scenario server's URL."""
import json, os, subprocess, sys

url, scenario = sys.argv[-1], os.environ["MCP_CONFORMANCE_SCENARIO"]
home = os.environ["PICOBOT_HOME"]
with open(os.path.join(home, "config.json"), "w") as f:
    json.dump({"tools": {"mcpServers": {"conf": {"url": url}}}}, f)
picobot = json.loads(os.environ["PICOBOT_EXE"])
if scenario == "tools_call":
    command = ["mcp", "call", "conf", "add_numbers", "--args", '{"a": 2, "b": 3}']
else:  # initialize: connect and list the tools
    command = ["mcp", "list"]
done = subprocess.run([*picobot, *command], capture_output=True, text=True)
print(done.stdout)
print(done.stderr, file=sys.stderr)
sys.exit(done.returncode)
'''


@pytest.mark.parametrize("scenario", ["initialize", "tools_call"])
def test_conformance_client_scenarios(scenario: str, picobot_home: Path, tmp_path: Path) -> None:
    """@modelcontextprotocol/conformance's client scenarios against `picobot mcp`: the
    suite starts its scenario server (on 127.0.0.1 through the loopback shim), runs the
    client with its URL and checks what the client sent."""
    node = _node()
    if not CONFORMANCE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("CI: the conformance package is not installed (npm ci)")
        pytest.skip("the conformance package is not installed (npm ci --prefix tests/mcp/node)")
    if importlib.util.find_spec("picobot_tui.headless.mcp_commands") is None:
        pytest.skip("`picobot mcp call` is not there yet")
    client = tmp_path / "client.py"
    client.write_text(CLIENT)
    env = cli_env(picobot_home, PICOBOT_EXE=json.dumps(picobot_exe()))
    done = subprocess.run(
        [node, "--require", str(LOOPBACK), str(CONFORMANCE), "client"]
        + ["--command", f"{sys.executable} {client}", "--scenario", scenario],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert done.returncode == 0, out
    assert "OVERALL: PASSED" in out and " 0 failed" in out, out
