"""The library API (`from picobot_tui import Agent, AgentError`) against the offline demo
model: light import, the README's example run as written, sessions, errors, approvals."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from picobot_tui import Agent, AgentError
from picobot_tui.core.events import ApprovalRequested, TurnFinished, TurnStarted
from tests.conftest import INSTANT_DEMO
from tests.core.test_import_hygiene import loaded_after

README = Path(__file__).resolve().parents[2] / "README.md"
HEAVY = ("litellm", "textual", "pydantic_settings", "pydantic", "rich", "typer")


pytestmark = pytest.mark.usefixtures("keep_picobot_logging")


def test_importing_the_package_and_the_api_names_stays_light() -> None:
    code = (
        "import sys, picobot_tui\n"
        "from picobot_tui import Agent, AgentError\n"
        "assert Agent.__module__ == 'picobot_tui.api'\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    assert loaded_after(code) == "[]"


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    import picobot_tui

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        picobot_tui.Nope  # noqa: B018


def readme_example() -> str:
    """The first python block of the README's "Use as a library" section."""
    text = README.read_text()
    section = text.split("\n## Use as a library\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the section has no python example"
    return match.group(1)


def test_the_readme_example_runs_as_written(picobot_home: Path, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    res = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={
            **{k: v for k, v in __import__("os").environ.items() if not k.endswith("_API_KEY")},
            "PICOBOT_HOME": str(picobot_home),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            INSTANT_DEMO[0]: INSTANT_DEMO[1],
        },
    )
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "The workspace listing came back" in out  # the demo's answer, after list_dir
    key = re.search(r"session: (lib:\S+)", out)
    assert key, out
    assert "[approve?] exec: $ ls" in out
    assert "exec: ok" in out and "outcome: final" in out
    assert "AgentError: error session" in out
    # The session is a real one: the CLI lists it, with both turns.
    files = sorted((picobot_home / "sessions").glob("lib_*.jsonl"))
    assert len(files) == 1
    lines = [json.loads(x) for x in files[0].read_text().splitlines()]
    users = [m["content"] for m in lines if m.get("role") == "user"]
    assert users == ["hello", "run ls"]


async def test_process_direct_starts_a_new_session_each_time_unless_told(
    picobot_home: Path,
) -> None:
    async with Agent(model="demo") as agent:
        assert agent.session is None
        first = await agent.process_direct("one")
        key1 = agent.session
        assert "demo model" not in first and "workspace listing" in first
        await agent.process_direct("two")
        key2 = agent.session
        assert key1 != key2 and key1.startswith("lib:") and key2.startswith("lib:")
        await agent.process_direct("three", session=key1)
        assert agent.session == key1
        await agent.process_direct("four", session="latest")
        assert agent.session == key1  # the most recently updated one
    store_files = {p.name for p in (picobot_home / "sessions").glob("lib_*.jsonl")}
    assert store_files == {k.replace(":", "_") + ".jsonl" for k in (key1, key2)}


async def test_stream_yields_the_typed_events(picobot_home: Path) -> None:
    async with Agent(model="demo") as agent:
        events = [e async for e in agent.stream("hi")]
    assert isinstance(events[0], TurnStarted)
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "final"
    assert events[-1].session == agent.session
    kinds = [e.type for e in events]
    assert "text_delta" in kinds and "tool_call_finished" in kinds


async def test_without_confirm_ask_refuses(picobot_home: Path) -> None:
    async with Agent(model="demo") as agent:
        events = [e async for e in agent.stream("run touch made-it")]
    [req] = [e for e in events if isinstance(e, ApprovalRequested)]
    assert req.name == "exec"
    [done] = [e for e in events if e.type == "tool_call_finished"]
    assert done.status == "denied"
    assert not (agent.workspace / "made-it").exists()


@pytest.mark.parametrize(
    ("answer", "status"),
    [(True, "ok"), ("allow", "ok"), ("allow_session", "ok"), (False, "denied"), ("deny", "denied"),
     ("maybe", "denied"), (None, "denied"), ("raise", "denied")],
)  # fmt: skip
async def test_confirm_decides(picobot_home: Path, answer: object, status: str) -> None:
    asked: list[ApprovalRequested] = []

    async def confirm(req: ApprovalRequested) -> object:
        asked.append(req)
        if answer == "raise":
            raise RuntimeError("a broken callback")
        return answer

    async with Agent(model="demo", confirm=confirm) as agent:  # type: ignore[arg-type]
        events = [e async for e in agent.stream("run touch made-it")]
    assert [r.name for r in asked] == ["exec"]
    [done] = [e for e in events if e.type == "tool_call_finished"]
    assert done.status == status
    assert (agent.workspace / "made-it").exists() == (status == "ok")


async def test_approval_overrides_the_config(picobot_home: Path, tmp_path: Path) -> None:
    async def never(req: ApprovalRequested) -> bool:
        raise AssertionError("auto must not ask")

    ws = tmp_path / "proj"
    ws.mkdir()  # a named workspace must exist, as with --workspace
    async with Agent(model="demo", approval="auto", workspace=ws, confirm=never) as agent:
        assert agent.workspace == ws.resolve()
        await agent.process_direct("run touch made-it")
    assert (ws / "made-it").exists()
    async with Agent(model="demo", approval="readonly", workspace=ws) as agent:
        events = [e async for e in agent.stream("run touch second")]
    assert [e.status for e in events if e.type == "tool_call_finished"] == ["denied"]


def test_a_bad_approval_value_is_a_value_error(picobot_home: Path) -> None:
    with pytest.raises(ValueError, match="approval must be"):
        Agent(model="demo", approval="sometimes")  # type: ignore[arg-type]


def test_config_problems_raise_agent_error_kind_config(picobot_home: Path) -> None:
    (picobot_home / "config.json").write_text('{"agents": {"defaults": {"maxToolIterations": "x"')
    with pytest.raises(AgentError) as info:
        Agent(model="demo")
    assert (info.value.outcome, info.value.kind) == ("error", "config")
    (picobot_home / "config.json").write_text(
        json.dumps({"agents": {"defaults": {"tokenBudget": 1000}}})
    )
    with pytest.raises(AgentError, match="minimum") as info:
        Agent(model="demo")
    assert info.value.kind == "config"
    (picobot_home / "config.json").write_text("{}")
    with pytest.raises(AgentError, match="(?i)key") as info:
        Agent(model="openai/gpt-4o-mini")  # no key anywhere (the fixture clears them)
    assert info.value.kind == "config"


async def test_a_message_over_the_budget_raises_budget_exhausted(picobot_home: Path) -> None:
    (picobot_home / "config.json").write_text(
        json.dumps({"agents": {"defaults": {"tokenBudget": 5000}}})
    )
    async with Agent(model="demo") as agent:
        with pytest.raises(AgentError) as info:
            await agent.process_direct("word " * 8000)
    err = info.value
    assert (err.outcome, err.kind) == ("budget_exhausted", "budget_exhausted")
    assert err.session == agent.session and err.content


async def test_max_iterations_raises(picobot_home: Path) -> None:
    (picobot_home / "config.json").write_text(
        json.dumps({"agents": {"defaults": {"maxToolIterations": 1}}})
    )
    async with Agent(model="demo", approval="auto") as agent:
        with pytest.raises(AgentError) as info:
            await agent.process_direct("hello")  # list_dir, then the summary would be call 2
    assert (info.value.outcome, info.value.kind) == ("max_iterations", "max_iterations")


async def test_an_unknown_session_raises_kind_session(picobot_home: Path) -> None:
    async with Agent(model="demo") as agent:
        with pytest.raises(AgentError) as info:
            await agent.process_direct("hi", session="no-such")
        assert info.value.kind == "session" and info.value.outcome == "error"
        assert str(info.value).count("picobot sessions list") == 1
        with pytest.raises(AgentError, match="no 'latest'"):
            await agent.process_direct("hi", session="latest")


async def test_an_empty_message_is_a_value_error(picobot_home: Path) -> None:
    async with Agent(model="demo") as agent:
        with pytest.raises(ValueError, match="empty"):
            await agent.process_direct("  ")


async def test_a_closed_agent_refuses_turns_and_unlocks(picobot_home: Path) -> None:
    agent = Agent(model="demo")
    await agent.process_direct("hi")
    key = agent.session
    agent.close()
    with pytest.raises(AgentError) as info:
        await agent.process_direct("again", session=key)
    assert info.value.kind == "closed"
    # The lock is free: a second Agent (or the CLI) can resume it.
    async with Agent(model="demo") as other:
        await other.process_direct("resumed", session=key)
        assert other.session == key


async def test_two_agents_cannot_hold_one_session(picobot_home: Path) -> None:
    async with Agent(model="demo") as a, Agent(model="demo") as b:
        await a.process_direct("hi")
        with pytest.raises(AgentError) as info:
            await b.process_direct("me too", session=a.session)
        assert info.value.kind == "session" and "already open" in str(info.value)
        await a.process_direct("still mine", session=a.session)


async def test_one_turn_at_a_time(picobot_home: Path) -> None:
    async with Agent(model="demo") as agent:
        events = agent.stream("slowly")
        first = await events.__anext__()
        assert isinstance(first, TurnStarted)
        with pytest.raises(AgentError) as info:
            await agent.process_direct("meanwhile")
        assert info.value.kind == "busy"
        rest = [e async for e in events]
        assert rest[-1].outcome == "final"
        assert await agent.process_direct("now") != ""


async def test_breaking_out_of_stream_cancels_the_turn_and_frees_the_agent(
    picobot_home: Path,
) -> None:
    async with Agent(model="demo") as agent:
        async for event in agent.stream("hello"):
            if event.type == "text_delta":
                break
        key = agent.session
        # No aclosing, no await: the next turn waits for asyncio's finalizer to close it.
        assert await agent.process_direct("next", session=key)
        async for event in agent.stream("third", session=key):
            if event.type == "text_delta":
                break
    # ... and leaving `async with` lets the third one close before the session is.
    [path] = (picobot_home / "sessions").glob("lib_*.jsonl")
    msgs = [json.loads(x) for x in path.read_text().splitlines()[1:]]
    interrupted = [m for m in msgs if m.get("interrupted")]
    assert len(interrupted) == 2
    assert [m["content"] for m in msgs if m["role"] == "user"] == ["hello", "next", "third"]
