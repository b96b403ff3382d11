"""The library API with an MCP server (mcp-server-time from PyPI, a real stdio process): the
servers start with the Agent's first turn, their tools work in it, and `async with` /
`aclose()` end the processes; a second `asyncio.run` starts them again."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from picobot_tui import Agent, AgentError
from tests.mcp.conftest import write_mcp_config
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.usefixtures("keep_picobot_logging")

TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time"], "trust": "auto"}


def time_servers() -> list[int]:
    """Live children of this process running mcp_server_time (zombies are dead)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and state != "Z" and b"mcp_server_time" in argv:
            found.append(int(entry.name))
    return found


@pytest.fixture
def time_home(configured_home: Path, llm_server: OpenAITestServer) -> Path:
    write_mcp_config(configured_home, {"time": TIME}, mcpConnectTimeout=120)
    return configured_home


def script_time_turn(llm: OpenAITestServer, answer: str) -> None:
    llm.push(
        tool_call_reply("mcp_time_get_current_time", {"timezone": "UTC"}, id="t"),
        text_reply(answer),
    )


def last_tool_result(llm: OpenAITestServer) -> str:
    message = llm.completions[-1].body["messages"][-1]
    assert message["role"] == "tool"
    return str(message["content"])


def test_servers_start_with_the_first_turn_and_end_with_async_with(
    time_home: Path, llm_server: OpenAITestServer
) -> None:
    async def main() -> None:
        async with Agent() as agent:
            assert agent._runtime.mcp is not None
            assert agent._runtime.mcp.statuses()[0].state == "connecting"  # not started yet
            assert time_servers() == []
            script_time_turn(llm_server, "It is morning.")
            assert await agent.process_direct("what time is it?") == "It is morning."
            assert '"timezone": "UTC"' in last_tool_result(llm_server)
            assert len(time_servers()) == 1
        assert time_servers() == []  # `async with` waited for the process to end
        assert agent._runtime.mcp.statuses()[0].state == "closed"

    asyncio.run(main())


def test_aclose_ends_them_and_close_is_then_a_no_op(
    time_home: Path, llm_server: OpenAITestServer
) -> None:
    async def main() -> None:
        agent = Agent()
        script_time_turn(llm_server, "Now.")
        assert await agent.process_direct("time?") == "Now."
        assert len(time_servers()) == 1
        await agent.aclose()
        assert time_servers() == []
        agent.close()
        await agent.aclose()  # twice is fine

    asyncio.run(main())


def test_sync_close_in_a_loop_starts_the_closing_and_aclose_waits_for_it(
    time_home: Path, llm_server: OpenAITestServer
) -> None:
    async def main() -> None:
        agent = Agent()
        script_time_turn(llm_server, "Now.")
        await agent.process_direct("time?")
        agent.close()
        await agent.aclose()
        assert time_servers() == []

    asyncio.run(main())


def test_one_agent_across_two_asyncio_runs(time_home: Path, llm_server: OpenAITestServer) -> None:
    """The servers of the first loop end with it; the next loop's first turn starts them
    again (their tools are offered once, not twice)."""
    agent = Agent()
    for answer in ("First.", "Second."):
        script_time_turn(llm_server, answer)
        assert asyncio.run(agent.process_direct("time?")) == answer
        assert '"timezone": "UTC"' in last_tool_result(llm_server)
        assert time_servers() == []  # asyncio.run cancelled the owner: the SDK ended it
    names = [t["function"]["name"] for t in llm_server.completions[-1].body["tools"]]
    assert names.count("mcp_time_get_current_time") == 1
    agent.close()


def test_a_bad_entry_is_an_agent_error_of_kind_config(configured_home: Path) -> None:
    write_mcp_config(configured_home, {"time": {**TIME, "trust": "maybe"}})
    with pytest.raises(AgentError) as caught:
        Agent()
    assert caught.value.kind == "config"
    assert "`tools.mcpServers.time.trust`: Input should be 'ask' or 'auto'" in caught.value.message
