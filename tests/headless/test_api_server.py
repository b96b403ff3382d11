"""The library API against the local OpenAI-compatible server, through LiteLLM: what is sent,
what is stored, failures as AgentError, retries, cancellation, and the session lock shared
with the console script."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from picobot_tui import Agent, AgentError
from picobot_tui.core.events import Retrying, TextDelta
from tests.headless.conftest import SECRET, read_messages, run_cli, session_files
from tests.support.openai_server import (
    OpenAITestServer,
    cut_mid_stream,
    error,
    keep_alive_forever,
    text_reply,
    tool_call_reply,
)
from tests.support.sent import as_stored

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("keep_picobot_logging")]


async def until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    """Wait on a condition (never a fixed sleep), failing after a generous bound."""
    for _ in range(3000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def test_process_direct_sends_the_question_and_keeps_the_session(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("First answer."), text_reply("Second answer.")])
    async with Agent() as agent:  # the config's model and key, as the CLI reads them
        assert agent.model == "openai/test-model"
        assert await agent.process_direct("first question") == "First answer."
        key = agent.session
        assert await agent.process_direct("and then?", session="latest") == "Second answer."
        assert agent.session == key
    first, second = (r.body for r in llm_server.completions)
    assert as_stored(first["messages"])[-1] == {"role": "user", "content": "first question"}
    assert [m["role"] for m in second["messages"][1:]] == ["user", "assistant", "user"]
    assert second["messages"][2]["content"] == "First answer."
    [path] = session_files(configured_home)
    assert path.name.startswith("lib_")
    msgs = read_messages(path)
    assert [(m["role"], m["content"]) for m in msgs] == [
        ("user", "first question"),
        ("assistant", "First answer."),
        ("user", "and then?"),
        ("assistant", "Second answer."),
    ]
    assert SECRET not in path.read_text()


async def test_a_provider_error_raises_with_outcome_kind_and_hint(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([error(401, "Incorrect API key provided", code="invalid_api_key")])
    async with Agent() as agent:
        with pytest.raises(AgentError) as info:
            await agent.process_direct("hi")
    err = info.value
    assert (err.outcome, err.kind) == ("error", "auth")
    assert err.session == agent.session and err.hint
    assert SECRET not in str(err)
    assert len(llm_server.completions) == 1  # auth is not retried


async def test_a_mid_stream_failure_and_retry_returns_only_the_real_answer(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script(
        [
            cut_mid_stream(3, text_reply("Partial answer that never ends", chunk_size=4)),
            text_reply("The real answer."),
        ]
    )
    async with Agent() as agent:
        events = [e async for e in agent.stream("q")]
    assert any(isinstance(e, Retrying) for e in events)
    assert events[-1].outcome == "final" and events[-1].content == "The real answer."
    assert len(llm_server.completions) == 2


async def test_retries_exhausted_raise_the_transient_kind(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([error(503, "try later")] * 2)
    async with Agent() as agent:
        with pytest.raises(AgentError) as info:
            await agent.process_direct("hi")
    assert info.value.outcome == "error" and info.value.kind == "server"


async def test_confirm_answers_a_real_tool_call(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()  # a named workspace must exist
    llm_server.script(
        [
            tool_call_reply("write_file", {"path": "out.txt", "content": "from the model"}),
            text_reply("Written."),
        ]
    )
    asked = []

    async def confirm(req):  # type: ignore[no-untyped-def]
        asked.append((req.name, req.arguments["path"]))
        return "allow"

    async with Agent(workspace=ws, confirm=confirm) as agent:
        assert await agent.process_direct("write it") == "Written."
    assert asked == [("write_file", "out.txt")]
    assert (ws / "out.txt").read_text() == "from the model"
    tool_result = llm_server.completions[1].body["messages"][-1]
    assert tool_result["role"] == "tool"


async def test_cancelling_the_task_records_the_turn_and_raises_cancelled(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([keep_alive_forever(2, text_reply("Words before the stall", chunk_size=3))])
    seen: list[object] = []
    async with Agent() as agent:

        async def consume() -> None:
            async for event in agent.stream("talk"):
                seen.append(event)

        task = asyncio.create_task(consume())
        await until(lambda: any(isinstance(e, TextDelta) for e in seen), "the first text")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen[-1].outcome == "cancelled"
        # The Agent is free again and the session consistent: the next turn goes through.
        llm_server.script([text_reply("Back again.")])
        assert await agent.process_direct("again", session=agent.session) == "Back again."
    msgs = read_messages(session_files(configured_home)[0])
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert msgs[1].get("interrupted") is True and msgs[1]["content"].startswith("Wor")


async def test_a_timeout_around_process_direct_is_a_timeout(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    """The stall never ends, so any bound fires: the timeout, not an AgentError."""
    llm_server.script([keep_alive_forever(1)])
    async with Agent() as agent:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(agent.process_direct("talk"), 1.0)
        llm_server.script([text_reply("fine")])
        assert await agent.process_direct("again", session=agent.session) == "fine"


def test_one_agent_across_event_loops(configured_home: Path, llm_server: OpenAITestServer) -> None:
    """Each asyncio.run gets a working client (nothing bound to the first loop)."""
    llm_server.script([text_reply("one"), text_reply("two")])
    agent = Agent()
    try:
        assert asyncio.run(agent.process_direct("a")) == "one"
        assert asyncio.run(agent.process_direct("b", session=agent.session)) == "two"
    finally:
        agent.close()


async def test_the_session_lock_is_shared_with_the_console_script(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("held")])
    agent = Agent()
    await agent.process_direct("mine")
    key = agent.session
    busy = await asyncio.to_thread(run_cli, configured_home, "agent", "-m", "x", "-s", key)
    assert busy.returncode == 1 and "in use" in busy.stderr.lower(), busy.stderr
    agent.close()
    llm_server.script([text_reply("resumed by the CLI")])
    res = await asyncio.to_thread(run_cli, configured_home, "agent", "-m", "and you?", "-s", key)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "resumed by the CLI\n"
    sent = as_stored(llm_server.completions[-1].body["messages"])
    assert [m.get("content") for m in sent[1:]] == ["mine", "held", "and you?"]


def test_a_library_session_resumes_in_the_cli_json_channel(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("from the library")])
    with_agent = Agent()
    try:
        asyncio.run(with_agent.process_direct("start here"))
    finally:
        with_agent.close()
    llm_server.script([text_reply("from --json")])
    line = json.dumps({"type": "message", "content": "continue", "session": "latest"}) + "\n"
    res = run_cli(configured_home, "agent", "--json", input=line)
    assert res.returncode == 0, res.stderr
    [done] = [json.loads(x) for x in res.stdout.splitlines() if '"turn_finished"' in x]
    assert done["session"] == with_agent.session and done["content"] == "from --json"


async def test_agent_reads_the_environment_like_the_cli(
    picobot_home: Path, llm_server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No config file: the model, base URL and key come from PICOBOT_* and OPENAI_API_KEY."""
    monkeypatch.setenv("PICOBOT_AGENTS__DEFAULTS__MODEL", "openai/env-model")
    monkeypatch.setenv("PICOBOT_PROVIDERS__OPENAI__API_BASE", llm_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    llm_server.script([text_reply("from the environment")])
    async with Agent() as agent:
        assert agent.model == "openai/env-model"
        assert await agent.process_direct("hi") == "from the environment"
    [req] = llm_server.completions
    assert req.body["model"] == "env-model"
    assert req.headers.get("authorization") == f"Bearer {SECRET}"


async def test_three_failures_across_turns_stop_the_agent_until_it_is_reset(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    """maxConsecutiveFailures counts failed calls across turns: the library raises
    too_many_failures at the limit and calls no model after it."""
    cfg = json.loads((configured_home / "config.json").read_text())
    cfg["agents"]["defaults"].update(maxRetries=0, maxConsecutiveFailures=3)
    (configured_home / "config.json").write_text(json.dumps(cfg))
    llm_server.script([error(503, "try later")] * 3 + [text_reply("back again")])
    async with Agent() as agent:
        kinds = []
        for _ in range(4):
            with pytest.raises(AgentError) as info:
                await agent.process_direct("q", session=agent.session)
            kinds.append(info.value.kind)
        assert kinds == ["server", "server", "too_many_failures", "too_many_failures"]
        assert len(llm_server.completions) == 3  # the stopped agent sent nothing
        assert agent.stopped
        agent.reset_failures()
        assert not agent.stopped
        assert await agent.process_direct("again", session=agent.session) == "back again"
