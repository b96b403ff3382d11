"""`picobot acp` against hostile input (issue 21, points 4, 5, 9 and 11, and the further
attacks tried beside them), through the real console script and the SDK's client side.

- frames a client (or whatever sits on its end of the pipe) may send: JSON nested 400,000
  deep, numbers JSON-RPC cannot carry, ids no UTF-8 writer accepts, batches, 10 MB and
  50 MB frames, responses nobody asked for; each gets the JSON-RPC error the spec names (or
  its answer), nothing written is anything but one JSON-RPC message a line, and the agent
  keeps serving;
- a model's tool call whose arguments nest past any parser's limit: the turn, and the
  session/load that replays it;
- three failed model calls in a row, then a new prompt: the model is asked again;
- a model's tool calls full of bidi, zero-width and escape characters: no title, label or
  plan entry the client receives holds one, and no other string holds one raw.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import acp
import pytest

from tests.acp.client_support import (
    MODULE_LOOP,
    Agent,
    SharedAgent,
    shared,
    shared_acp,
    spawn_agent,
)
from tests.support.openai_steps import error, text_reply, tool_call_reply

pytestmark = MODULE_LOOP
__all__ = ["shared", "shared_acp"]  # the fixtures

DEEP = 400_000
"""The issue's attack: one line of `[[[[…`, 400 KB."""


def _strict(line: bytes) -> Any:
    """One line of the agent's stdout, as a strict JSON parser reads it (no NaN/Infinity)."""

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(line.decode("utf-8"), parse_constant=no_constant)


def _request(id_: str, method: str = "initialize", params: Any = None) -> bytes:
    if params is None:
        params = {"protocolVersion": 1}
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()


async def _errors_after(agent: Agent, mark: int, payload: bytes) -> list[dict[str, Any]]:
    """Send `payload` (one line), then a request as a barrier: the error answers (id null
    or not) that came between."""
    await agent.send_raw(payload + b"\n")
    await agent.raw_request("_picobot_tests/barrier", {})
    got = [m for d, m in agent.client.wire[mark:] if d == "in" and "error" in m]
    return [m for m in got if m["error"].get("code") != -32601]  # the barrier's own answer


async def test_hostile_frames_get_their_errors_and_the_agent_keeps_serving(
    configured_home: Path,
) -> None:
    nested_params = b'{"jsonrpc":"2.0","id":"n1","method":"session/new","params":{"cwd":"/","mcpServers":[],"_meta":' + b"[" * 5_000 + b"]" * 5_000 + b"}}"  # fmt: skip
    parse_errors = {
        "400 KB of [[[[": b"[" * DEEP,
        "a request whose params nest 5,000 deep": nested_params,
        "an id of 100,000 digits": b'{"jsonrpc":"2.0","id":'
        + b"9" * 100_000
        + b',"method":"initialize","params":{"protocolVersion":1}}',  # fmt: skip
        "an id of 1e400": b'{"jsonrpc":"2.0","id":1e400,"method":"initialize","params":{"protocolVersion":1}}',  # fmt: skip
        "an id of NaN": b'{"jsonrpc":"2.0","id":NaN,"method":"initialize","params":{"protocolVersion":1}}',  # fmt: skip
        "Infinity in params": b'{"jsonrpc":"2.0","id":"inf","method":"session/new","params":{"cwd":"/","mcpServers":[],"x":-Infinity}}',  # fmt: skip
        "invalid UTF-8": b'{"jsonrpc":"2.0","id":"u","method":"initialize","params":{"x":"\xff\xfe"}}',  # fmt: skip
        "a frame over 50 MB": b'{"x":"' + b"y" * (50 * 1024 * 1024 + 10) + b'"}',
    }
    invalid_requests = {
        "a batch": b"[" + _request("b1") + b"," + _request("b2") + b"]",
        "an object as id": b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{}}',
        "true as id": b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}',
    }
    async with spawn_agent(configured_home, tee=True) as agent:
        await agent.initialize()
        seen: dict[str, list[dict[str, Any]]] = {}
        for name, payload in {**parse_errors, **invalid_requests}.items():
            seen[name] = await _errors_after(agent, len(agent.client.wire), payload)

        # Answered, with an id a UTF-8 writer can write (before: no answer, a traceback).
        await agent.send_raw(b'{"jsonrpc":"2.0","id":"\\ud800","method":"initialize","params":{"protocolVersion":1}}\n')  # fmt: skip
        surrogate = await agent.client.wait_until(
            lambda: agent.client.response_to("\ufffd"), "the answer to the surrogate id"
        )
        # Held before too: a 10 MB frame is answered (here: no such session).
        ten_mb = await agent.raw_request(
            "session/prompt",
            {"sessionId": "acp:nobody", "prompt": [{"type": "text", "text": "z" * (10 << 20)}]},
        )
        # A 4,000-digit id is JSON: echoed as it came.
        big = int("7" * 4_000)
        await agent.send_raw(json.dumps({"jsonrpc": "2.0", "id": big, "method": "initialize", "params": {"protocolVersion": 1}}).encode() + b"\n")  # fmt: skip
        big_answer = await agent.client.wait_until(
            lambda: agent.client.response_to(big), "the answer to the 4,000-digit id"
        )
        # A response to a request the agent never sent, and duplicate keys (the last wins,
        # as in every Python JSON reader), and one id used twice at once.
        mark = len(agent.client.wire)
        await agent.send_raw(b'{"jsonrpc":"2.0","id":424242,"result":{"outcome":"x"}}\n')
        await agent.send_raw(b'{"jsonrpc":"2.0","id":"dup-a","id":"dup-b","method":"initialize","params":{"protocolVersion":1}}\n')  # fmt: skip
        await agent.send_raw(_request("twice") + b"\n" + _request("twice") + b"\n")
        await agent.client.wait_until(
            lambda: len(agent.client.incoming(lambda m: m.get("id") == "twice")) == 2,
            "two answers to the id sent twice",
        )
        dup = await agent.client.wait_until(
            lambda: agent.client.response_to("dup-b"), "the answer to the duplicate keys"
        )
        after = [m for d, m in agent.client.wire[mark:] if d == "in"]
        # Still serving: a real session, and the process is alive.
        sid = await agent.new_session()
        alive = agent.process.returncode is None
        await agent.close_stdin()
        code = await agent.wait_exit()
        stdout = bytes(agent.stdout or b"")
        stderr = agent.stderr()

    for name in parse_errors:
        assert [(e["error"]["code"], e["id"]) for e in seen[name]] == [(-32700, None)], (
            name,
            seen[name],
        )
    assert "nested more than 128 levels deep" in seen["400 KB of [[[["][0]["error"]["message"]
    assert "digits" in seen["an id of 100,000 digits"][0]["error"]["message"]
    assert "too large" in seen["an id of 1e400"][0]["error"]["message"]
    assert "NaN" in seen["an id of NaN"][0]["error"]["message"]
    assert "over" in seen["a frame over 50 MB"][0]["error"]["message"]
    for name in invalid_requests:
        assert [e["error"]["code"] for e in seen[name]] == [-32600], (name, seen[name])
    assert "result" in surrogate
    assert ten_mb["error"]["code"] == -32602 and "acp:nobody" in ten_mb["error"]["message"]
    assert "result" in big_answer
    assert "result" in dup and agent.client.response_to("dup-a") is None
    assert not any(m.get("id") == 424242 for m in after)  # nothing answers a response
    assert sid.startswith("acp:") and alive
    assert code == 0, stderr
    assert "Traceback" not in stderr and "RecursionError" not in stderr
    lines = [line for line in stdout.split(b"\n") if line]
    assert lines and all(_strict(line).get("jsonrpc") == "2.0" for line in lines)


# -- point 5: tool-call arguments nested past every limit ------------------------------------

DEEP_ARGS = '{"path": ' + "[" * 5_000 + "]" * 5_000 + "}"
"""What a model sent as a read_file call's arguments: JSON, but nested 5,001 deep."""


async def test_deeply_nested_tool_arguments_leave_the_session_loadable(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script(
        [tool_call_reply("read_file", DEEP_ARGS, parts=5), text_reply("could not read it")]
    )
    agent = shared
    sid = await agent.start()
    resp = await agent.say(sid, "read it")
    assert resp.stop_reason == "end_turn"
    agent.client.reset()
    loaded = await agent.raw_request("session/load", {"sessionId": sid, "cwd": str(agent.workspace), "mcpServers": []})  # fmt: skip
    assert "result" in loaded, loaded  # before: -32603 (a RecursionError)
    # The replay is on the wire before the result (test_acp_requirements checks the order);
    # the SDK client may still be handing its notifications over.
    await agent.client.wait_until(
        lambda: agent.client.agent_text(sid) == "could not read it", "the replayed answer"
    )
    # The model was told what was wrong, and the call failed, titled by its name.
    tool_result = [m for m in agent.session_messages(sid) if m["role"] == "tool"][0]
    assert "nested more than 128 levels deep" in tool_result["content"]
    calls = [u for u in agent.client.session_updates(sid) if u.session_update == "tool_call"]
    assert len(calls) == 1
    assert calls[0].title == "read_file" and calls[0].status == "failed"
    assert calls[0].raw_input == DEEP_ARGS  # the text as the model sent it


# -- point 9: a session stopped by failed model calls takes the next prompt -------------------


async def test_a_prompt_after_three_failed_model_calls_asks_the_model_again(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script([error(401), error(401), error(401), text_reply("back again")])
    agent = shared
    sid = await agent.start()
    messages = []
    for i in range(3):
        with pytest.raises(acp.RequestError) as failed:
            await agent.say(sid, f"attempt {i}")
        messages.append(str(failed.value))
    assert "Stopped: 3 model calls in a row failed" in messages[-1]
    assert len(llm_server.completions) == 3
    # The hint says: fix the cause, then send again. The next prompt reaches the model.
    resp = await agent.say(sid, "once more")
    assert len(llm_server.completions) == 4  # before: still 3, the prompt refused unread
    assert resp.stop_reason == "end_turn"
    assert agent.client.agent_text(sid) == "back again"


# -- point 11: titles, labels and text hold no raw control or invisible character -------------

HIDDEN = "\u202e\u2066\u200b\u200f\ufeff\u2028\x1b]0;pwned\x07\x1b[31m\x9b2J\x85\x00"
"""Bidi override and isolate, zero-width space, RLM, BOM, line separator, OSC, CSI, 8-bit
CSI, NEL, NUL."""


def _strings(value: Any, path: str = "") -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _strings(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _strings(v, f"{path}[{i}]")]
    return []


def _raw_controls(text: str, keep: str = "") -> list[str]:
    return [
        f"U+{ord(c):04X}"
        for c in text
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs") and c not in keep
    ]


async def test_no_title_label_or_text_the_client_receives_holds_a_raw_control(
    shared: SharedAgent, llm_server
) -> None:
    llm_server.script(
        [
            tool_call_reply("exec", {"command": f"echo safe{HIDDEN} rm -rf x"}, id="c1"),
            tool_call_reply(
                "write_file", {"path": f"notes{HIDDEN}.md", "content": f"a{HIDDEN}b\n"}, id="c2"
            ),
            tool_call_reply("todo", {"action": "add", "text": f"buy{HIDDEN}milk"}, id="c3"),
            tool_call_reply(f"no_such{HIDDEN}tool", {"x": HIDDEN}, id="c4"),
            text_reply("done"),
        ]
    )
    agent = shared
    sid = await agent.start()
    agent.client.answer_permissions("reject_once", "reject_once", "allow_once")
    resp = await agent.say(sid, "go")
    assert resp.stop_reason == "end_turn"
    sent = agent.client.incoming(
        lambda m: m.get("method") in ("session/update", "session/request_permission")
    )
    assert len(agent.client.permissions) == 3
    assert agent.client.session_updates(sid, "plan"), "the todo call made a plan"
    problems = []
    for message in sent:
        for path, text in _strings(message["params"]):
            if ".locations[" in path:
                continue  # a path the client opens: kept as it is (see acp/updates.py)
            one_line = path.endswith((".title", ".name")) or ".entries[" in path
            bad = _raw_controls(text, keep="" if one_line else "\n\t")
            if bad:
                problems.append(f"{message['method']} {path}: {bad}")
    assert problems == []
    # The characters are shown, not dropped: the titles still say what runs.
    titles = [u.title for u in agent.client.tool_events(sid) if getattr(u, "title", None)]
    exec_title = next(t for t in titles if t.startswith("exec: "))
    assert "⟨U+202E⟩" in exec_title and "␛" in exec_title and "rm -rf" in exec_title
    entries = agent.client.session_updates(sid, "plan")[-1].entries
    assert any("⟨U+200B⟩" in e.content for e in entries)
