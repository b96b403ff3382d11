"""`picobot acp` end to end, as an editor drives it: a real subprocess, the SDK's client side,
the local scripted model. The agent's own checks while it was built: start-up and version
negotiation, bad frames, busy and unknown sessions, two sessions at once, read-only mode,
load with replay, a tool that prints, and the end of stdin in the middle of a turn.

The tests about a session (busy and unknown sessions, two at once, read-only mode, MCP servers
of the client, a cancel right behind its prompt) share one `picobot acp` per module (`shared`
of client_support: each its own sessions and workspace): each process pays ~5 s of CPU for
LiteLLM's import. Those about the process itself (initialize, bad frames, raw stdout, stdin
closed, a load in a new process) spawn their own."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import acp
import pytest
from acp.schema import McpServerStdio

from tests.acp.client_support import (
    MODULE_LOOP,
    RecordingClient,
    SharedAgent,
    non_jsonrpc_lines,
    set_tools,
    shared,
    shared_acp,
    spawn_agent,
)
from tests.support.openai_steps import keep_alive_forever, text_reply, tool_call_reply

pytestmark = MODULE_LOOP
__all__ = ["shared", "shared_acp"]  # the fixtures


async def test_initialize_answers_version_1_with_the_capabilities(configured_home: Path) -> None:
    async with spawn_agent(configured_home) as agent:
        resp = await agent.initialize(version=7)  # a version picobot does not speak
    assert resp.protocol_version == 1
    caps = resp.agent_capabilities
    assert caps.load_session is True
    assert caps.prompt_capabilities.embedded_context is True
    assert caps.prompt_capabilities.image is False
    assert caps.mcp_capabilities.http is True and caps.mcp_capabilities.sse is True
    assert caps.session_capabilities.list is not None
    assert resp.auth_methods == []
    assert resp.agent_info is not None and resp.agent_info.name == "picobot"
    assert agent.process.returncode == 0


async def test_bad_frames_get_their_json_rpc_errors_and_the_agent_keeps_serving(
    configured_home: Path,
) -> None:
    async with spawn_agent(configured_home) as agent:
        await agent.initialize()
        await agent.send_raw(b'this is not json\n[1, 2]\n"text"\n')
        errors = await agent.client.wait_until(
            lambda: (
                (found := agent.client.incoming(lambda m: "error" in m and m.get("id") is None))
                and len(found) >= 3
                and found
            ),
            "three errors with id null",
        )
        unknown = await agent.raw_request("no/such_method", {})
        bad = await agent.raw_request("session/new", {"cwd": 3})
        relative = await agent.raw_request("session/new", {"cwd": "relative/dir", "mcpServers": []})
        # still serving: a real session after all that
        sid = await agent.new_session()
    codes = [e["error"]["code"] for e in errors]
    assert codes == [-32700, -32600, -32600]
    assert unknown["error"]["code"] == -32601
    assert "no/such_method" in unknown["error"]["message"]
    assert bad["error"]["code"] == -32602
    assert "cwd" in bad["error"]["message"]
    assert relative["error"]["code"] == -32602
    assert "absolute" in relative["error"]["message"]
    assert sid.startswith("acp:")


async def test_busy_session_and_unknown_session_are_errors_not_crashes(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([keep_alive_forever(2, text_reply("one two three four", chunk_size=3))])
    agent = shared
    sid = await agent.start()
    first = asyncio.create_task(agent.say(sid, "go"))
    await agent.client.wait_until(
        lambda: agent.client.session_updates(sid, "agent_message_chunk"), "the first chunk"
    )
    with pytest.raises(acp.RequestError) as busy:
        await agent.say(sid, "again")
    with pytest.raises(acp.RequestError) as unknown:
        await agent.say("acp:nothere-20200101-000000", "hello")
    await agent.cancel(sid)
    resp = await first
    assert busy.value.code == -32600
    assert "still answering" in str(busy.value)
    assert unknown.value.code == -32602
    assert "unknown session" in str(unknown.value)
    assert resp.stop_reason == "cancelled"


async def test_two_sessions_run_prompts_at_the_same_time(
    shared: SharedAgent, llm_server, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    llm_server.script(
        [
            keep_alive_forever(1, text_reply("slow answer that stalls", chunk_size=4)),
            text_reply("quick answer"),
        ]
    )
    agent = shared
    slow_id = await agent.new_session()
    quick_id = await agent.new_session(cwd=other)
    slow = asyncio.create_task(agent.say(slow_id, "slow"))
    await agent.client.wait_until(
        lambda: agent.client.session_updates(slow_id, "agent_message_chunk"), "slow's chunk"
    )
    quick = await agent.say(quick_id, "quick")  # answered while the other still runs
    assert not slow.done()
    await agent.cancel(slow_id)
    slow_resp = await slow
    assert quick.stop_reason == "end_turn"
    assert agent.client.agent_text(quick_id) == "quick answer"
    assert slow_resp.stop_reason == "cancelled"
    assert slow_id != quick_id


async def test_read_only_mode_refuses_a_write_without_asking(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script(
        [tool_call_reply("write_file", {"path": "x.txt", "content": "no\n"}), text_reply("ok")]
    )
    agent = shared
    sid = await agent.start()
    await agent.conn.set_session_mode(session_id=sid, mode_id="read-only")
    with pytest.raises(acp.RequestError) as bad_mode:
        await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    resp = await agent.say(sid, "write x.txt")
    assert bad_mode.value.code == -32602
    assert resp.stop_reason == "end_turn"
    assert agent.client.permissions == []
    assert not (agent.workspace / "x.txt").exists()
    assert agent.client.tool_statuses(sid, "call_1") == ["pending", "failed"]


async def test_load_replays_the_stored_conversation(configured_home: Path, llm_server) -> None:
    set_tools(configured_home, approval="auto")
    llm_server.script([tool_call_reply("list_dir", {}), text_reply("the folder is empty")])
    async with spawn_agent(configured_home) as agent:
        sid = await agent.start()
        await agent.say(sid, "what is here?")
    client = RecordingClient()
    async with spawn_agent(configured_home, client) as agent:
        await agent.initialize()
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid, mcp_servers=[])
        listed = await agent.conn.list_sessions(cwd=str(agent.workspace))
    kinds = [u.session_update for _, u in client.updates]
    assert kinds == ["user_message_chunk", "tool_call", "agent_message_chunk"]
    user, call, answer = (u for _, u in client.updates)
    assert user.content.text == "what is here?"
    assert call.kind == "search" and call.status == "completed"
    assert answer.content.text == "the folder is empty"
    assert [s.session_id for s in listed.sessions] == [sid]


async def test_stdout_holds_only_json_rpc_when_a_tool_prints(
    configured_home: Path, llm_server
) -> None:
    set_tools(configured_home, approval="auto")
    command = "echo to stdout; echo to stderr >&2"
    llm_server.script([tool_call_reply("exec", {"command": command}), text_reply("done")])
    async with spawn_agent(configured_home, tee=True) as agent:
        sid = await agent.start()
        resp = await agent.say(sid, "run it")
    assert resp.stop_reason == "end_turn"
    assert agent.stdout is not None
    assert non_jsonrpc_lines(bytes(agent.stdout)) == []
    finished = agent.client.tool_events(sid, "call_1")[-1]
    assert finished.status == "completed", finished
    assert "to stdout" in json.dumps(finished.model_dump(mode="json"))


async def test_closing_stdin_mid_turn_cancels_it_saves_the_session_and_exits_0(
    configured_home: Path, llm_server
) -> None:
    llm_server.script([keep_alive_forever(2, text_reply("partial words here", chunk_size=4))])
    async with spawn_agent(configured_home) as agent:
        sid = await agent.start()
        asyncio.create_task(agent.say(sid, "talk"))
        await agent.client.wait_until(
            lambda: agent.client.session_updates(sid, "agent_message_chunk"), "a chunk"
        )
        await agent.close_stdin()
        code = await agent.wait_exit()
        messages = agent.session_messages(sid)
    assert code == 0
    assert messages[0] == {**messages[0], "role": "user", "content": "talk"}
    assert messages[-1].get("interrupted") is True


async def test_the_sdk_still_has_what_sdk_compat_reads() -> None:  # async: MODULE_LOOP
    """sdk_compat reads AgentSideConnection._conn.send_notification (a private attribute):
    this fails when the SDK moves it, instead of picobot silently taking the slow path."""
    from acp.agent.connection import AgentSideConnection
    from acp.schema import SessionNotification
    from acp.utils import serialize_params

    from picobot_tui.acp.sdk_compat import raw_notify, text_chunk_params
    from picobot_tui.acp.updates import agent_text

    class Transport:
        async def send(self, message: dict) -> None: ...

        async def receive(self) -> None: ...

        async def close(self) -> None: ...

    conn = AgentSideConnection(lambda _client: object(), Transport(), listening=False)
    assert raw_notify(conn) is not None
    typed = serialize_params(SessionNotification(session_id="acp:x", update=agent_text("hé")))
    assert text_chunk_params("acp:x", "hé") == typed


async def test_the_clients_mcp_server_is_connected_for_its_session(
    shared: SharedAgent, llm_server
) -> None:
    agent = shared
    set_tools(agent.home, approval="auto")  # read by the session/new below
    llm_server.script(
        [
            tool_call_reply("mcp_time_get_current_time", {"timezone": "UTC"}),
            text_reply("it is now"),
        ]
    )
    time_server = McpServerStdio(
        name="time", command=sys.executable, args=["-m", "mcp_server_time"], env=[]
    )
    sid = await agent.new_session(mcp_servers=[time_server])
    plain = await agent.new_session()  # another session: not connected to it
    resp = await agent.say(sid, "what time is it?")
    assert resp.stop_reason == "end_turn"
    events = agent.client.tool_events(sid, "call_1")
    assert events[0].title == "time: get_current_time"
    assert events[-1].status == "completed", events[-1]
    assert "UTC" in json.dumps(events[-1].model_dump(mode="json"))
    sent = llm_server.completions[0].body
    assert "mcp_time_get_current_time" in json.dumps(sent.get("tools"))
    assert plain != sid


async def test_a_cancel_sent_right_behind_its_prompt_still_answers_cancelled(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([text_reply("after")])
    agent = shared
    sid = await agent.start()
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
    request = {"jsonrpc": "2.0", "id": "p-1", "method": "session/prompt", "params": prompt}
    # one write: the agent reads both frames before either is handled
    await agent.send_raw((json.dumps(request) + "\n" + json.dumps(cancel) + "\n").encode())
    resp = await agent.client.wait_until(lambda: agent.client.response_to("p-1"), "p-1")
    again = await agent.say(sid, "again")
    assert resp["result"]["stopReason"] == "cancelled"
    assert again.stop_reason == "end_turn"
    assert len(llm_server.completions) == 1  # the cancelled prompt never reached the model


async def test_a_clients_mcp_server_secret_is_scrubbed_from_log_session_and_model(
    shared: SharedAgent, llm_server
) -> None:
    """A secret the editor passes in an MCP server's env (new to picobot's config) is masked
    in the log (where the server's stderr goes), the session file and the model request."""
    from acp.schema import EnvVariable

    secret = "client-token-7f3a9c1e5b2d8"
    echo = Path(__file__).resolve().parents[1] / "mcp" / "echo_server.py"
    agent = shared
    set_tools(agent.home, approval="auto")  # read by the session/new below
    llm_server.script(
        [tool_call_reply("mcp_echo_env", {"name": "CLIENT_TOKEN"}), text_reply("seen")]
    )
    server = McpServerStdio(
        name="echo",
        command=sys.executable,
        args=[str(echo)],
        env=[EnvVariable(name="CLIENT_TOKEN", value=secret)],
    )
    sid = await agent.new_session(mcp_servers=[server])
    resp = await agent.say(sid, "show the token")
    assert resp.stop_reason == "end_turn"
    result = json.dumps(agent.client.tool_events(sid, "call_1")[-1].model_dump(mode="json"))
    assert "CLIENT_TOKEN=" in result and secret not in result
    # The shared process's log and sessions: this test's and the module's earlier ones.
    log = (agent.home / "data" / "logs" / "picobot.log").read_text()
    assert "echo server: CLIENT_TOKEN is" in log  # the server's stderr reached the log
    assert secret not in log
    sessions = list((agent.home / "sessions").glob("*.jsonl"))
    assert sessions and all(secret not in p.read_text() for p in sessions)
    assert secret not in json.dumps([r.body for r in llm_server.completions])
