"""Failures and retries through the real console script against the local server (issue 9):
the request log of the server is the truth every count is checked against.

- maxConsecutiveFailures counts failed model calls across the turns of one `--json` process:
  five failing turns stop after three (`too_many_failures`, exit 1, nothing queued runs);
- a `Retry-After` longer than maxRetryWait fails at once, naming the wait;
- an error whose words say it is transient is retried, even when typed as a bad request;
- LiteLLM's own re-send after an HTTP 422 (drop_params) is one more model call in the trace
  and a `retrying` event: as many trace `llm_calls` as requests the server saw.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.support import KEY, Proc, Router, write_config
from tests.support.openai_server import OpenAITestServer, error, rate_limited, text_reply

pytestmark = pytest.mark.e2e


def traces(home: Path) -> list[dict[str, Any]]:
    path = home / "data/traces/traces.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def stored_users(home: Path) -> list[str]:
    out = []
    for path in sorted((home / "sessions").glob("*_*.jsonl")):
        for line in path.read_text().splitlines()[1:]:
            msg = json.loads(line)
            if msg.get("role") == "user":
                out.append(msg["content"])
    return out


def test_five_failing_json_turns_stop_after_three_failures(tmp_path: Path) -> None:
    """Every request fails with a 503. Five messages queued at once: the first three turns
    each make 2 requests (one retry) and fail; the third ends `too_many_failures`; the
    fourth and fifth never run. Exit 1; the server saw exactly 6 requests."""
    home = tmp_path / "home"
    with OpenAITestServer(default=error(503)) as srv:
        write_config(home, srv.url)
        p = Proc(home, ["agent", "--json"], stdin=True, OPENAI_API_KEY=KEY)
        for i in range(5):
            p.send({"type": "message", "content": f"question {i}"})
        p.close_stdin()
        code = p.finish(timeout=120)
        requests = len(srv.completions)
    assert "Traceback" not in p.stderr, p.stderr
    assert code == 1, (p.stdout, p.stderr)
    assert requests == 6
    out = events(p.stdout)
    assert [e["turn"] for e in out if e["type"] == "turn_started"] == [1, 2, 3]
    errors = [e["kind"] for e in out if e["type"] == "error"]
    assert errors == ["server", "server", "server", "too_many_failures"]
    assert len([e for e in out if e["type"] == "retrying"]) == 3
    stop = next(e for e in out if e.get("kind") == "too_many_failures")
    assert "3 model calls in a row failed" in stop["message"]
    assert "maxConsecutiveFailures" in stop["message"] and stop["hint"]
    assert out[-1]["type"] == "turn_finished" and out[-1]["outcome"] == "error"
    assert [(t["outcome"], t["llm_calls"], t["retries"]) for t in traces(home)] == [
        ("error", 2, 1)
    ] * 3
    assert sum(t["llm_calls"] for t in traces(home)) == requests
    assert stored_users(home) == ["question 0", "question 1", "question 2"]
    assert KEY not in p.stdout + p.stderr


def test_a_success_in_between_resets_the_count(tmp_path: Path) -> None:
    """fail, fail, answer, fail, fail: never three in a row, so all five turns run, exit 0."""
    home = tmp_path / "home"
    bad = [error(401)]  # not retried: one request per failed turn
    steps = [*bad, *bad, text_reply("fine"), *bad, *bad]
    with OpenAITestServer(steps, default=text_reply("unused")) as srv:
        write_config(home, srv.url)
        p = Proc(home, ["agent", "--json"], stdin=True, OPENAI_API_KEY=KEY)
        for i in range(5):
            p.send({"type": "message", "content": f"q{i}"})
        p.close_stdin()
        code = p.finish(timeout=120)
        requests = len(srv.completions)
    assert code == 0, p.stderr
    out = events(p.stdout)
    assert [e["outcome"] for e in out if e["type"] == "turn_finished"] == [
        "error", "error", "final", "error", "error"
    ]  # fmt: skip
    assert "too_many_failures" not in p.stdout
    assert requests == 5 == sum(t["llm_calls"] for t in traces(home))


def test_retry_after_caps_and_words_and_422_resends(tmp_path: Path) -> None:
    """Several `picobot agent -m` runs at once against one server, each its own script:
    - `hour`: a 429 with Retry-After: 3600 fails at once (1 request) naming the wait;
    - `words`: a 400 whose text says "timeout" is retried once, then answered;
    - `drop`: a 422 naming `temperature`: LiteLLM sends the request again without it (2
      requests), shown as a retry, answered; 2 llm_calls in the trace;
    - `drop2`: a 422 twice: a clear bad-request error, 2 requests, 2 llm_calls, exit 1."""
    invalid = {"detail": [{"loc": ["body", "temperature"], "msg": "not supported", "type": "x"}]}
    unprocessable = error(422, json.dumps(invalid))
    steps = {
        "hour": [rate_limited("3600"), text_reply("must not be used")],
        "words": [error(400, "upstream timeout while talking to the model"), text_reply("ok")],
        "drop": [unprocessable, text_reply("answered without temperature")],
        "drop2": [error(422), error(422), text_reply("must not be used")],
    }
    router = Router()
    with OpenAITestServer(default=router) as srv:
        procs = {}
        for name, script in steps.items():
            home = tmp_path / name
            write_config(home, srv.url)
            router.add(name, script)
            procs[name] = Proc(home, ["agent", "-m", f"{name}: go"], OPENAI_API_KEY=KEY)
        for p in procs.values():
            p.finish(timeout=120)
    for name, p in procs.items():
        assert "Traceback" not in p.stderr, (name, p.stderr)
        assert KEY not in p.stdout + p.stderr
        [trace] = traces(tmp_path / name)
        assert trace["llm_calls"] == router.count(name), name  # every request is counted
        code = p.popen.returncode
        if name == "hour":
            assert code == 1 and router.count(name) == 1, p.stderr
            assert "3,600 s" in p.stderr and "maxRetryWait (30 s)" in p.stderr
            assert "Rate limited" in p.stderr and "retrying" not in p.stderr
            assert (trace["outcome"], trace["retries"]) == ("error", 0)
        elif name == "words":
            assert code == 0 and p.stdout == "ok\n", p.stderr
            assert router.count(name) == 2 and trace["retries"] == 1
            assert "retrying" in p.stderr
        elif name == "drop":
            assert code == 0 and p.stdout == "answered without temperature\n", p.stderr
            first, second = router.of(name)
            assert "temperature" in first and "temperature" not in second
            assert (trace["retries"], trace["outcome"]) == (1, "final")
            assert "retrying" in p.stderr and "sent the request again" in p.stderr
        else:
            assert code == 1 and router.count(name) == 2, p.stderr
            assert "HTTP 422" in p.stderr and "rejected the request" in p.stderr
            assert "Unexpected error" not in p.stderr
            assert (trace["retries"], trace["outcome"]) == (1, "error")


def test_json_shows_the_422_resend_as_a_retrying_event(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with OpenAITestServer([error(422), text_reply("second time")]) as srv:
        write_config(home, srv.url)
        p = Proc(home, ["agent", "--json"], stdin=True, OPENAI_API_KEY=KEY)
        p.send({"type": "message", "content": "hi"})
        p.close_stdin()
        code = p.finish(timeout=120)
        requests = len(srv.completions)
    assert code == 0, p.stderr
    out = events(p.stdout)
    [retrying] = [e for e in out if e["type"] == "retrying"]
    assert retrying["kind"] == "bad_request" and "422" in retrying["message"]
    assert out[-1]["outcome"] == "final" and out[-1]["content"] == "second time"
    assert requests == 2 == traces(home)[0]["llm_calls"]
