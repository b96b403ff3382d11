"""The agent loop against the in-process scripted model: exact events and session effects."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from picobot_tui.config.settings import Settings, load_settings
from picobot_tui.core import events as ev
from picobot_tui.core.approval import ApprovalRequest
from picobot_tui.core.llm.model import LLMError, ResentChunk, TextChunk, ToolCallChunk, UsageChunk
from picobot_tui.core.llm.scripted import ScriptedModel, Step, text, tool_call
from picobot_tui.core.turn_state import STUCK_MESSAGE
from picobot_tui.run.runtime import Runtime, build_runtime
from tests.core.test_budget import assert_valid
from tests.support.sent import as_stored, words


def make(
    steps: Sequence[Step] = (),
    *,
    approval: str = "auto",
    confirm: Any = None,
    default: Step | None = None,
    delay: float = 0.0,
    **defaults: Any,
) -> tuple[Runtime, ScriptedModel, list[float]]:
    settings: Settings = load_settings()[0]
    settings.tools.approval = approval  # type: ignore[assignment]
    for key, value in defaults.items():
        setattr(settings.agents.defaults, key, value)
    model = ScriptedModel(steps, default=default, delay=delay)
    rt = build_runtime(settings, model="scripted/test", model_client=model, confirm=confirm)
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    rt.loop.sleep = fake_sleep
    return rt, model, slept


async def run(rt: Runtime, message: str, session: Any = None) -> tuple[list[Any], Any]:
    session = session or rt.store.open(rt.store.new_key(), model="scripted/test")
    out = [e async for e in rt.loop.run_turn(session, message)]
    return out, session


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def stored(rt: Runtime, key: str) -> list[dict[str, Any]]:
    return rt.store.load_messages(key)


async def test_text_turn_event_sequence_and_session() -> None:
    rt, model, _ = make([text("Hello", " world", prompt_tokens=42, completion_tokens=7)])
    events, session = await run(rt, "hi")
    assert types(events) == [
        "turn_started",
        "budget",
        "text_delta",
        "text_delta",
        "usage",
        "turn_finished",
    ]
    usage = events[4]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (42, 7, False)
    assert events[-1].outcome == "final" and events[-1].content == "Hello world"
    msgs = stored(rt, session.key)
    assert [(m["role"], m["content"]) for m in msgs] == [
        ("user", "hi"),
        ("assistant", "Hello world"),
    ]
    sent = model.requests[0].messages
    assert sent[0]["role"] == "system" and as_stored(sent)[-1] == {"role": "user", "content": "hi"}


async def test_tool_loop_feeds_result_back(picobot_home: Path) -> None:
    rt, model, _ = make([tool_call("list_dir", {"path": "."}, call_id="c1"), text("done")])
    (rt.settings.workspace_path / "hello.txt").write_text("x")
    events, session = await run(rt, "look")
    names = types(events)
    assert names.index("tool_call_delta") < names.index("tool_call_started")
    started = next(e for e in events if e.type == "tool_call_started")
    finished = next(e for e in events if e.type == "tool_call_finished")
    assert started.arguments == {"path": "."} and started.iteration == 1
    assert finished.ok and finished.status == "ok" and "hello.txt" in finished.result
    second = model.requests[1].messages
    assert second[-2]["tool_calls"][0]["id"] == "c1"
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "c1"
    assert_valid([m for m in second if m["role"] != "system"])
    assert events[-1].outcome == "final"
    roles = [m["role"] for m in stored(rt, session.key)]
    assert roles == ["user", "assistant", "tool", "assistant"]


async def test_max_iterations_stops_with_message() -> None:
    counter = iter(range(100))

    def always_call(_req: Any) -> list[Any]:
        return tool_call("list_dir", {"path": f"./{next(counter)}"}, call_id=f"c{next(counter)}")

    rt, model, _ = make(default=always_call, max_tool_iterations=3)
    events, session = await run(rt, "loop forever")
    assert events[-1].outcome == "max_iterations"
    assert "maxToolIterations" in events[-1].content
    assert len(model.requests) == 3
    assert_valid([m for m in stored(rt, session.key) if m["role"] != "system"])


async def test_malformed_arguments_become_a_tool_error() -> None:
    bad = [ToolCallChunk(0, "c1", "read_file", '{"path": "a.txt"'), UsageChunk(1, 1)]
    rt, model, _ = make([bad, text("sorry")])
    events, _ = await run(rt, "read")
    finished = next(e for e in events if e.type == "tool_call_finished")
    assert not finished.ok and "JSON" in finished.result
    assert events[-1].outcome == "final"
    assert model.requests[1].messages[-1]["content"] == finished.result


async def test_stuck_detection_injects_system_message() -> None:
    same = {"path": "."}
    rt, model, _ = make(
        [
            tool_call("list_dir", same, call_id="a"),
            tool_call("list_dir", same, call_id="b"),
            text("ok, different approach"),
        ]
    )
    events, session = await run(rt, "go")
    stuck = [e for e in events if e.type == "stuck"]
    assert len(stuck) == 1 and stuck[0].message == STUCK_MESSAGE
    third = model.requests[2].messages
    assert third[-1] == {"role": "system", "content": STUCK_MESSAGE}
    assert_valid([m for m in third if m["role"] != "system"])


async def test_transient_error_retried_after_backoff() -> None:
    err = LLMError("rate limited", kind="rate_limit", transient=True, status=429)
    rt, _, slept = make([[err], text("fine")])
    events, _ = await run(rt, "hi")
    retry = next(e for e in events if e.type == "retrying")
    assert (retry.attempt, retry.delay_s, retry.kind) == (1, 2.0, "rate_limit")
    assert slept == [2.0]
    assert events[-1].outcome == "final"


async def test_retry_after_is_honoured() -> None:
    err = LLMError("slow down", kind="rate_limit", transient=True, retry_after=7.0)
    rt, _, slept = make([[err], text("fine")])
    await run(rt, "hi")
    assert slept == [7.0]


async def test_default_policy_gives_up_after_one_retry() -> None:
    err = LLMError("503", kind="server", transient=True, status=503)
    rt, model, slept = make([[err], [err], text("never")])
    events, _ = await run(rt, "hi")
    assert slept == [2.0] and len(model.requests) == 2
    error = next(e for e in events if e.type == "error")
    assert "gave up after 2" in error.message
    assert events[-1].outcome == "error"


async def test_max_retries_bounds_the_attempts_of_one_call() -> None:
    """maxConsecutiveFailures counts failed calls, not attempts: maxRetries=10 retries ten
    times whatever that limit is."""
    err = LLMError("boom", kind="server", transient=True)
    rt, model, slept = make([[err]] * 5 + [text("sixth time")], max_retries=10)
    events, _ = await run(rt, "hi")
    assert len(model.requests) == 6 and slept == [2.0, 4.0, 8.0, 16.0, 32.0]
    assert events[-1].outcome == "final" and rt.loop.failures.count == 0


async def test_consecutive_failures_across_turns_stop_the_agent() -> None:
    """Three turns whose call fails after its retry: the third ends with too_many_failures;
    the loop then refuses a turn without calling the model or storing the message, until a
    front end resets it."""
    err = LLMError("503 down", kind="server", transient=True, status=503)
    rt, model, _ = make([[err]] * 6 + [text("back")])
    session = None
    kinds = []
    for i in range(3):
        events, session = await run(rt, f"q{i}", session)
        assert events[-1].outcome == "error"
        kinds.append([e.kind for e in events if e.type == "error"])
    assert kinds == [["server"], ["server"], ["server", "too_many_failures"]]
    assert len(model.requests) == 6 and rt.loop.failures.stopped
    stop = next(e for e in events if e.type == "error" and e.kind == "too_many_failures")
    assert "3 model calls in a row failed" in stop.message and "503 down" in stop.message
    assert "maxConsecutiveFailures" in stop.message
    before = stored(rt, session.key)
    events, _ = await run(rt, "q3", session)
    assert [e.type for e in events] == ["error", "turn_finished"]
    assert events[0].kind == "too_many_failures" and events[-1].outcome == "error"
    assert len(model.requests) == 6 and stored(rt, session.key) == before
    rt.loop.failures.reset()
    events, _ = await run(rt, "q4", session)
    assert events[-1].outcome == "final" and events[-1].content == "back"


async def test_a_message_the_user_sends_after_the_stop_calls_the_model_again() -> None:
    """Issue 21 point 9: the stop holds for waiting messages (a queue, `--json` input), but
    a message the user sends after it (`user_sent`: the TUI's prompt, an ACP prompt) starts
    afresh, as the hint asks; it is not stuck until some front end resets the counter."""
    err = LLMError("bad key", kind="auth", transient=False)
    rt, model, _ = make([[err]] * 3 + [text("back")])
    session = None
    for i in range(3):
        events, session = await run(rt, f"q{i}", session)
    assert rt.loop.failures.stopped and len(model.requests) == 3
    queued = [e async for e in rt.loop.run_turn(session, "queued")]
    assert queued[0].kind == "too_many_failures" and len(model.requests) == 3
    sent = [e async for e in rt.loop.run_turn(session, "fixed it", user_sent=True)]
    assert len(model.requests) == 4
    assert sent[-1].outcome == "final" and sent[-1].content == "back"
    assert not rt.loop.failures.stopped and rt.loop.failures.count == 0


async def test_a_successful_call_resets_the_failure_count() -> None:
    err = LLMError("bad key", kind="auth", transient=False)
    rt, model, _ = make([[err], [err], text("ok"), [err], [err], text("still going")])
    session = None
    outcomes = []
    for i in range(5):
        events, session = await run(rt, f"q{i}", session)
        outcomes.append(events[-1].outcome)
        assert not [e for e in events if e.type == "error" and e.kind == "too_many_failures"]
    assert outcomes == ["error", "error", "final", "error", "error"]
    assert rt.loop.failures.count == 2 and not rt.loop.failures.stopped


async def test_failures_count_inside_a_tool_turn_too() -> None:
    """A failure after a successful tool round counts once; the tool round's call reset it."""
    err = LLMError("down", kind="server", transient=True)
    rt, model, _ = make([tool_call("list_dir", {"path": "."}), [err], [err]])
    events, _ = await run(rt, "look")
    assert events[-1].outcome == "error" and rt.loop.failures.count == 1


async def test_retry_after_longer_than_max_retry_wait_fails_at_once() -> None:
    err = LLMError(
        "Rate limited by the provider (m, HTTP 429): slow — retry after 3600 s.",
        kind="rate_limit",
        transient=True,
        retry_after=3600.0,
    )
    rt, model, slept = make([[err], text("never")])
    events, _ = await run(rt, "hi")
    assert slept == [] and len(model.requests) == 1
    [error] = [e for e in events if e.type == "error"]
    assert error.kind == "rate_limit"
    assert "wait 3,600 s (~1.0 h)" in error.message and "maxRetryWait (30 s)" in error.message
    assert "Rate limited by the provider" in error.message and "gave up" not in error.message
    assert "maxRetryWait" in error.hint
    assert not [e for e in events if e.type == "retrying"]


async def test_retry_after_up_to_max_retry_wait_is_waited() -> None:
    err = LLMError("slow down", kind="rate_limit", transient=True, retry_after=30.0)
    rt, model, slept = make([[err], text("fine")])
    events, _ = await run(rt, "hi")
    assert slept == [30.0] and events[-1].content == "fine"
    rt, model, slept = make([[err], text("fine")], max_retry_wait=29.5)
    events, _ = await run(rt, "hi")
    assert slept == [] and events[-1].outcome == "error"


async def test_a_request_the_client_sent_again_is_a_call_and_a_retry(
    picobot_home: Path,
) -> None:
    """A ResentChunk (LiteLLM re-sending after a 422) counts as one more model call and
    retry in the trace and shows as a `retrying` event."""
    rt, model, slept = make([[ResentChunk("sent again"), TextChunk("ok"), UsageChunk(5, 1)]])
    events, _ = await run(rt, "hi")
    [retrying] = [e for e in events if e.type == "retrying"]
    assert (retrying.kind, retrying.delay_s, retrying.message) == ("bad_request", 0.0, "sent again")
    assert events[-1].outcome == "final" and slept == []
    trace = json.loads((picobot_home / "data/traces/traces.jsonl").read_text().splitlines()[-1])
    assert (trace["llm_calls"], trace["retries"]) == (2, 1)


async def test_non_transient_error_is_immediate_and_session_stays_usable() -> None:
    err = LLMError("bad key", kind="auth", transient=False, hint="set OPENAI_API_KEY")
    rt, _, slept = make([[TextChunk("par"), err], text("recovered")])
    events, session = await run(rt, "hi")
    error = next(e for e in events if e.type == "error")
    assert (error.kind, error.hint) == ("auth", "set OPENAI_API_KEY")
    assert slept == []
    events2, _ = await run(rt, "again", session)
    assert events2[-1].outcome == "final"
    msgs = stored(rt, session.key)
    assert msgs[1]["content"] == "par" and msgs[1]["interrupted"] is True


async def test_budget_compression_emits_event_and_keeps_pairs() -> None:
    big = "x" * 2400  # ~600 tokens each
    steps: list[Step] = []
    for i in range(6):
        steps.append(tool_call("list_dir", {"path": f"./{i}"}, call_id=f"c{i}"))
        steps.append(text(big))
    rt, model, _ = make(steps, token_budget=3000, compaction="drop")
    session = None
    compressed = []
    for i in range(6):
        events, session = await run(rt, f"q{i} " + big, session)
        compressed += [e for e in events if e.type == "history_compressed"]
    assert compressed and compressed[0].dropped_messages > 0
    assert compressed[0].after_tokens < compressed[0].before_tokens
    for req in model.requests:
        assert_valid([m for m in req.messages if m["role"] != "system"])
    # The session file keeps everything, plus one record per compaction.
    lines = stored(rt, session.key)
    assert len([m for m in lines if "compaction" not in m]) == 6 * 4
    assert len([m for m in lines if "compaction" in m]) == len(compressed)


async def test_budget_exhausted_gives_clear_message() -> None:
    rt, model, _ = make([text("never")], token_budget=1000)
    events, _ = await run(rt, "x" * 8000)
    assert events[-1].outcome == "budget_exhausted"
    assert "tokenBudget" in events[-1].content
    assert model.requests == []


async def test_history_bound_on_resume() -> None:
    rt, model, _ = make([text("fresh")], max_history_messages=10)
    session = rt.store.open(rt.store.new_key(), model="m")
    for i in range(40):
        session.append({"role": "user", "content": f"u{i}"})
        session.append({"role": "assistant", "content": f"a{i}"})
    session.close()
    resumed = rt.store.open(session.key, create=False)
    await run(rt, "new question", resumed)
    sent = model.requests[0].messages
    assert sent[1]["content"] == "u0" and sent[2]["content"] == "a0"
    assert sent[-2]["content"] == "a39" and words(sent[-1]) == "new question"
    assert len(sent) <= 1 + 10 + 1


async def test_resume_after_kill_mid_tool_sends_valid_conversation() -> None:
    rt, model, _ = make([text("ok")])
    session = rt.store.open(rt.store.new_key(), model="m")
    session.append({"role": "user", "content": "run it"})
    session.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "k1", "type": "function", "function": {"name": "exec", "arguments": "{}"}}
            ],
        }
    )
    session.close()  # the process "died" here
    resumed = rt.store.open(session.key, create=False)
    await run(rt, "what happened?", resumed)
    sent = [m for m in model.requests[0].messages if m["role"] != "system"]
    assert_valid(sent)
    assert sent[2]["role"] == "tool" and "no result was recorded" in sent[2]["content"]


async def _cancel_after(rt: Runtime, message: str, when: str) -> tuple[list[Any], Any]:
    session = rt.store.open(rt.store.new_key(), model="m")
    seen: list[Any] = []

    async def consume() -> None:
        async for e in rt.loop.run_turn(session, message):
            seen.append(e)

    task = asyncio.create_task(consume())
    while not any(e.type == when for e in seen):
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return seen, session


async def test_cancel_mid_stream_keeps_partial_text() -> None:
    slow = [TextChunk(w) for w in ["one ", "two ", "three ", "four "] * 20]
    rt, _, _ = make([slow], delay=0.02)
    seen, session = await _cancel_after(rt, "talk", "text_delta")
    assert seen[-1].type == "turn_finished" and seen[-1].outcome == "cancelled"
    msgs = stored(rt, session.key)
    assert msgs[-1]["role"] == "assistant" and msgs[-1]["interrupted"] is True
    assert msgs[-1]["content"].startswith("one ")


async def test_cancel_mid_tool_records_cancelled_results() -> None:
    two = [
        ToolCallChunk(0, "e1", "exec", json.dumps({"command": "sleep 5"})),
        ToolCallChunk(1, "e2", "list_dir", "{}"),
        UsageChunk(1, 1),
    ]
    rt, model, _ = make([two, text("after")])
    seen, session = await _cancel_after(rt, "run", "tool_call_started")
    assert seen[-1].outcome == "cancelled"
    msgs = stored(rt, session.key)
    assert_valid(msgs)
    results = {m["tool_call_id"]: m for m in msgs if m["role"] == "tool"}
    assert set(results) == {"e1", "e2"}
    assert all("cancelled" in m["content"] for m in results.values())
    # The next turn sends a valid conversation.
    await run(rt, "again", session)
    assert_valid([m for m in model.requests[-1].messages if m["role"] != "system"])


async def test_approval_deny_allow_session_and_readonly() -> None:
    asked: list[ApprovalRequest] = []
    answers = iter(["deny", "allow_session"])

    async def confirm(req: ApprovalRequest) -> str:
        asked.append(req)
        return next(answers)

    cmd = {"command": "echo hi"}
    rt, model, _ = make(
        [
            tool_call("exec", cmd, call_id="a"),
            tool_call("exec", {"command": "echo one"}, call_id="b"),
            tool_call("exec", {"command": "echo two"}, call_id="c"),
            text("done"),
        ],
        approval="ask",
        confirm=confirm,
    )
    events, _ = await run(rt, "go")
    finished = [e for e in events if e.type == "tool_call_finished"]
    assert [f.status for f in finished] == ["denied", "ok", "ok"]
    assert len(asked) == 2 and asked[0].preview  # the third call was allowed for the session
    assert [e.type for e in events].count("approval_requested") == 2
    assert "Denied" in model.requests[1].messages[-1]["content"]
    assert "two" in finished[2].result


async def test_readonly_policy_and_missing_confirm_refuse() -> None:
    rt, _, _ = make(
        [tool_call("write_file", {"path": "a", "content": "b"}), text("k")], approval="readonly"
    )
    events, _ = await run(rt, "write")
    fin = next(e for e in events if e.type == "tool_call_finished")
    assert fin.status == "denied" and "readonly" in fin.result
    assert not (rt.settings.workspace_path / "a").exists()

    rt2, _, _ = make(
        [tool_call("write_file", {"path": "a", "content": "b"}), text("k")], approval="ask"
    )
    events, _ = await run(rt2, "write")
    fin = next(e for e in events if e.type == "tool_call_finished")
    assert fin.status == "denied"


async def test_trace_line_per_turn(picobot_home: Path) -> None:
    rt, _, _ = make([tool_call("list_dir", {}, call_id="t1"), text("done", prompt_tokens=20)])
    _, session = await run(rt, "trace me")
    lines = rt.settings.traces_path.read_text().splitlines()
    assert len(lines) == 1
    trace = json.loads(lines[0])
    assert trace["session"] == session.key and trace["turn"] == 1
    assert trace["outcome"] == "final" and trace["prompt_tokens"] == 30
    assert trace["tool_calls"][0]["name"] == "list_dir" and trace["tool_calls"][0]["ok"]
    assert trace["duration_ms"] >= 0 and trace["retries"] == 0


async def test_usage_estimated_when_provider_sends_none() -> None:
    rt, _, _ = make([[TextChunk("no usage here")]])
    events, _ = await run(rt, "hi")
    usage = next(e for e in events if e.type == "usage")
    assert usage.estimated and usage.prompt_tokens > 0 and usage.completion_tokens > 0


def test_events_serialise_with_type_first() -> None:
    d = ev.event_to_dict(ev.TextDelta("x"))
    assert list(d) == ["type", "text"] and d["type"] == "text_delta"


async def test_budget_estimate_after_a_call_uses_reported_prompt_tokens() -> None:
    rt, _, _ = make([text("a", prompt_tokens=5000), text("b", prompt_tokens=5100)])
    events, session = await run(rt, "first")
    events2, _ = await run(rt, "second", session)
    budget = next(e for e in events2 if e.type == "budget")
    # 5000 reported for the first call, plus only the two new short messages.
    assert 5000 < budget.estimated_tokens < 5100


async def test_repeated_provider_call_ids_are_made_unique() -> None:
    rt, model, _ = make(
        [
            tool_call("list_dir", {"path": "."}, call_id="call_0"),
            text("one"),
            tool_call("list_dir", {"path": "a"}, call_id="call_0"),
            text("two"),
        ]
    )
    events, session = await run(rt, "first")
    events2, _ = await run(rt, "second", session)
    first = next(e for e in events if e.type == "tool_call_started")
    second = next(e for e in events2 if e.type == "tool_call_started")
    assert first.id == "call_0" and second.id == "call_0-2"
    deltas = {e.id for e in events2 if e.type == "tool_call_delta"}
    assert deltas == {"call_0-2"}
    msgs = stored(rt, session.key)
    assert [m["tool_call_id"] for m in msgs if m["role"] == "tool"] == ["call_0", "call_0-2"]
    assert_valid([m for m in model.requests[-1].messages if m["role"] != "system"])
