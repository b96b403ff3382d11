"""`trust` through the approval policy, with a real stdio server: "ask" follows
tools.approval, "auto" runs without asking under every policy (readonly included), and an
untrusted workspace refuses both."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from picobot_tui.core.approval import approval_needed
from picobot_tui.core.events import ApprovalRequested
from picobot_tui.core.mcp.manager import McpManager
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.shapes.mcp_server import McpServerConfig
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.registry import ToolRegistry
from picobot_tui.core.turn_state import SessionState
from tests.mcp.conftest import test_server_entry

ARGS = {"text": "hi"}


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[ToolRegistry]:
    settings = CoreSettings()
    tools = ToolRegistry([], ToolContext(tmp_path, settings.tools))
    servers = {
        trust: McpServerConfig.model_validate(
            test_server_entry(tmp_path / trust, trust=trust, toolTimeout=60)
        )
        for trust in ("ask", "auto")
    }
    manager = McpManager(servers, workspace=tmp_path, registry=tools, connect_timeout=120)
    assert await manager.wait_ready() == []
    assert manager.summary() == "mcp 2/2", manager.statuses()
    yield tools
    await manager.close()


def verdict(tools: ToolRegistry, policy: str, name: str) -> str:
    settings = CoreSettings()
    settings.tools.approval = policy  # type: ignore[assignment]
    assert tools.needs_approval(name, ARGS)  # every MCP call goes through the policy
    out = approval_needed(settings, tools, "c1", name, ARGS, SessionState(history=[]))
    return "ask" if isinstance(out, ApprovalRequested) else out


@pytest.mark.parametrize(
    ("policy", "ask_server", "auto_server"),
    [("ask", "ask", "allow"), ("auto", "allow", "allow"), ("readonly", "readonly", "allow")],
)
async def test_trust_under_each_policy(
    registry: ToolRegistry, policy: str, ask_server: str, auto_server: str
) -> None:
    assert verdict(registry, policy, "mcp_ask_echo") == ask_server
    assert verdict(registry, policy, "mcp_auto_echo") == auto_server


async def test_an_untrusted_workspace_refuses_even_auto(registry: ToolRegistry) -> None:
    registry.ctx.read_only = "this folder is not trusted"
    for policy in ("ask", "auto", "readonly"):
        assert verdict(registry, policy, "mcp_ask_echo") == "untrusted"
        assert verdict(registry, policy, "mcp_auto_echo") == "untrusted"
