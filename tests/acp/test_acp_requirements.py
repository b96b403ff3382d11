"""The ACP conformance kit's v1 requirements (acp-tck, `src/tck/v1/requirements.py`), as
pytest cases named by their ids, against `picobot acp` as a real subprocess.

The kit itself is not installable offline here, so each requirement's text (its tier, the
spec lines it cites) is turned into a test of the same observable. Every MANDATORY one is
here; the CAPABILITY ones run when picobot advertises the capability and skip (as the kit
reports "not applicable") when it does not; the ADVISORY ones are here too, since they are
cheap. tests/acp/REQUIREMENTS.md lists them all, with what is and is not covered.

"Nothing after the response" checks (ACP-JSONRPC-003, ACP-CANCEL-002, ACP-LOAD-002) are made
on the whole of stdout after the agent has exited (stdin closed): every byte it wrote is then
in, so no quiet period is needed.

Most requirements are checked on one agent process shared by the module (`shared`: the
response to its one `initialize`, and sessions of each test's own). Those about the whole of
stdout, stdin closed and the exit read one process run to its end (`exited`: each of their
exchanges in a session of its own, then stdin closed), and the load ones one new process that
loads a session `exited` stored (`loaded`): each `picobot acp` pays up to ~5 s of CPU for
LiteLLM's import, and the seven used to spawn one process each, the three load tests two. The
initialize variants spawn their own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import acp
import pytest
import pytest_asyncio
from acp.schema import (
    ClientCapabilities,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ReadTextFileRequest,
    RequestPermissionRequest,
    SessionNotification,
    SetSessionModeResponse,
    WriteTextFileRequest,
)
from pydantic import BaseModel, ValidationError

from tests.acp.client_support import (
    MODULE_LOOP,
    RecordingClient,
    SharedAgent,
    home_config,
    non_jsonrpc_lines,
    set_tools,
    shared,
    shared_acp,
    spawn_agent,
)
from tests.support.openai_server import OpenAITestServer
from tests.support.openai_steps import keep_alive_forever, text_reply, tool_call_reply

pytestmark = MODULE_LOOP
__all__ = ["shared", "shared_acp"]  # the fixtures

STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}

RESPONSES: dict[str, type[BaseModel]] = {
    "initialize": InitializeResponse,
    "session/new": NewSessionResponse,
    "session/load": LoadSessionResponse,
    "session/prompt": PromptResponse,
    "session/list": ListSessionsResponse,
    "session/set_mode": SetSessionModeResponse,
}
AGENT_MESSAGES: dict[str, type[BaseModel]] = {
    "session/update": SessionNotification,
    "session/request_permission": RequestPermissionRequest,
    "fs/read_text_file": ReadTextFileRequest,
    "fs/write_text_file": WriteTextFileRequest,
}


def frames(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.split(b"\n") if line.strip()]


def schema_problems(wire: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Every message the agent sent that does not validate against the SDK's models of the
    v1 schema (the SDK's schema.py is generated from schema/v1/schema.json)."""
    asked = {m["id"]: m["method"] for d, m in wire if d == "out" and "method" in m and "id" in m}
    problems = []
    for direction, m in wire:
        if direction != "in":
            continue
        if "method" in m:
            model = AGENT_MESSAGES.get(m["method"])
            body = m.get("params")
        elif "result" in m:
            model = RESPONSES.get(asked.get(m.get("id"), ""))
            # an all-optional result may be null (the kit's documented leniency)
            body = m["result"] if m["result"] is not None else {}
        else:
            continue
        if model is None:
            continue
        try:
            model.model_validate(body)
        except ValidationError as e:
            problems.append(f"{json.dumps(m)[:300]}: {e}")
    return problems


def updates_after_response(
    stdout: bytes, session_id: str, response_id: int
) -> tuple[int, list[dict[str, Any]]]:
    """(index of the response with `response_id`, the session's updates after it)."""
    msgs = frames(stdout)
    at = next(i for i, m in enumerate(msgs) if "method" not in m and m.get("id") == response_id)
    after = [
        m
        for m in msgs[at + 1 :]
        if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
    ]
    return at, after


def request_id(client: RecordingClient, method: str, n: int = 0) -> int:
    return [m["id"] for d, m in client.wire if d == "out" and m.get("method") == method][n]


async def basic_exchange(agent: Any, llm_server: Any, sid: str | None = None) -> str:
    """A prompt answered in a new session (`agent.start()`, or `sid` when given)."""
    llm_server.script([text_reply("A short answer.")])
    sid = sid or await agent.start()
    resp = await agent.say(sid, "hello")
    assert resp.stop_reason in STOP_REASONS
    return sid


# -- transport ----------------------------------------------------------------------------------


@dataclass
class ExitedRun:
    """One `picobot acp` run to its end: every byte of its stdout, the client's recording."""

    home: Path
    stdout: bytes
    client: RecordingClient
    code: int | None
    """The exit code, None when it did not exit on its own within 20 s of stdin's end."""
    stderr: str
    basic: str
    """The session of the basic exchange (prompt "hello"), stored when it exited."""
    unicode: str
    cancelled: str
    cancelled_resp: Any
    cancelled_prompt_id: int
    raw_ids: list[str]
    """The ids of the requests written by hand (they bypass the client's recording)."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def exited(
    server: OpenAITestServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ExitedRun]:
    """The exchanges of TRANSPORT-001/002, JSONRPC-002/003, CANCEL-002, SHUTDOWN-001 and
    STDERR-001 in one process, each in a session of its own, the cancelled turn last; then
    stdin is closed and the process must exit on its own."""
    home = tmp_path_factory.mktemp("acp-exited") / "picobot-home"
    (home / "workspace").mkdir(parents=True)
    (home / "config.json").write_text(json.dumps(home_config(server)))
    async with spawn_agent(home, tee=True) as agent:
        basic = await basic_exchange(agent, server)  # TRANSPORT-001, JSONRPC-002, ...
        raw = [  # JSONRPC-002
            await agent.raw_request("session/not_a_method", {}),
            await agent.raw_request("session/new", {"cwd": 42}),
            await agent.raw_request("session/prompt", {"sessionId": "acp:unknown", "prompt": []}),
        ]
        server.script([text_reply("naïve café — 日本語 ✓ 🙂")])  # TRANSPORT-002
        unicode = await agent.new_session()
        await agent.say(unicode, "unicode, please: ü ß 中")
        quiet = await agent.new_session()  # JSONRPC-003
        for note in (
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": quiet}},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "acp:nope"}},
            {"jsonrpc": "2.0", "method": "_picobot_tests/notice", "params": {}},
            {"jsonrpc": "2.0", "method": "no/such_notification", "params": {"x": 1}},
        ):
            await agent.send_raw(json.dumps(note).encode() + b"\n")
        await agent.new_session()
        cancelled = await agent.new_session()  # CANCEL-002
        _, cancelled_resp = await _cancelled_turn(agent, server, cancelled)
        [prompt_id] = [
            m["id"]
            for d, m in agent.client.wire
            if d == "out"
            and m.get("method") == "session/prompt"
            and m["params"]["sessionId"] == cancelled
        ]
        await agent.close_stdin()
        try:  # SHUTDOWN-001 checks it: the process exits on its own
            code: int | None = await agent.wait_exit(timeout=20)
        except AssertionError:
            code = None
    server.script([])
    server.clear()
    assert agent.stdout is not None
    yield ExitedRun(
        home, bytes(agent.stdout), agent.client, code, agent.stderr(), basic, unicode,
        cancelled, cancelled_resp, prompt_id, [r["id"] for r in raw],
    )  # fmt: skip


async def test_REQ_ACP_TRANSPORT_001_every_stdout_line_is_one_jsonrpc_message(
    exited: ExitedRun,
) -> None:
    assert exited.stdout
    assert non_jsonrpc_lines(exited.stdout) == []
    assert exited.stdout.endswith(b"\n")


async def test_REQ_ACP_TRANSPORT_002_stdout_is_utf8(exited: ExitedRun) -> None:
    assert exited.stdout
    exited.stdout.decode("utf-8")  # raises on invalid UTF-8
    assert "日本語" in exited.client.agent_text(exited.unicode)


# -- JSON-RPC -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rid", [777, "a-string-id", 0])
async def test_REQ_ACP_JSONRPC_001_response_id_echoes_the_request_id(
    configured_home: Path, rid: int | str
) -> None:
    async with spawn_agent(configured_home) as agent:
        line = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        }
        await agent.send_raw(json.dumps(line).encode() + b"\n")
        resp = await agent.client.wait_until(
            lambda: [
                m
                for m in agent.client.incoming(lambda m: "result" in m or "error" in m)
                if m.get("id") == rid and type(m.get("id")) is type(rid)
            ],
            f"the response to id {rid!r}",
        )
    assert resp[0]["result"]["protocolVersion"] == 1


async def test_REQ_ACP_JSONRPC_002_one_of_result_or_error_and_error_shape(
    exited: ExitedRun,
) -> None:
    responses = [m for m in frames(exited.stdout) if "method" not in m]
    assert len(responses) >= 6
    for m in responses:
        assert ("result" in m) != ("error" in m), m
        if "error" in m:
            assert isinstance(m["error"]["code"], int) and not isinstance(m["error"]["code"], bool)
            assert isinstance(m["error"]["message"], str)


async def test_REQ_ACP_JSONRPC_003_notifications_never_get_a_response(
    exited: ExitedRun,
) -> None:
    wire = exited.client.wire
    asked = {m["id"] for d, m in wire if d == "out" and "id" in m and "method" in m}
    asked |= set(exited.raw_ids)
    responses = [m for m in frames(exited.stdout) if "method" not in m]
    assert [m for m in responses if m.get("id") not in asked] == []


async def test_REQ_ACP_JSONRPC_004_unknown_method_is_minus_32601(shared: SharedAgent) -> None:
    resp = await shared.raw_request("nonexistent/method", {})
    assert resp["error"]["code"] == -32601


async def test_REQ_ACP_JSONRPC_005_connection_usable_after_an_error(
    shared: SharedAgent, llm_server
) -> None:
    agent = shared
    await agent.raw_request("nonexistent/method", {})
    await agent.raw_request("session/new", {"cwd": None})
    llm_server.script([text_reply("still here")])
    sid = await agent.new_session()
    assert (await agent.say(sid, "are you there")).stop_reason == "end_turn"


# -- initialize ---------------------------------------------------------------------------------


# The shared process's first message was `initialize` at version 1 (acp.PROTOCOL_VERSION) with
# the default client: INIT-001, -002 and -004 read its answer, as they did of a process of
# their own.


async def test_REQ_ACP_INIT_001_initialize_result_validates(shared: SharedAgent) -> None:
    assert acp.PROTOCOL_VERSION == 1
    result = shared.init_raw
    assert result is not None and "result" in result
    InitializeResponse.model_validate(result["result"])
    assert type(result["result"]["protocolVersion"]) is int


async def test_REQ_ACP_INIT_002_version_1_is_answered_1(shared: SharedAgent) -> None:
    assert acp.PROTOCOL_VERSION == 1
    assert shared.init is not None
    assert shared.init.protocol_version == 1


async def test_REQ_ACP_INIT_003_unsupported_version_is_negotiated_down(
    shared: SharedAgent, configured_home: Path
) -> None:
    assert acp.PROTOCOL_VERSION == 1 and shared.init is not None
    v1 = shared.init.protocol_version  # the answer to version 1
    async with spawn_agent(configured_home) as agent:
        params = {
            "protocolVersion": 65535,
            "clientCapabilities": {},
            "clientInfo": {"name": "future-client", "version": "9"},
            "info": {"name": "future-client", "version": "9"},
        }
        resp = await agent.raw_request("initialize", params)
    got = resp["result"]["protocolVersion"]
    assert type(got) is int and got != 65535 and got >= v1


async def test_REQ_ACP_INIT_004_agent_info_has_name_and_version(shared: SharedAgent) -> None:
    resp = shared.init
    assert resp is not None
    assert resp.agent_info is not None
    assert resp.agent_info.name and resp.agent_info.version


# -- schema -------------------------------------------------------------------------------------


async def test_REQ_ACP_SCHEMA_001_every_message_of_a_basic_exchange_validates(
    shared: SharedAgent, llm_server
) -> None:
    agent = shared
    set_tools(agent.home, approval="ask")
    (agent.workspace / "a.txt").write_text("alpha\n")
    llm_server.script(
        [
            tool_call_reply("read_file", {"path": "a.txt"}),
            tool_call_reply("write_file", {"path": "b.txt", "content": "beta\n"}, id="call_2"),
            text_reply("Both done."),
        ]
    )
    client = agent.client
    client.answer_permissions("allow_once")
    sid = await agent.start()
    await agent.say(sid, "read a, write b")
    if _advertises(agent, "list"):
        await agent.conn.list_sessions()
    wire = agent.init_wire + client.wire  # the initialize exchange, then this test's
    agent_messages = [m for d, m in wire if d == "in"]
    assert len(agent_messages) >= 5
    assert schema_problems(wire) == []


def _advertises(agent: SharedAgent, capability: str) -> bool:
    init = agent.init_raw
    caps = (init or {}).get("result", {}).get("agentCapabilities", {})
    return bool((caps.get("sessionCapabilities") or {}).get(capability) is not None)


# -- sessions -----------------------------------------------------------------------------------


async def test_REQ_ACP_SESSION_001_new_session_with_absolute_cwd(shared: SharedAgent) -> None:
    agent = shared
    resp = await agent.raw_request(
        "session/new", {"cwd": str(agent.workspace.resolve()), "mcpServers": []}
    )
    NewSessionResponse.model_validate(resp["result"])
    sid = resp["result"]["sessionId"]
    assert isinstance(sid, str) and sid


async def test_hostile_cwds_are_invalid_params_each_named_in_one_short_line(
    shared: SharedAgent, tmp_path: Path
) -> None:
    """A cwd no folder can have: a 300-character name (Path.is_dir() raised ENAMETOOLONG:
    -32603 and a traceback on stderr), 10,000 characters, a NUL, a file, a relative path."""
    (tmp_path / "f").write_text("x")
    cwds = {
        "a name too long": str(tmp_path / ("d" * 300)),
        "a path too long": "/" + "a" * 10_000,
        "a NUL": str(tmp_path) + "\x00x",
        "a file": str(tmp_path / "f"),
        "a missing folder": str(tmp_path / "missing"),
        "a relative path": "..",
    }
    for name, cwd in cwds.items():
        resp = await shared.raw_request("session/new", {"cwd": cwd, "mcpServers": []})
        assert resp.get("error", {}).get("code") == -32602, (name, resp)
        message = resp["error"]["message"]
        assert "\n" not in message and "\x00" not in message and len(message) < 400, (name, message)


async def test_REQ_ACP_SESSION_002_two_sessions_have_distinct_ids(shared: SharedAgent) -> None:
    a = await shared.new_session()
    b = await shared.new_session()
    assert a != b


# -- prompt -------------------------------------------------------------------------------------


async def test_REQ_ACP_PROMPT_001_text_prompt_has_a_defined_stop_reason(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([text_reply("ok")])
    sid = await shared.start()
    resp = await shared.say(sid, "hello")
    assert resp.stop_reason in STOP_REASONS


async def test_REQ_ACP_PROMPT_002_updates_validate_and_carry_the_session_id(
    shared: SharedAgent, llm_server
) -> None:
    agent = shared
    set_tools(agent.home, approval="auto")
    llm_server.script(
        [tool_call_reply("list_dir", {"path": "."}), text_reply("Listed the folder.")]
    )
    sid = await agent.start()
    await agent.new_session()  # a second session: its id must not leak into the turn
    await agent.say(sid, "list")
    updates = [m for d, m in agent.client.wire if d == "in" and m.get("method") == "session/update"]
    assert updates
    for m in updates:
        SessionNotification.model_validate(m["params"])
        assert m["params"]["sessionId"] == sid


async def test_REQ_ACP_PROMPT_003_resource_link_beside_text_is_accepted(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([text_reply("seen")])
    agent = shared
    f = agent.workspace / "r.md"
    f.write_text("# resource\n")
    sid = await agent.start()
    resp = await agent.prompt(
        sid, acp.text_block("look"), acp.resource_link_block("r.md", f.as_uri())
    )
    assert resp.stop_reason in STOP_REASONS


# -- cancel -------------------------------------------------------------------------------------


async def _cancelled_turn(agent: Any, llm_server: Any, sid: str | None = None) -> tuple[str, Any]:
    """A prompt cancelled once its first chunk came (in a new session, or `sid`)."""
    llm_server.script([keep_alive_forever(2, text_reply("this will be cut", chunk_size=3))])
    sid = sid or await agent.start()
    turn = asyncio.create_task(agent.say(sid, "go"))
    await agent.client.wait_until(
        lambda: agent.client.session_updates(sid, "agent_message_chunk"), "a first chunk"
    )
    await agent.cancel(sid)
    return sid, await asyncio.wait_for(turn, 30)


async def test_REQ_ACP_CANCEL_001_cancelled_prompt_answers_cancelled_not_an_error(
    shared: SharedAgent, llm_server
) -> None:
    _, resp = await _cancelled_turn(shared, llm_server)
    assert resp.stop_reason == "cancelled"


async def test_REQ_ACP_CANCEL_002_no_update_after_the_cancelled_response(
    exited: ExitedRun,
) -> None:
    assert exited.cancelled_resp.stop_reason == "cancelled"
    _, after = updates_after_response(exited.stdout, exited.cancelled, exited.cancelled_prompt_id)
    assert after == []


# -- load ---------------------------------------------------------------------------------------


def _require(caps: Any, capability: str) -> None:
    if not caps:
        pytest.skip(f"not applicable: {capability} not advertised")


@dataclass
class LoadedRun:
    """A new `picobot acp` that loaded a stored session, then exited: all of its stdout."""

    stdout: bytes
    session: str
    load_id: int
    response: dict[str, Any]
    """The response to `session/load`, as it came on the wire."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def loaded(exited: ExitedRun) -> AsyncIterator[LoadedRun]:
    """The session of `exited`'s basic exchange (stored, its process gone), loaded by a new
    process: initialize, session/load, stdin closed, the exit awaited."""
    sid = exited.basic
    async with spawn_agent(exited.home, tee=True) as agent:
        init = await agent.initialize()
        _require(init.agent_capabilities and init.agent_capabilities.load_session, "loadSession")
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid, mcp_servers=[])
        load_id = request_id(agent.client, "session/load")
        await agent.close_stdin()
        await agent.wait_exit()
    assert agent.stdout is not None
    stdout = bytes(agent.stdout)
    [response] = [m for m in frames(stdout) if "method" not in m and m.get("id") == load_id]
    yield LoadedRun(stdout, sid, load_id, response)


async def test_REQ_ACP_LOAD_001_load_succeeds_with_a_valid_response(loaded: LoadedRun) -> None:
    resp = loaded.response
    assert "result" in resp, resp
    LoadSessionResponse.model_validate(resp["result"] if resp["result"] is not None else {})


async def test_REQ_ACP_LOAD_002_replay_before_the_load_response_none_after(
    loaded: LoadedRun,
) -> None:
    at, after = updates_after_response(loaded.stdout, loaded.session, loaded.load_id)
    before = [m for m in frames(loaded.stdout)[:at] if m.get("method") == "session/update"]
    assert before, "no replay at all"
    assert after == []


async def test_REQ_ACP_LOAD_003_load_result_is_an_object(loaded: LoadedRun) -> None:
    resp = loaded.response
    assert isinstance(resp.get("result"), dict), resp


# -- session capabilities (run when advertised) -------------------------------------------------


async def _session_caps(agent: Any) -> dict[str, Any]:
    """The session capabilities: the shared agent's `initialize` answer, or a fresh one's."""
    if isinstance(agent, SharedAgent):
        init = agent.init_raw["result"]
    else:
        await agent.initialize()
        init = agent.client.response_to(0)["result"]
    return init.get("agentCapabilities", {}).get("sessionCapabilities") or {}


async def test_REQ_ACP_LIST_001_list_returns_a_sessions_array(shared: SharedAgent) -> None:
    agent = shared
    caps = await _session_caps(agent)
    _require("list" in caps, "sessionCapabilities.list")
    await agent.new_session()
    resp = await agent.raw_request("session/list", {})
    ListSessionsResponse.model_validate(resp["result"])
    assert isinstance(resp["result"]["sessions"], list)


async def test_REQ_ACP_LIST_002_list_for_an_unused_cwd_is_empty(
    shared: SharedAgent, tmp_path: Path
) -> None:
    agent = shared
    caps = await _session_caps(agent)
    _require("list" in caps, "sessionCapabilities.list")
    await agent.new_session()
    unused = tmp_path / "nobody-works-here"
    unused.mkdir()
    resp = await agent.raw_request("session/list", {"cwd": str(unused)})
    assert resp["result"]["sessions"] == []


async def test_REQ_ACP_RESUME_001_and_002_resume_without_history_replay(
    shared: SharedAgent, configured_home: Path, llm_server
) -> None:
    # not applicable unless advertised: the shared agent's answer says so without a spawn; the
    # resumed session is stored by a process of its own (a session open in one is locked)
    _require("resume" in await _session_caps(shared), "sessionCapabilities.resume")
    llm_server.script([text_reply("to resume")])
    async with spawn_agent(configured_home) as agent:
        caps = await _session_caps(agent)
        _require("resume" in caps, "sessionCapabilities.resume")
        sid = await agent.new_session()
        await agent.say(sid, "remember")
    client = RecordingClient()
    async with spawn_agent(configured_home, client) as agent:
        await agent.initialize()
        resp = await agent.raw_request(
            "session/resume", {"sessionId": sid, "cwd": str(agent.workspace)}
        )
    assert "result" in resp, resp
    history = {"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"}
    assert not [u for s, u in client.updates if s == sid and u.session_update in history]


async def test_REQ_ACP_DELETE_001_and_002_delete(shared: SharedAgent) -> None:
    agent = shared
    caps = await _session_caps(agent)
    _require("delete" in caps, "sessionCapabilities.delete")
    sid = await agent.new_session()
    resp = await agent.raw_request("session/delete", {"sessionId": sid})
    assert resp.get("result") == {} or resp.get("result") is None, resp
    again = await agent.raw_request("session/delete", {"sessionId": sid})
    assert "result" in again, again  # ADVISORY 002: a second delete succeeds silently


async def test_REQ_ACP_CLOSE_001_and_002_close(shared: SharedAgent, llm_server) -> None:
    agent = shared
    caps = await _session_caps(agent)
    _require("close" in caps, "sessionCapabilities.close")
    idle = await agent.new_session()
    resp = await agent.raw_request("session/close", {"sessionId": idle})
    assert "result" in resp, resp
    llm_server.script([keep_alive_forever(1, text_reply("long long long", chunk_size=3))])
    busy = await agent.new_session()
    turn = asyncio.create_task(agent.say(busy, "talk"))
    await agent.client.wait_until(
        lambda: agent.client.session_updates(busy, "agent_message_chunk"), "a first chunk"
    )
    await agent.raw_request("session/close", {"sessionId": busy})
    assert (await asyncio.wait_for(turn, 30)).stop_reason == "cancelled"


async def test_REQ_ACP_ADDDIRS_001_additional_directories_accepted(
    shared: SharedAgent, tmp_path: Path
) -> None:
    agent = shared
    caps = await _session_caps(agent)
    _require("additionalDirectories" in caps, "sessionCapabilities.additionalDirectories")
    extra = tmp_path / "extra"
    extra.mkdir()
    resp = await agent.raw_request(
        "session/new",
        {"cwd": str(agent.workspace), "mcpServers": [], "additionalDirectories": [str(extra)]},
    )
    assert "result" in resp, resp


# -- modes and config options ---------------------------------------------------------------


async def test_REQ_ACP_MODES_001_and_002_modes_are_valid_and_switchable(
    shared: SharedAgent,
) -> None:
    agent = shared
    resp = await agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[])
    agent.sessions.append(resp.session_id)
    modes = resp.modes
    _require(modes, "modes (session/new returned none)")
    ids = [m.id for m in modes.available_modes]
    assert modes.current_mode_id in ids
    other = next((i for i in ids if i != modes.current_mode_id), None)
    _require(other, "a second mode")
    await agent.conn.set_session_mode(session_id=resp.session_id, mode_id=other)
    # a request after it bounds the wait for a current_mode_update, if any is sent
    await agent.new_session()
    for _, m in agent.client.wire:
        update = (m.get("params") or {}).get("update") or {}
        if update.get("sessionUpdate") == "current_mode_update":
            assert "currentModeId" in update


async def test_REQ_ACP_CONFIG_001_and_002_config_options(shared: SharedAgent) -> None:
    agent = shared
    resp = await agent.raw_request("session/new", {"cwd": str(agent.workspace), "mcpServers": []})
    options = resp["result"].get("configOptions")
    _require(options, "configOptions")
    for o in options:
        if o.get("type") == "boolean":
            assert isinstance(o["currentValue"], bool)
        else:
            values = [
                v.get("value")
                for entry in o.get("options", [])
                for v in (entry.get("options", [entry]))
            ]
            assert o["currentValue"] in values


async def test_REQ_ACP_CONFIG_003_no_boolean_option_unless_the_client_asked(
    shared: SharedAgent,
) -> None:
    agent = shared
    resp = await agent.raw_request("session/new", {"cwd": str(agent.workspace), "mcpServers": []})
    options = resp["result"].get("configOptions") or []
    assert [o for o in options if o.get("type") == "boolean"] == []


# -- prompt capabilities (run when advertised) ----------------------------------------------

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@pytest.mark.parametrize(
    ("req", "capability"),
    [("001", "image"), ("002", "audio"), ("003", "embeddedContext")],
)
async def test_REQ_ACP_PROMPTCAP_001_002_003_advertised_content_is_accepted(
    shared: SharedAgent, llm_server, req: str, capability: str
) -> None:
    llm_server.script([text_reply("received")])
    agent = shared
    init = agent.init
    assert init is not None
    caps = init.agent_capabilities.prompt_capabilities if init.agent_capabilities else None
    advertised = caps.model_dump(by_alias=True).get(capability) if caps else False
    _require(advertised, f"promptCapabilities.{capability} (ACP-PROMPTCAP-{req})")
    sid = await agent.new_session()
    block = {
        "image": lambda: acp.image_block(PNG_1PX, "image/png"),
        "audio": lambda: acp.audio_block("UklGRiQAAABXQVZFZm10IBAAAAABAAEA", "audio/wav"),
        "embeddedContext": lambda: acp.resource_block(
            acp.embedded_text_resource(
                (agent.workspace / "e.txt").as_uri(), "embedded text", mime_type="text/plain"
            )
        ),
    }[capability]()
    resp = await agent.prompt(sid, acp.text_block("with content"), block)
    assert resp.stop_reason in STOP_REASONS


# -- authentication -----------------------------------------------------------------------------


async def test_REQ_ACP_AUTH_001_auth_method_ids_are_unique(shared: SharedAgent) -> None:
    resp = shared.init
    assert resp is not None
    ids = [m.id for m in resp.auth_methods or []]
    assert len(ids) == len(set(ids))


async def test_REQ_ACP_AUTH_002_no_terminal_auth_unless_the_client_asked(
    configured_home: Path,
) -> None:
    async with spawn_agent(configured_home) as agent:
        resp = await agent.raw_request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": {}}
        )
    methods = resp["result"].get("authMethods") or []
    assert [m for m in methods if m.get("type") == "terminal"] == []


async def test_REQ_ACP_AUTH_003_and_004_not_applicable_without_auth_methods(
    shared: SharedAgent,
) -> None:
    resp = shared.init
    assert resp is not None
    _require(resp.auth_methods, "authMethods (ACP-AUTH-003) / auth.logout (ACP-AUTH-004)")


async def test_REQ_ACP_AUTH_005_no_auth_methods_means_no_auth_required(
    shared: SharedAgent,
) -> None:
    agent = shared
    init = agent.init
    assert init is not None
    assert not init.auth_methods
    resp = await agent.raw_request("session/new", {"cwd": str(agent.workspace), "mcpServers": []})
    assert resp.get("error", {}).get("code") != -32000
    assert "result" in resp


# -- client capabilities: never call what was not advertised --------------------------------


async def _tools_turn(agent: SharedAgent, llm_server: Any) -> Path:
    """A turn using every file tool and exec, from a client that advertised no capability: the
    shared agent's client (initialized with `ClientCapabilities()`'s wire form: fs read and
    write false, terminal false)."""
    client = agent.client
    assert not client.fs and not client.terminal
    assert client.capabilities() == ClientCapabilities()
    set_tools(agent.home, approval="auto")
    (agent.workspace / "in.txt").write_text("input\n")
    llm_server.script(
        [
            tool_call_reply("read_file", {"path": "in.txt"}),
            tool_call_reply("write_file", {"path": "out.txt", "content": "output\n"}, id="c2"),
            tool_call_reply(
                "edit_file", {"path": "in.txt", "old_text": "input", "new_text": "edited"}, id="c3"
            ),
            tool_call_reply("exec", {"command": "echo from-exec"}, id="c4"),
            text_reply("all done"),
        ]
    )
    sid = await agent.new_session()
    resp = await agent.say(sid, "use the tools")
    assert resp.stop_reason == "end_turn"
    return agent.workspace


async def test_REQ_ACP_CLIENTCAP_001_no_fs_calls_when_fs_not_advertised(
    shared: SharedAgent, llm_server
) -> None:
    client = shared.client
    ws = await _tools_turn(shared, llm_server)
    assert [c.method for c in client.forbidden if c.method.startswith("fs/")] == []
    assert (ws / "out.txt").read_text() == "output\n"  # the disk was used
    assert (ws / "in.txt").read_text() == "edited\n"


async def test_REQ_ACP_CLIENTCAP_002_no_terminal_calls_when_terminal_not_advertised(
    shared: SharedAgent, llm_server
) -> None:
    client = shared.client
    await _tools_turn(shared, llm_server)
    assert [c.method for c in client.forbidden if c.method.startswith("terminal/")] == []


async def test_REQ_ACP_CLIENTCAP_003_no_elicitation_when_not_advertised(
    shared: SharedAgent, llm_server
) -> None:
    client = shared.client
    await _tools_turn(shared, llm_server)
    assert [c.method for c in client.calls if c.method.startswith("elicitation/")] == []
    assert client.forbidden == []


# -- extensibility, errors, shutdown ------------------------------------------------------------


async def test_REQ_ACP_EXT_001_custom_underscore_request_gets_a_response(
    shared: SharedAgent,
) -> None:
    resp = await shared.raw_request("_picobot_tests/custom", {"x": 1})
    assert "result" in resp or "error" in resp


async def test_REQ_ACP_META_001_prompt_with_meta_is_accepted(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([text_reply("traced")])
    sid = await shared.start()
    resp = await shared.conn.prompt(
        session_id=sid,
        prompt=[acp.text_block("hi")],
        traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    )
    assert resp.stop_reason in STOP_REASONS


async def test_REQ_ACP_ERROR_001_error_messages_are_one_concise_line(
    shared: SharedAgent,
) -> None:
    agent = shared
    errors = [
        await agent.raw_request("nonexistent/method", {}),
        await agent.raw_request("session/new", {"cwd": 3}),
        await agent.raw_request("session/prompt", {"sessionId": "acp:nope", "prompt": []}),
    ]
    for resp in errors:
        message = resp["error"]["message"]
        assert message and "\n" not in message, resp


async def test_REQ_ACP_SHUTDOWN_001_exits_on_its_own_after_stdin_closes(
    exited: ExitedRun,
) -> None:
    assert exited.code == 0, exited.stderr[-2000:]


async def test_REQ_ACP_SCHEMA_002_no_unknown_root_keys_in_initialize(shared: SharedAgent) -> None:
    result = shared.init_raw["result"]
    allowed = set(InitializeResponse.model_fields) | {
        f.alias for f in InitializeResponse.model_fields.values() if f.alias
    }
    assert set(result) - allowed == set()


async def test_REQ_ACP_STDERR_001_stderr_volume_is_reported(
    exited: ExitedRun, record_property: Any
) -> None:
    record_property("stderr_bytes", len(exited.stderr.encode()))
