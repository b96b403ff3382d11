"""Budget and compaction through the real console script against the local server: what
the provider receives (request bodies), the session file, the events and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from picobot_tui.core.budget import estimate_text
from tests.headless.conftest import read_messages, run_cli, session_files
from tests.reliability.support import Proc, write_config
from tests.support.openai_server import OpenAITestServer, Reply, text_reply
from tests.support.openai_steps import tool_call_reply
from tests.support.sent import as_stored, words


def is_summary_call(body: dict[str, Any]) -> bool:
    last = body["messages"][-1]
    return not body.get("tools") and last["role"] == "user" and "summary" in last["content"]


def model(summary: str = "THE-SUMMARY", ratio: float = 1.0) -> Any:
    """Answers "ok" (or `summary` when asked for one), reporting ratio x chars/4 of the body
    as prompt tokens, like a provider whose tokens are denser than chars/4."""

    def step(body: dict[str, Any]) -> Reply:
        raw = estimate_text(json.dumps(body["messages"])) + estimate_text(
            json.dumps(body.get("tools") or [])
        )
        text = summary if is_summary_call(body) else "ok"
        return text_reply(text, usage=(max(1, int(raw * ratio)), 3))

    return step


def bodies(server: OpenAITestServer) -> list[dict[str, Any]]:
    return [r.body for r in server.completions]


def test_huge_message_at_a_small_budget_never_reaches_the_model_without_it(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    """Wrong-today 1: the model was called with the system prompt only and exit was 0."""
    write_config(picobot_home, llm_server.url, tokenBudget=5000)
    llm_server.default = model()
    question = "What does this log say? " + "L" * 30_000
    res = run_cli(picobot_home, "agent", "-m", question)
    assert res.returncode == 1, res.stderr
    assert "too big" in res.stderr + res.stdout and "5,000" in res.stderr + res.stdout
    for body in bodies(llm_server):  # none, or only ones that carry the question
        assert body["messages"][-1]["content"] == question
    assert bodies(llm_server) == []
    stored = read_messages(session_files(picobot_home)[0])
    assert stored[0]["content"] == question and "too big" in stored[-1]["content"]


def test_budget_below_the_fixed_cost_is_a_config_error(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    """Wrong-today 11: accepted, then every turn failed."""
    write_config(picobot_home, llm_server.url, tokenBudget=1200)
    res = run_cli(picobot_home, "agent", "-m", "hi")
    assert res.returncode == 2
    assert "tokenBudget is 1,200" in res.stderr and "the minimum is" in res.stderr
    assert "Traceback" not in res.stderr and bodies(llm_server) == []


def test_json_session_compacts_with_a_summary_and_a_resume_sees_it(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    write_config(picobot_home, llm_server.url, tokenBudget=8000)
    llm_server.default = model(ratio=2.0)  # and real tokens at twice chars/4
    proc = Proc(picobot_home, ["agent", "--json"], stdin=True)
    for i in range(10):
        proc.send({"type": "message", "content": f"question {i} " + "w" * 1500})
    proc.close_stdin()
    assert proc.finish() == 0, proc.stderr
    events = proc.events()
    outcomes = [e["outcome"] for e in events if e["type"] == "turn_finished"]
    assert outcomes == ["final"] * 10
    done = [e for e in events if e["type"] == "history_compressed"]
    assert done and all(e["strategy"] == "summarize" for e in done)
    assert done[0]["summary"] == "THE-SUMMARY" and done[0]["extra_tokens"] > 0
    sent = bodies(llm_server)
    summaries = [b for b in sent if is_summary_call(b)]
    assert len(summaries) == len(done)
    main = [b for b in sent if not is_summary_call(b)]
    assert len(main) == 10
    for i, body in enumerate(main):
        assert body["messages"][-1]["content"].startswith(f"question {i} ")
        # Under the budget in the provider's own tokens (2x chars/4).
        assert 2 * estimate_text(json.dumps(body["messages"])) < 8000
    after = main[-1]["messages"]
    labelled = [m for m in after if "THE-SUMMARY" in str(m.get("content"))]
    assert len(labelled) == 1 and labelled[0]["role"] == "system"
    # The file keeps every original message and the compaction records.
    path = session_files(picobot_home)[0]
    stored = read_messages(path)
    assert len([m for m in stored if "compaction" not in m]) == 20
    assert len([m for m in stored if "compaction" in m]) == len(done)
    # A resume sends the same context: the summary, then the recent messages.
    llm_server.clear()
    key = next(e["session"] for e in events if e["type"] == "turn_finished")
    res = run_cli(picobot_home, "agent", "-m", "and now?", "-s", key)
    assert res.returncode == 0, res.stderr
    resumed = bodies(llm_server)[-1]["messages"]
    assert resumed[1:-1] == [
        {k: v for k, v in m.items() if k in ("role", "content", "tool_calls", "tool_call_id")}
        for m in as_stored(after[1:])
    ] + [{"role": "assistant", "content": "ok"}]
    assert as_stored(resumed)[-1] == {"role": "user", "content": "and now?"}


def test_max_history_messages_bounds_a_long_json_process(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    """Wrong-today 10: 59 messages were sent on turn 30 with the default 50."""
    write_config(picobot_home, llm_server.url, maxHistoryMessages=10, compaction="drop")
    llm_server.default = model()
    proc = Proc(picobot_home, ["agent", "--json"], stdin=True)
    for i in range(30):
        proc.send({"type": "message", "content": f"u{i}"})
    proc.close_stdin()
    assert proc.finish() == 0, proc.stderr
    sent = bodies(llm_server)
    assert len(sent) == 30
    assert max(len(b["messages"]) - 1 for b in sent) <= 10  # without the system prompt
    assert words(sent[-1]["messages"][-1]) == "u29"
    assert sent[-1]["messages"][1]["content"] == "u0"  # the first exchange stays
    assert len(read_messages(session_files(picobot_home)[0])) == 60


def test_a_long_json_process_keeps_turn_1_with_its_own_answer(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    """Round three, 12: bounding a history already bounded took the last answer before the
    next question as turn 1's, so TURN-1 went out paired with ANSWER-4 (a resume paired them
    right). Each turn has a tool round, so the kept older messages start inside a turn."""
    write_config(picobot_home, llm_server.url, maxHistoryMessages=6, compaction="drop")

    def step(body: dict[str, Any]) -> Reply:
        msgs = body["messages"]
        turn = words([m for m in msgs if m["role"] == "user"][-1]).split("-")[-1]
        if msgs[-1]["role"] == "user":
            return tool_call_reply("list_dir", {"path": "."}, id=f"call_{turn}")
        return text_reply(f"ANSWER-{turn}")

    llm_server.default = step
    proc = Proc(picobot_home, ["agent", "--json"], stdin=True)
    for i in range(1, 9):
        proc.send({"type": "message", "content": f"TURN-{i}"})
    proc.close_stdin()
    assert proc.finish() == 0, proc.stderr
    sent = bodies(llm_server)
    assert len(sent) == 16
    checked = 0
    for body in sent:
        msgs = body["messages"][1:]  # without the system prompt
        assert len(msgs) <= 6
        users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
        if words(msgs[0]) != "TURN-1" or len(users) < 2:
            continue  # turn 1 is the current one
        # What the request pairs with TURN-1: the first text before the next question (a
        # later turn's tail may follow it: the bound keeps whole tool rounds, not turns).
        paired = [
            words(m)
            for m in msgs[1 : users[1]]
            if m["role"] == "assistant" and not m.get("tool_calls")
        ]
        assert paired[0] == "ANSWER-1", msgs
        checked += 1
    assert checked == 14  # every call after turn 1 kept the first exchange


def test_json_440_kb_message_at_the_default_budget_stops_before_any_call(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    """Wrong-today 1, the --json form: the model was asked with no question and exit was 0."""
    write_config(picobot_home, llm_server.url)
    llm_server.default = model()
    proc = Proc(picobot_home, ["agent", "--json"], stdin=True)
    proc.send({"type": "message", "content": "Summarise: " + "p" * 440_000})
    proc.send({"type": "message", "content": "a short one"})
    proc.close_stdin()
    proc.finish()
    finished = [e for e in proc.events() if e["type"] == "turn_finished"]
    assert finished[0]["outcome"] == "budget_exhausted"
    assert "440,011 characters" in finished[0]["content"] and "128,000" in finished[0]["content"]
    # No request went out without its question; the next message still works.
    sent = bodies(llm_server)
    assert all(words(b["messages"][-1]) == "a short one" for b in sent)
    assert [e["outcome"] for e in finished[1:]] in ([], ["final"])
