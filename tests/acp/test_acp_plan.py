"""Plan mode through `picobot acp` and a real ACP client (the SDK's): the session's mode
`plan` (offered beside `default` and `read-only`), 300 scripted calls that would change
something mixed with reads, a mutating tool of a real MCP server among them, with
tools.approval `auto` (nothing asks). None of the changing calls runs (each ends `failed`,
its content says plan mode), every read completes, nothing is asked, and the workspace and
the checkpoints' shadow git are byte-identical afterwards. Back in `default`, "go ahead"
runs the same kind of call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.acp.client_support import spawn_agent
from tests.mcp.conftest import test_server_entry, write_mcp_config
from tests.support import plan_fuzz
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

MUTATING = 300


async def test_plan_mode_runs_no_changing_call(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    marker = tmp_path / "mcp"
    write_mcp_config(configured_home, {"t": test_server_entry(marker)}, approval="auto")
    config = json.loads((configured_home / "config.json").read_text())
    config["agents"]["defaults"]["maxToolIterations"] = 100
    (configured_home / "config.json").write_text(json.dumps(config))
    ws = plan_fuzz.workspace(configured_home / "workspace")
    checkpoints = configured_home / "data" / "checkpoints"
    planned = plan_fuzz.calls(9, MUTATING, mcp=True)
    first = tool_call_reply("write_file", {"path": "before.txt", "content": "x\n"})
    llm_server.script([first, text_reply("written"), *plan_fuzz.script(planned)])
    async with spawn_agent(configured_home) as agent:
        await agent.initialize()
        resp = await agent.conn.new_session(cwd=str(ws), mcp_servers=[])
        sid = resp.session_id
        agent.sessions.append(sid)
        assert resp.modes is not None
        assert "plan" in {m.id for m in resp.modes.available_modes}
        await agent.say(sid, "write before.txt")  # so the shadow git holds a change
        assert any(p.is_file() for p in checkpoints.rglob("*"))
        before = plan_fuzz.state(ws, checkpoints)
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        answer = await agent.say(sid, "plan it")
        statuses = {c.id: agent.client.tool_statuses(sid, c.id)[-1] for c in planned}
        after = plan_fuzz.state(ws, checkpoints)
        # Back to default: the plan is carried out (the same kind of call now runs).
        llm_server.script(
            [
                tool_call_reply("write_file", {"path": "done.txt", "content": "ok\n"}),
                text_reply("done"),
            ]
        )
        await agent.conn.set_session_mode(session_id=sid, mode_id="default")
        await agent.say(sid, "go ahead")
    assert answer.stop_reason == "end_turn"
    assert plan_fuzz.PLAN in agent.client.agent_text(sid)
    ran = [c for c in planned if statuses[c.id] == "completed"]
    assert ran == [c for c in planned if plan_fuzz.is_read(c)]
    assert all(statuses[c.id] == "failed" for c in planned if not plan_fuzz.is_read(c))
    assert agent.client.permissions == []
    assert after == before
    assert not (marker / "call-echo").exists()
    assert (marker / "call-peek").exists()
    assert (ws / "done.txt").read_text() == "ok\n"
