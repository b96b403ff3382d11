"""`picobot acp` driven by the SDK's own client side, as an editor drives it (issue 13, "Tested
with real clients"): the console script as a real subprocess, the local scripted model, every
message on the wire recorded. The contract is the issue's and the protocol's, never the
agent's internals.

Most tests share one agent process for the module (`shared`: each opens its own sessions in a
workspace of its own); those about the process itself (initialize variants, stdin closed, raw
stdout, bad framing, always-allow written to config.json, a load in a new process) spawn their
own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import acp
import pytest
from acp.schema import FileEditToolCallContent

from tests.acp.client_support import (
    MODULE_LOOP,
    Gate,
    RecordingClient,
    SharedAgent,
    config,
    last_user_text,
    non_jsonrpc_lines,
    session_file,
    set_tools,
    shared,
    shared_acp,
    spawn_agent,
)
from tests.headless.conftest import read_messages
from tests.support.openai_steps import (
    error,
    keep_alive_forever,
    slow,
    text_reply,
    tool_call_reply,
)

pytestmark = MODULE_LOOP
__all__ = ["shared", "shared_acp"]  # the fixtures

STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}


def tool_id(client: RecordingClient, sid: str, n: int = 0) -> str:
    starts = [u for u in client.tool_events(sid) if u.session_update == "tool_call"]
    assert len(starts) > n, f"only {len(starts)} tool_call updates:\n{client.summary()}"
    return starts[n].tool_call_id


# -- initialize ---------------------------------------------------------------------------------


async def test_initialize_answers_version_1_with_its_capabilities(shared: SharedAgent) -> None:
    # the shared process's first message was initialize at the SDK's version, 1
    assert acp.PROTOCOL_VERSION == 1
    resp = shared.init
    assert resp is not None
    assert resp.protocol_version == 1
    caps = resp.agent_capabilities
    assert caps is not None and caps.load_session is True
    assert caps.prompt_capabilities is not None
    assert caps.mcp_capabilities is not None
    assert resp.auth_methods == []
    assert resp.agent_info is not None and resp.agent_info.name


@pytest.mark.parametrize("asked", [2, 99, 65535])
async def test_initialize_negotiates_down_to_the_version_it_speaks(
    configured_home: Path, asked: int
) -> None:
    async with spawn_agent(configured_home) as agent:
        resp = await agent.initialize(asked)
        # still serving, and a session works at the negotiated version
        sid = await agent.new_session()
    assert resp.protocol_version == 1
    assert sid


async def test_initialize_with_a_legacy_date_version_is_answered_1(configured_home: Path) -> None:
    """Older clients (Zed's first ACP builds) sent a date string: the SDK reads any version it
    cannot parse as 1, so such a client still connects."""
    async with spawn_agent(configured_home) as agent:
        resp = await agent.raw_request("initialize", {"protocolVersion": "2024-11-05"})
        assert await agent.new_session()
    assert resp["result"]["protocolVersion"] == 1


# -- new and prompt -------------------------------------------------------------------------


async def test_new_session_then_text_prompt_ends_the_turn(shared: SharedAgent, llm_server) -> None:
    llm_server.script([text_reply("Hello from the scripted model.")])
    agent = shared
    sid = await agent.start()
    resp = await agent.say(sid, "say hello")
    assert resp.stop_reason == "end_turn"
    assert agent.client.agent_text(sid) == "Hello from the scripted model."
    assert "say hello" in last_user_text(llm_server.last_body)
    # the session id is picobot's key: its file holds the turn
    messages = read_messages(session_file(agent.home, sid))
    assert [m["role"] for m in messages][-2:] == ["user", "assistant"]
    assert messages[-1]["content"] == "Hello from the scripted model."


async def test_session_new_uses_cwd_as_the_workspace(
    shared: SharedAgent, llm_server, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "marker.txt").write_text("in elsewhere\n")
    llm_server.script([tool_call_reply("list_dir", {"path": "."}), text_reply("listed")])
    agent = shared
    sid = await agent.new_session(cwd=other)
    resp = await agent.say(sid, "list the folder")
    assert resp.stop_reason == "end_turn"
    tool_results = [m for m in llm_server.last_body["messages"] if m.get("role") == "tool"]
    assert tool_results and "marker.txt" in json.dumps(tool_results)


async def test_prompt_with_a_resource_link_reads_the_workspace_file(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([text_reply("It says hello.")])
    agent = shared
    notes = agent.workspace / "notes.txt"
    notes.write_text("NOTE-CONTENT-7731: the build is green\n")
    sid = await agent.start()
    resp = await agent.prompt(
        sid,
        acp.text_block("What does this file say?"),
        acp.resource_link_block("notes.txt", notes.as_uri(), mime_type="text/plain"),
    )
    assert resp.stop_reason == "end_turn"
    sent = json.dumps(llm_server.last_body["messages"])
    assert "NOTE-CONTENT-7731" in sent
    assert "What does this file say?" in sent


async def test_streamed_chunks_arrive_in_order_before_the_response(
    shared: SharedAgent, llm_server
) -> None:
    text = "one two three four five six seven eight nine ten"
    llm_server.script([slow(0.05, text_reply(text, chunk_size=5))])
    agent = shared
    sid = await agent.start()
    resp = await agent.say(sid, "count")
    client = agent.client
    chunks = client.session_updates(sid, "agent_message_chunk")
    assert resp.stop_reason == "end_turn"
    assert "".join(c.content.text for c in chunks) == text
    assert len(chunks) > 1, "the answer came as one chunk: not streamed"
    # on the wire, every chunk precedes the session/prompt response
    wire = [m for d, m in client.wire if d == "in"]
    last_chunk = max(
        i
        for i, m in enumerate(wire)
        if m.get("method") == "session/update"
        and m["params"]["sessionId"] == sid
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    answer = next(
        i for i, m in enumerate(wire) if m.get("result", {}).get("stopReason") == "end_turn"
    )
    assert last_chunk < answer


async def test_provider_failure_is_a_jsonrpc_error_not_a_stop_reason(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([error(401)])
    agent = shared
    sid = await agent.start()
    with pytest.raises(acp.RequestError) as failed:
        await agent.say(sid, "hello")
    assert str(failed.value)
    # the agent keeps serving
    llm_server.script([text_reply("back")])
    assert (await agent.say(sid, "again")).stop_reason == "end_turn"


# -- tool calls -------------------------------------------------------------------------------


async def test_write_file_call_has_kind_title_locations_diff_and_statuses(
    shared: SharedAgent, llm_server
) -> None:
    agent = shared
    set_tools(agent.home, approval="auto")
    llm_server.script(
        [
            tool_call_reply("write_file", {"path": "hello.txt", "content": "hi there\n"}),
            text_reply("written"),
        ]
    )
    sid = await agent.start()
    resp = await agent.say(sid, "write hello.txt")
    target = agent.workspace / "hello.txt"
    client = agent.client
    assert resp.stop_reason == "end_turn"
    assert target.read_text() == "hi there\n"
    call = tool_id(client, sid)
    events = client.tool_events(sid, call)
    start = events[0]
    assert start.session_update == "tool_call"
    assert start.kind == "edit"
    assert start.title and "hello.txt" in start.title
    assert client.tool_statuses(sid, call) == ["pending", "in_progress", "completed"]
    locations = [loc for e in events for loc in (e.locations or [])]
    assert locations and all(Path(loc.path).is_absolute() for loc in locations)
    assert Path(locations[0].path) == target
    diffs = [c for e in events for c in (e.content or []) if isinstance(c, FileEditToolCallContent)]
    assert diffs, f"no diff content:\n{client.summary()}"
    assert Path(diffs[0].path) == target
    assert diffs[0].new_text == "hi there\n"
    assert not diffs[0].old_text  # a new file


async def test_edit_file_call_carries_old_and_new_text(shared: SharedAgent, llm_server) -> None:
    agent = shared
    set_tools(agent.home, approval="auto")
    (agent.workspace / "app.py").write_text("x = 1\ny = 2\n")
    llm_server.script(
        [
            tool_call_reply(
                "edit_file", {"path": "app.py", "old_text": "y = 2", "new_text": "y = 3"}
            ),
            text_reply("edited"),
        ]
    )
    sid = await agent.start()
    resp = await agent.say(sid, "bump y")
    client = agent.client
    assert resp.stop_reason == "end_turn"
    call = tool_id(client, sid)
    events = client.tool_events(sid, call)
    assert events[0].kind == "edit"
    assert client.tool_statuses(sid, call)[-1] == "completed"
    diffs = [c for e in events for c in (e.content or []) if isinstance(c, FileEditToolCallContent)]
    assert diffs, f"no diff content:\n{client.summary()}"
    assert Path(diffs[0].path) == agent.workspace / "app.py"
    assert "y = 2" in (diffs[0].old_text or "") and "y = 3" in diffs[0].new_text
    assert "y = 2" not in diffs[0].new_text


@pytest.mark.parametrize(
    ("tool", "args", "kind", "in_title"),
    [
        ("read_file", {"path": "data.txt"}, "read", "data.txt"),
        ("list_dir", {"path": "."}, "search", None),
        ("exec", {"command": "echo kinds-ok"}, "execute", "echo kinds-ok"),
        ("todo", {"action": "add", "text": "plan it"}, "think", None),
    ],
)
async def test_tool_kinds_and_titles(
    shared: SharedAgent, llm_server, tool: str, args: dict, kind: str, in_title: str | None
) -> None:
    agent = shared
    set_tools(agent.home, approval="auto")
    (agent.workspace / "data.txt").write_text("some data\n")
    llm_server.script([tool_call_reply(tool, args), text_reply("done")])
    sid = await agent.start()
    resp = await agent.say(sid, f"use {tool}")
    client = agent.client
    assert resp.stop_reason == "end_turn"
    call = tool_id(client, sid)
    start = client.tool_events(sid, call)[0]
    assert start.kind == kind
    assert start.title
    if in_title:
        assert in_title in start.title
    assert client.tool_statuses(sid, call)[-1] == "completed", client.summary()
    if tool == "read_file":
        locations = [loc for e in client.tool_events(sid, call) for loc in (e.locations or [])]
        assert locations and Path(locations[0].path) == agent.workspace / "data.txt"


async def test_todo_list_becomes_a_plan(shared: SharedAgent, llm_server) -> None:
    agent = shared
    set_tools(agent.home, approval="auto")
    llm_server.script(
        [
            tool_call_reply("todo", {"action": "add", "text": "write the tests"}),
            tool_call_reply("todo", {"action": "add", "text": "run them"}, id="call_2"),
            text_reply("planned"),
        ]
    )
    sid = await agent.start()
    resp = await agent.say(sid, "plan")
    assert resp.stop_reason == "end_turn"
    plans = agent.client.session_updates(sid, "plan")
    assert plans, agent.client.summary()
    assert [e.content for e in plans[-1].entries] == ["write the tests", "run them"]
    assert all(e.status == "pending" for e in plans[-1].entries)


async def test_failed_tool_call_ends_failed(shared: SharedAgent, llm_server) -> None:
    agent = shared
    set_tools(agent.home, approval="auto")
    llm_server.script([tool_call_reply("read_file", {"path": "missing.txt"}), text_reply("ok")])
    sid = await agent.start()
    resp = await agent.say(sid, "read it")
    assert resp.stop_reason == "end_turn"
    call = tool_id(agent.client, sid)
    assert agent.client.tool_statuses(sid, call)[-1] == "failed"


# -- permissions ------------------------------------------------------------------------------


def _write(name: str, content: str = "x\n", call_id: str = "call_1"):
    return tool_call_reply("write_file", {"path": name, "content": content}, id=call_id)


async def test_permission_allow_once_asks_again_next_time(shared: SharedAgent, llm_server) -> None:
    llm_server.script(
        [_write("a.txt"), text_reply("one"), _write("b.txt", call_id="call_2"), text_reply("two")]
    )
    agent = shared
    configured_home = agent.home
    client = agent.client
    client.answer_permissions("allow_once", "allow_once")
    sid = await agent.start()
    assert (await agent.say(sid, "write a")).stop_reason == "end_turn"
    assert (await agent.say(sid, "write b")).stop_reason == "end_turn"
    ws = agent.workspace
    assert (ws / "a.txt").exists() and (ws / "b.txt").exists()
    assert len(client.permissions) == 2, "allow once was remembered"
    first = client.permissions[0]
    assert {"allow_once", "allow_always", "reject_once"} <= set(first.option_kinds())
    assert first.tool_call.tool_call_id == tool_id(client, sid)
    # the request shows what the TUI modal shows: the change to be made
    shown = json.dumps(first.tool_call.model_dump(mode="json", by_alias=True))
    assert "a.txt" in shown
    assert "tools" not in config(configured_home) or "write_file" not in json.dumps(
        config(configured_home)["tools"].get("alwaysAllow", [])
    )
    assert not client.problems


async def test_permission_allow_always_is_saved_and_not_asked_again(
    configured_home: Path, llm_server
) -> None:
    ls = tool_call_reply("exec", {"command": "ls -a"}, id="call_3")
    llm_server.script(
        [_write("a.txt"), text_reply("one"), _write("b.txt", call_id="call_2"), text_reply("two")]
        + [ls, text_reply("three")]
    )
    client = RecordingClient()
    # the first allow_always option is "always" in this workspace; then "everywhere", by id
    client.answer_permissions("allow_always", "id:always_everywhere")
    async with spawn_agent(configured_home, client) as agent:
        sid = await agent.start()
        assert (await agent.say(sid, "write a")).stop_reason == "end_turn"
        assert (await agent.say(sid, "write b")).stop_reason == "end_turn"
        assert (await agent.say(sid, "list")).stop_reason == "end_turn"
        ws = agent.workspace
    assert (ws / "a.txt").exists() and (ws / "b.txt").exists()
    assert len(client.permissions) == 2
    names = [o.name for o in client.permissions[1].options]
    assert "Always allow `ls …` in this workspace" in names
    assert "Always allow `ls …` everywhere" in names
    here = json.loads((configured_home / "permissions.json").read_text())["workspaces"]
    assert here == {str(ws.resolve()): {"alwaysAllow": ["write_file"]}}
    assert config(configured_home)["tools"]["alwaysAllow"] == ["exec(ls:*)"]
    assert not client.problems


async def test_permission_reject_leaves_the_file_unwritten(shared: SharedAgent, llm_server) -> None:
    llm_server.script([_write("no.txt"), text_reply("understood")])
    agent = shared
    client = agent.client
    client.answer_permissions("reject_once")
    sid = await agent.start()
    resp = await agent.say(sid, "write no.txt")
    ws = agent.workspace
    assert resp.stop_reason == "end_turn"
    assert not (ws / "no.txt").exists()
    call = tool_id(client, sid)
    assert client.tool_statuses(sid, call)[-1] == "failed"
    # the model was told
    tool_msgs = [m for m in llm_server.last_body["messages"] if m.get("role") == "tool"]
    assert tool_msgs and "den" in json.dumps(tool_msgs).lower()


async def test_read_only_mode_refuses_changes_without_asking(
    shared: SharedAgent, llm_server
) -> None:
    """A mode is the session's own (each session reads the config afresh): a shared process."""
    llm_server.script([_write("ro.txt"), text_reply("could not write")])
    agent = shared
    client = agent.client
    resp = await agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[])
    assert resp.modes is not None
    assert {m.id for m in resp.modes.available_modes} >= {"default", "read-only"}
    sid = resp.session_id
    agent.sessions.append(sid)
    await agent.conn.set_session_mode(session_id=sid, mode_id="read-only")
    assert (await agent.say(sid, "write ro.txt")).stop_reason == "end_turn"
    ws = agent.workspace
    assert not (ws / "ro.txt").exists()
    assert client.permissions == []
    assert client.tool_statuses(sid, tool_id(client, sid))[-1] == "failed"


# -- cancellation -----------------------------------------------------------------------------


async def test_cancel_mid_stream_answers_cancelled_and_marks_text_interrupted(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([keep_alive_forever(2, text_reply("partial answer here", chunk_size=4))])
    agent = shared
    sid = await agent.start()
    turn = asyncio.create_task(agent.say(sid, "talk"))
    await agent.client.wait_until(
        lambda: agent.client.session_updates(sid, "agent_message_chunk"), "a first chunk"
    )
    await agent.cancel(sid)
    resp = await asyncio.wait_for(turn, 30)
    messages = agent.session_messages(sid)
    # the session goes on after a cancel
    llm_server.script([text_reply("next")])
    assert (await agent.say(sid, "again")).stop_reason == "end_turn"
    assert resp.stop_reason == "cancelled"
    last = messages[-1]
    assert last["role"] == "assistant" and last.get("interrupted") is True
    assert last["content"] and "partial answer here".startswith(last["content"])


async def test_cancel_mid_tool_answers_cancelled_and_records_a_cancelled_result(
    shared: SharedAgent, llm_server
) -> None:
    agent = shared
    set_tools(agent.home, approval="auto")
    llm_server.script([tool_call_reply("exec", {"command": "sleep 120"})])
    sid = await agent.start()
    turn = asyncio.create_task(agent.say(sid, "wait"))
    client = agent.client
    await client.wait_until(
        lambda: (
            client.tool_events(sid)
            and "in_progress" in client.tool_statuses(sid, tool_id(client, sid))
        ),
        "the exec call in progress",
    )
    await agent.cancel(sid)
    resp = await asyncio.wait_for(turn, 30)
    messages = agent.session_messages(sid)
    assert resp.stop_reason == "cancelled"
    results = [m for m in messages if m.get("role") == "tool"]
    assert results and results[-1].get("status") == "cancelled"
    assert results[-1]["tool_call_id"] == "call_1"
    call = tool_id(client, sid)
    assert client.tool_statuses(sid, call)[-1] in {"failed", "completed"}


async def test_cancel_mid_permission_answers_cancelled(shared: SharedAgent, llm_server) -> None:
    llm_server.script([_write("held.txt")])
    agent = shared
    client = agent.client  # no answer queued: the request is held until the cancel
    sid = await agent.start()
    turn = asyncio.create_task(agent.say(sid, "write held.txt"))
    await client.wait_until(lambda: client.permissions, "a permission request")
    await agent.cancel(sid)
    resp = await asyncio.wait_for(turn, 30)
    messages = agent.session_messages(sid)
    ws = agent.workspace
    assert resp.stop_reason == "cancelled"
    assert not (ws / "held.txt").exists()
    results = [m for m in messages if m.get("role") == "tool"]
    assert results and results[-1]["tool_call_id"] == "call_1"
    assert results[-1].get("status") in {"cancelled", "denied"}


async def test_updates_of_a_cancelled_turn_all_precede_its_response(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([keep_alive_forever(3, text_reply("a b c d e f g h", chunk_size=2))])
    agent = shared
    sid = await agent.start()
    turn = asyncio.create_task(agent.say(sid, "talk"))
    client = agent.client
    await client.wait_until(
        lambda: client.session_updates(sid, "agent_message_chunk"), "a first chunk"
    )
    await agent.cancel(sid)
    await asyncio.wait_for(turn, 30)
    # a later request's answer bounds "after": nothing for the session between
    await agent.new_session()
    wire = [m for d, m in client.wire if d == "in"]
    answer = next(
        i for i, m in enumerate(wire) if m.get("result", {}).get("stopReason") == "cancelled"
    )
    after = [
        m
        for m in wire[answer + 1 :]
        if m.get("method") == "session/update" and m["params"]["sessionId"] == sid
    ]
    assert after == []


# -- load -------------------------------------------------------------------------------------


async def test_load_replays_the_history_in_a_new_process(configured_home: Path, llm_server) -> None:
    set_tools(configured_home, approval="auto")
    (configured_home / "workspace" / "data.txt").write_text("replayed data\n")
    llm_server.script(
        [tool_call_reply("read_file", {"path": "data.txt"}), text_reply("The data is replayed.")]
    )
    async with spawn_agent(configured_home) as agent:
        sid = await agent.start()
        assert (await agent.say(sid, "read data.txt please")).stop_reason == "end_turn"
    client = RecordingClient()
    async with spawn_agent(configured_home, client) as agent:
        await agent.initialize()
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid, mcp_servers=[])
        replayed = list(client.updates)
        # and the loaded session takes a new prompt
        llm_server.script([text_reply("continued")])
        assert (await agent.say(sid, "go on")).stop_reason == "end_turn"
    kinds = [u.session_update for s, u in replayed if s == sid]
    assert "user_message_chunk" in kinds and "agent_message_chunk" in kinds
    assert "tool_call" in kinds
    user = "".join(u.content.text for s, u in replayed if u.session_update == "user_message_chunk")
    agent_text = "".join(
        u.content.text for s, u in replayed if u.session_update == "agent_message_chunk"
    )
    assert "read data.txt please" in user
    assert "The data is replayed." in agent_text
    assert kinds.index("user_message_chunk") < kinds.index("tool_call")
    assert kinds.index("tool_call") < len(kinds) - 1 - kinds[::-1].index("agent_message_chunk")
    # the replay came before the load's response
    wire = [m for d, m in client.wire if d == "in"]
    load_answer = next(i for i, m in enumerate(wire) if "result" in m and m.get("id") == 1)
    replay_at = [i for i, m in enumerate(wire) if m.get("method") == "session/update"]
    assert replay_at and max(replay_at[: len(replayed)]) < load_answer
    # a replay is not a new turn: the file holds the first turn and the one after the load
    messages = read_messages(session_file(configured_home, sid))
    assert sum(1 for m in messages if m["role"] == "user") == 2


async def test_load_of_an_unknown_session_is_an_error(shared: SharedAgent) -> None:
    agent = shared
    with pytest.raises(acp.RequestError):
        await agent.conn.load_session(
            cwd=str(agent.workspace), session_id="acp:does-not-exist", mcp_servers=[]
        )
    assert await agent.new_session()


# -- several sessions -------------------------------------------------------------------------


async def test_two_sessions_prompt_concurrently(shared: SharedAgent, llm_server) -> None:
    """A's reply is held until B's turn has ended: the agent must run B while A waits."""
    a_asked, b_done = Gate(), Gate()

    def reply(request: dict) -> object:
        if "alpha" in last_user_text(request):
            a_asked.open()
            b_done.wait()
            return text_reply("answer for alpha")
        return text_reply("answer for beta")

    llm_server.script([reply, reply])
    agent = shared
    try:
        a = await agent.new_session()
        b = await agent.new_session()
        assert a != b
        turn_a = asyncio.create_task(agent.say(a, "alpha question"))
        assert await asyncio.to_thread(a_asked.wait), "alpha's turn never reached the model"
        resp_b = await agent.say(b, "beta question")
        b_done.open()
        resp_a = await asyncio.wait_for(turn_a, 30)
        client = agent.client
    finally:
        b_done.open()
    assert resp_a.stop_reason == resp_b.stop_reason == "end_turn"
    assert client.agent_text(a) == "answer for alpha"
    assert client.agent_text(b) == "answer for beta"
    assert session_file(agent.home, a) != session_file(agent.home, b)


async def test_second_prompt_to_a_running_session_is_a_clear_error(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([keep_alive_forever(1, text_reply("busy busy busy", chunk_size=4))])
    agent = shared
    sid = await agent.start()
    turn = asyncio.create_task(agent.say(sid, "first"))
    await agent.client.wait_until(
        lambda: agent.client.session_updates(sid, "agent_message_chunk"), "a first chunk"
    )
    with pytest.raises(acp.RequestError) as busy:
        await agent.say(sid, "second")
    assert str(busy.value)
    await agent.cancel(sid)
    assert (await asyncio.wait_for(turn, 30)).stop_reason == "cancelled"


# -- stdout holds only JSON-RPC ---------------------------------------------------------------


WARN_HOOK = """\
import sys, warnings, logging

class _Hook:
    # When LiteLLM is imported (after `initialize`), a library warns, logs and prints.
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            sys.meta_path.remove(self)
            warnings.warn("picobot-acp-test: a library warning", UserWarning)
            logging.getLogger("some.library").warning("picobot-acp-test: a logged warning")
            if PRINT:
                print("picobot-acp-test: a library print")
        return None

sys.meta_path.insert(0, _Hook())
"""


def _hook(tmp_path: Path, *, prints: bool) -> dict[str, str]:
    site = tmp_path / "site-hook"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"PRINT = {prints}\n" + WARN_HOOK)
    return {"PYTHONPATH": str(site), "PYTHONWARNINGS": "always"}


async def test_stdout_holds_only_jsonrpc_when_a_tool_prints_and_a_warning_fires(
    configured_home: Path, llm_server, tmp_path: Path
) -> None:
    set_tools(configured_home, approval="auto")
    llm_server.script(
        [
            tool_call_reply("exec", {"command": "echo tool-stdout-line; echo tool-stderr >&2"}),
            text_reply("printed"),
        ]
    )
    async with spawn_agent(configured_home, tee=True, env=_hook(tmp_path, prints=False)) as agent:
        sid = await agent.start()
        resp = await agent.say(sid, "print something")
        tool_msgs = [m for m in llm_server.last_body["messages"] if m.get("role") == "tool"]
    assert resp.stop_reason == "end_turn"
    assert "tool-stdout-line" in json.dumps(tool_msgs)  # the tool did print
    assert agent.stdout is not None and agent.stdout
    assert non_jsonrpc_lines(bytes(agent.stdout)) == []
    assert b"tool-stdout-line\n" not in agent.stdout
    assert b"picobot-acp-test" not in agent.stdout


async def test_stdout_holds_only_jsonrpc_when_a_library_prints(
    configured_home: Path, llm_server, tmp_path: Path
) -> None:
    llm_server.script([text_reply("fine")])
    async with spawn_agent(configured_home, tee=True, env=_hook(tmp_path, prints=True)) as agent:
        sid = await agent.start()
        resp = await agent.say(sid, "hello")
    assert resp.stop_reason == "end_turn"
    assert agent.stdout is not None
    assert non_jsonrpc_lines(bytes(agent.stdout)) == []


# -- bad input keeps the agent serving ------------------------------------------------------


async def test_malformed_json_is_a_parse_error(configured_home: Path) -> None:
    async with spawn_agent(configured_home) as agent:
        await agent.initialize()
        await agent.send_raw(b'{"jsonrpc": "2.0", "id": 5, "method": \n')
        errors = await agent.client.wait_until(
            lambda: agent.client.incoming(lambda m: m.get("error", {}).get("code") == -32700),
            "a -32700 parse error",
        )
        assert errors[0]["id"] is None
        assert errors[0]["error"]["message"]
        assert await agent.new_session()


async def test_unknown_method_is_method_not_found(shared: SharedAgent) -> None:
    agent = shared
    resp = await agent.raw_request("session/no_such_method", {})
    assert resp["error"]["code"] == -32601
    assert resp["error"]["message"]
    assert await agent.new_session()


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("session/new", {"cwd": 5, "mcpServers": []}),
        ("session/new", {"mcpServers": []}),
        ("session/prompt", {"sessionId": "acp:x", "prompt": "not a list"}),
        ("initialize", {"clientCapabilities": {}}),
        ("initialize", {"protocolVersion": -1}),
    ],
)
async def test_bad_params_are_invalid_params(
    shared: SharedAgent, method: str, params: dict
) -> None:
    agent = shared  # initialized (the bad `initialize` ones come after a good one, as before)
    resp = await agent.raw_request(method, params)
    assert resp["error"]["code"] == -32602, resp
    assert resp["error"]["message"]
    assert await agent.new_session()


async def test_unknown_session_id_is_an_error_not_a_crash(shared: SharedAgent) -> None:
    agent = shared
    with pytest.raises(acp.RequestError) as unknown:
        await agent.say("acp:no-such-session", "hello")
    assert str(unknown.value)
    await agent.conn.cancel(session_id="acp:no-such-session")  # a notification: no answer
    assert await agent.new_session()
    assert agent.process.returncode is None


async def test_closing_stdin_ends_the_process_and_saves_running_sessions(
    configured_home: Path, llm_server
) -> None:
    llm_server.script([keep_alive_forever(2, text_reply("half of an answer", chunk_size=4))])
    async with spawn_agent(configured_home) as agent:
        sid = await agent.start()
        turn = asyncio.create_task(agent.say(sid, "keep talking"))
        await agent.client.wait_until(
            lambda: agent.client.session_updates(sid, "agent_message_chunk"), "a first chunk"
        )
        await agent.close_stdin()
        code = await agent.wait_exit()
        turn.cancel()
        stderr = agent.stderr()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    messages = read_messages(session_file(configured_home, sid))
    assert messages[0]["role"] == "user" and "keep talking" in json.dumps(messages[0])
    assert messages[-1]["role"] == "assistant" and messages[-1].get("interrupted") is True


async def test_closing_stdin_when_idle_exits_cleanly(configured_home: Path) -> None:
    async with spawn_agent(configured_home) as agent:
        await agent.start()
        await agent.close_stdin()
        code = await agent.wait_exit()
        stderr = agent.stderr()
    assert code == 0, stderr
    assert "Traceback" not in stderr
