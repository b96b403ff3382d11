"""Provider faults scripted on the local server, driven through the real stack in process:
`build_runtime` -> AgentLoop -> LiteLLMClient -> LiteLLM -> HTTP -> the test server.

For every fault:
- the retry policy is what docs/agent.md says: transient faults (429, 5xx, 529, resets, broken
  streams, timeouts) are retried `maxRetries` times (default 1) after `retryBackoff`
  (Retry-After wins); auth, unknown model and context-window errors are not retried;
- the error the user sees names the cause and what to do, and never holds the key;
- the turn's trace line records the outcome, the error and the retries;
- the session file stays consistent (no void partial text, no orphan tool call);
- the next message works and sends a valid conversation.

A few of the same faults go through the console script at the end (exit code, stderr).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.config.settings import load_settings
from picobot_tui.core.events import ErrorEvent, Retrying, TextDelta, TurnFinished
from picobot_tui.run.runtime import Runtime, build_runtime
from tests.reliability.support import (
    KEY,
    Proc,
    Router,
    check_session_file,
    conversation_problems,
    provider_view,
    write_config,
)
from tests.support.openai_server import (
    OpenAITestServer,
    Reply,
    context_window_exceeded,
    cut_mid_stream,
    empty_choices,
    error,
    malformed_chunk,
    overloaded,
    rate_limited,
    reset_before_response,
    slow,
    text_reply,
    tool_call_reply,
)
from tests.support.sent import as_stored

BACKOFF = 0.01
TIMEOUT = 3.0  # requestTimeout for these tests; the "slow" fault waits far longer


@dataclass(frozen=True)
class Fault:
    step: Any
    kind: str
    transient: bool
    cause: str  # words the message must contain
    action: str  # words the hint must contain
    retry_delay: float | None = None  # expected Retrying.delay_s (None: the backoff)


def _long_text() -> Reply:
    return text_reply("partial words that will be cut off before the end", chunk_size=4)


FAULTS: dict[str, Fault] = {
    "429-retry-after": Fault(rate_limited("0.2"), "rate_limit", True, "Rate limited",
                             "retry after 0.2 s", retry_delay=0.2),
    "429-no-retry-after": Fault(rate_limited(None), "rate_limit", True, "Rate limited",
                                "wait a moment"),
    "500": Fault(error(500), "server", True, "server error", "retry in a moment"),
    "502": Fault(error(502), "server", True, "server error", "retry in a moment"),
    # The default 503 body says "The engine is currently overloaded".
    "503": Fault(error(503), "server", True, "provider is overloaded", "retry in a moment"),
    "529-overloaded": Fault(overloaded(), "server", True, "provider is overloaded (openai/"
                            "test-model, HTTP 529)", "retry in a moment"),
    "reset-before-response": Fault(reset_before_response(), "connection", True,
                                   "Could not reach the provider", "apiBase"),
    "reset-mid-stream": Fault(cut_mid_stream(4, _long_text()), "connection", True,
                              "stream broke off", "apiBase"),
    "cut-mid-tool-arguments": Fault(
        cut_mid_stream(3, tool_call_reply("write_file", {"path": "x.txt", "content": "abc" * 40},
                                          parts=8)),
        "connection", True, "stream broke off", "apiBase"),
    "malformed-chunk": Fault(malformed_chunk(), "server", True, "malformed", "retry"),
    # An error event in the middle of the stream (OpenRouter-style): overloaded, not a cut.
    "overloaded-mid-stream": Fault(
        malformed_chunk(_long_text(), at=2, raw='{"error": {"message": "Overloaded", '
                        '"type": "overloaded_error", "code": 529}}'),
        "server", True, "provider is overloaded (openai/test-model): Overloaded",
        "retry in a moment"),
    # Only `choices: []` chunks and no finish_reason: LiteLLM calls the stream incomplete.
    "empty-choices": Fault(empty_choices(), "connection", True, "stream broke off", "retry"),
    # LiteLLM stops a stream after 100 identical chunks (its loop guard): not a network fault.
    "repeated-chunks": Fault(text_reply("again " * 120, chunk_size=6), "server", True,
                             "kept repeating", "retry"),
    "slower-than-timeout": Fault(slow(0, first_byte=30), "timeout", True, "did not answer in time",
                                 "requestTimeout"),
    "401": Fault(error(401), "auth", False, "rejected the API key", "providers.openai.apiKey"),
    "404": Fault(error(404), "not_found", False, "model was not found", "model name"),
    "context-window": Fault(context_window_exceeded(), "context_window", False,
                            "context window", "new session"),
}  # fmt: skip
TRANSIENT = [k for k, f in FAULTS.items() if f.transient]
PERMANENT = [k for k, f in FAULTS.items() if not f.transient]


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as srv:
        yield srv


@pytest.fixture
def runtime(server: OpenAITestServer, picobot_home: Path) -> Iterator[Runtime]:
    server.script([])
    server.clear()
    write_config(picobot_home, server.url, retryBackoff=BACKOFF, requestTimeout=TIMEOUT)
    settings, warnings = load_settings()
    assert not warnings
    rt = build_runtime(settings, model="openai/test-model")
    yield rt
    server.script([])


async def run_turn(rt: Runtime, session: Any, text: str) -> list[Any]:
    return [e async for e in rt.loop.run_turn(session, text)]


def last_trace(home: Path) -> dict[str, Any]:
    lines = (home / "data/traces/traces.jsonl").read_text().splitlines()
    return json.loads(lines[-1])


def assert_consistent(session: Any, *, partial_allowed: bool) -> list[dict[str, Any]]:
    check = check_session_file(session.path, lock=False)
    assert not check.warnings and not check.damaged
    assert conversation_problems(provider_view(check.messages)) == []
    for m in check.messages:
        if m["role"] == "assistant" and m.get("interrupted"):
            assert partial_allowed, m
    return check.messages


async def assert_next_message_works(rt: Runtime, session: Any, server: OpenAITestServer) -> None:
    server.script([text_reply("next one works")])
    events = await run_turn(rt, session, "and now?")
    assert events[-1].outcome == "final" and events[-1].content == "next one works"
    sent = server.last_body["messages"]
    assert conversation_problems(sent) == []
    assert as_stored(sent)[-1] == {"role": "user", "content": "and now?"}
    assert_consistent(session, partial_allowed=True)


@pytest.mark.parametrize("name", TRANSIENT)
async def test_transient_fault_is_retried_once_then_succeeds(name, runtime, server, picobot_home):
    fault = FAULTS[name]
    server.script([fault.step, text_reply("recovered answer")])
    with runtime.store.open(runtime.store.new_key()) as session:
        events = await run_turn(runtime, session, "hello")
        retrying = [e for e in events if isinstance(e, Retrying)]
        assert len(retrying) == 1, events
        r = retrying[0]
        assert (r.attempt, r.max_retries, r.kind) == (1, 1, fault.kind)
        assert r.delay_s == pytest.approx(fault.retry_delay or BACKOFF)
        assert fault.cause.lower() in r.message.lower()
        assert KEY not in r.message
        end = events[-1]
        assert isinstance(end, TurnFinished) and end.outcome == "final"
        assert end.content == "recovered answer"  # text of the failed attempt is void
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        assert len(server.completions) == 2
        # The retried request is the same conversation, valid.
        assert server.completions[1].body["messages"] == server.completions[0].body["messages"]
        trace = last_trace(picobot_home)
        assert (trace["outcome"], trace["retries"], trace["error"]) == ("final", 1, None)
        assert trace["llm_calls"] == 2
        msgs = assert_consistent(session, partial_allowed=False)
        assert [(m["role"], m["content"]) for m in msgs] == [
            ("user", "hello"),
            ("assistant", "recovered answer"),
        ]
        await assert_next_message_works(runtime, session, server)


@pytest.mark.parametrize("name", TRANSIENT)
async def test_transient_fault_twice_gives_a_clear_error(name, runtime, server, picobot_home):
    fault = FAULTS[name]
    server.script([fault.step, fault.step])
    with runtime.store.open(runtime.store.new_key()) as session:
        events = await run_turn(runtime, session, "hello")
        errors = [e for e in events if isinstance(e, ErrorEvent)]
        assert len(errors) == 1
        err = errors[0]
        assert err.kind == fault.kind
        assert fault.cause.lower() in err.message.lower(), err.message
        assert "gave up after 2 failed attempts" in err.message
        assert fault.action.lower() in err.hint.lower(), err.hint
        assert KEY not in err.message + err.hint
        end = events[-1]
        assert isinstance(end, TurnFinished) and end.outcome == "error"
        assert len(server.completions) == 2  # default policy: one retry
        trace = last_trace(picobot_home)
        assert (trace["outcome"], trace["retries"], trace["llm_calls"]) == ("error", 1, 2)
        assert trace["error"] == err.message
        streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
        msgs = assert_consistent(session, partial_allowed=bool(streamed))
        assert msgs[0] == {**msgs[0], "role": "user", "content": "hello"}
        # Nothing but the user message and at most the partial answer of the last attempt.
        assert [m["role"] for m in msgs] in (["user"], ["user", "assistant"])
        await assert_next_message_works(runtime, session, server)


@pytest.mark.parametrize("name", PERMANENT)
async def test_permanent_fault_is_not_retried(name, runtime, server, picobot_home):
    fault = FAULTS[name]
    server.script([fault.step, text_reply("must not be used")])
    with runtime.store.open(runtime.store.new_key()) as session:
        events = await run_turn(runtime, session, "hello")
        assert not [e for e in events if isinstance(e, Retrying)]
        [err] = [e for e in events if isinstance(e, ErrorEvent)]
        assert err.kind == fault.kind
        assert fault.cause.lower() in err.message.lower(), err.message
        assert fault.action.lower() in err.hint.lower(), err.hint
        assert "gave up" not in err.message
        assert KEY not in err.message + err.hint
        assert events[-1].outcome == "error"
        assert len(server.completions) == 1
        trace = last_trace(picobot_home)
        assert (trace["outcome"], trace["retries"], trace["error"]) == ("error", 0, err.message)
        assert_consistent(session, partial_allowed=False)
        server.script([])
        await assert_next_message_works(runtime, session, server)


async def test_more_retries_when_configured(server, picobot_home):
    """maxRetries=3: three retries with doubling backoff, then the answer."""
    write_config(picobot_home, server.url, retryBackoff=BACKOFF, maxRetries=3,
                 maxConsecutiveFailures=5)  # fmt: skip
    settings, _ = load_settings()
    rt = build_runtime(settings, model="openai/test-model")
    server.script([error(503), error(502), rate_limited(None), text_reply("third time lucky")])
    with rt.store.open(rt.store.new_key()) as session:
        events = await run_turn(rt, session, "hi")
    delays = [e.delay_s for e in events if isinstance(e, Retrying)]
    assert delays == pytest.approx([BACKOFF, 2 * BACKOFF, 4 * BACKOFF])
    assert events[-1].content == "third time lucky"
    assert last_trace(picobot_home)["retries"] == 3


async def test_fault_after_a_tool_round_keeps_the_tool_pair(runtime, server, picobot_home):
    """A fault on the call after a tool result: the session keeps call + result, and the
    next message sends them as a valid pair."""
    (runtime.settings.workspace_path / "a.txt").write_text("data")
    server.script(
        [tool_call_reply("read_file", {"path": "a.txt"}, id="r1"), error(503), error(503)]
    )
    with runtime.store.open(runtime.store.new_key()) as session:
        events = await run_turn(runtime, session, "read it")
        assert events[-1].outcome == "error"
        msgs = assert_consistent(session, partial_allowed=False)
        assert [m["role"] for m in msgs] == ["user", "assistant", "tool"]
        await assert_next_message_works(runtime, session, server)
        sent = server.last_body["messages"]
        assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "user"]


# -- the same through the console script ----------------------------------------------------


@pytest.mark.e2e
def test_console_script_reports_faults_with_exit_1_and_a_hint(tmp_path) -> None:
    """Timeout (retried, then given up), a stream cut inside tool arguments (retried, then
    answered) and a context-window error (not retried), each through `picobot agent -m`."""
    steps = {
        "timeout": [slow(0, first_byte=30), slow(0, first_byte=30)],
        "cut": [
            cut_mid_stream(3, tool_call_reply("write_file", {"path": "x", "content": "y" * 90})),
            text_reply("answered after the retry"),
        ],
        "context": [context_window_exceeded()],
    }
    router = Router()
    with OpenAITestServer(default=router) as srv:
        procs = {}
        for name, script in steps.items():  # the three run at once
            home = tmp_path / name
            write_config(home, srv.url, requestTimeout=1.0)
            router.add(name, script)
            procs[name] = Proc(home, ["agent", "-m", f"{name}: please"], OPENAI_API_KEY=KEY)
        for p in procs.values():
            p.finish(timeout=120)
    calls = {name: router.count(name) for name in steps}
    for name, p in procs.items():
        assert "Traceback" not in p.stderr, p.stderr
        assert KEY not in p.stdout + p.stderr
        trace = json.loads((tmp_path / name / "data/traces/traces.jsonl").read_text())
        if name == "cut":
            assert p.popen.returncode == 0 and p.stdout == "answered after the retry\n"
            assert "retrying" in p.stderr and "broke off" in p.stderr
            assert (calls[name], trace["retries"], trace["outcome"]) == (2, 1, "final")
            continue
        assert p.popen.returncode == 1, p.stderr
        assert p.stdout == ""
        assert "error:" in p.stderr and "hint:" in p.stderr
        if name == "timeout":
            assert "did not answer in time" in p.stderr and "requestTimeout" in p.stderr
            assert (calls[name], trace["retries"]) == (2, 1)
        else:
            assert "context window" in p.stderr and "new session" in p.stderr
            assert (calls[name], trace["retries"]) == (1, 0)
        assert trace["outcome"] == "error" and trace["error"]
