"""The local OpenAI-compatible test server, checked over raw HTTP (no LiteLLM)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.openai_server import (
    OpenAITestServer,
    ToolCall,
    context_window_exceeded,
    cut_mid_stream,
    empty_choices,
    error,
    malformed_chunk,
    overloaded,
    rate_limited,
    reset_before_response,
    slow,
    step_from_json,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def server():
    with OpenAITestServer() as s:
        yield s


def _post(server: OpenAITestServer, stream: bool = True, **extra: Any) -> httpx.Response:
    body = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}], **extra}
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    return httpx.post(f"{server.url}/chat/completions", json=body, timeout=10)


def _events(resp: httpx.Response) -> list[Any]:
    """Parse an SSE body into JSON objects, '[DONE]', or raw strings for invalid JSON."""
    out: list[Any] = []
    for block in resp.text.split("\n\n"):
        if not block.strip():
            continue
        assert block.startswith("data: "), block
        data = block[len("data: ") :]
        if data == "[DONE]":
            out.append(data)
            continue
        try:
            out.append(json.loads(data))
        except ValueError:
            out.append(data)
    return out


def test_url_and_lifecycle():
    server = OpenAITestServer().start()
    url = server.url
    try:
        assert url == f"http://127.0.0.1:{server.port}/v1"
        assert httpx.get(f"{url}/models").json()["data"][0]["id"] == "test-model"
    finally:
        server.stop()
    server.stop()  # idempotent
    with pytest.raises(RuntimeError):
        _ = server.url
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=2)


def test_text_stream_is_openai_sse_with_usage_and_done(server):
    server.script([text_reply("hello world", chunk_size=4, usage=(12, 3))])
    resp = _post(server)
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "text/event-stream"
    events = _events(resp)
    assert events[-1] == "[DONE]"
    usage = events[-2]
    assert usage["choices"] == []
    assert usage["usage"] == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    content = [e["choices"][0]["delta"].get("content") for e in events[:-2]]
    assert "".join(c for c in content if c) == "hello world"
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    assert events[0]["object"] == "chat.completion.chunk"
    assert events[-3]["choices"][0]["finish_reason"] == "stop"


def test_usage_chunk_only_when_requested(server):
    server.script([text_reply("hi")])
    body = {"model": "m", "messages": [], "stream": True}
    events = _events(httpx.post(f"{server.url}/chat/completions", json=body))
    assert all(e == "[DONE]" or e["choices"] for e in events)


def test_provider_without_usage(server):
    server.script([text_reply("hi", usage=None)])
    events = _events(_post(server))
    assert all(e == "[DONE]" or "usage" not in e for e in events)


def test_both_paths_and_unknown_route(server):
    base = server.base_url
    body = {"model": "m", "messages": []}
    assert httpx.post(f"{base}/chat/completions", json=body).status_code == 200
    assert httpx.post(f"{base}/v1/chat/completions", json=body).status_code == 200
    assert httpx.post(f"{base}/v2/other", json=body).status_code == 404
    assert httpx.get(f"{base}/models").status_code == 200


def test_non_stream_response_merges_the_reply(server):
    server.script(
        [
            text_reply("whole answer", chunk_size=3, usage=(4, 2)),
            tool_calls_reply([ToolCall("a", {"x": 1}, "id_a"), ToolCall("b", {"y": 2})], parts=2),
        ]
    )
    first = _post(server, stream=False).json()
    assert first["object"] == "chat.completion"
    assert first["choices"][0]["message"] == {"role": "assistant", "content": "whole answer"}
    assert first["usage"]["total_tokens"] == 6
    second = _post(server, stream=False).json()
    calls = second["choices"][0]["message"]["tool_calls"]
    assert [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls
    ] == [
        ("id_a", "a", {"x": 1}),
        ("call_2", "b", {"y": 2}),
    ]
    assert second["choices"][0]["finish_reason"] == "tool_calls"


def test_tool_call_arguments_split_into_parts(server):
    args = {"path": "notes/a.txt", "limit": 10}
    server.script([tool_call_reply("read_file", args, id="call_x", parts=4)])
    events = [e for e in _events(_post(server)) if e != "[DONE]" and e["choices"]]
    tcs = [tc for e in events for tc in e["choices"][0]["delta"].get("tool_calls", [])]
    assert len(tcs) == 4
    assert tcs[0]["id"] == "call_x" and tcs[0]["function"]["name"] == "read_file"
    assert all("id" not in tc and "name" not in tc["function"] for tc in tcs[1:])
    assert all(tc["index"] == 0 for tc in tcs)
    assert json.loads("".join(tc["function"]["arguments"] for tc in tcs)) == args
    assert events[-1]["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize(
    ("kwargs", "has_index", "has_id"),
    [({}, True, True), ({"omit_index": True}, False, True), ({"omit_id": True}, True, False)],
)
def test_parallel_tool_call_variants(server, kwargs, has_index, has_id):
    calls = [ToolCall("a", {"n": 1}, "id_a"), ToolCall("b", {"n": 2}, "id_b")]
    server.script([tool_calls_reply(calls, parts=2, **kwargs)])
    events = [e for e in _events(_post(server)) if e != "[DONE]" and e["choices"]]
    tcs = [tc for e in events for tc in e["choices"][0]["delta"].get("tool_calls", [])]
    assert len(tcs) == 4
    assert all(("index" in tc) == has_index for tc in tcs)
    assert [tc.get("id") for tc in tcs if "name" in tc["function"]] == (
        ["id_a", "id_b"] if has_id else [None, None]
    )


def test_interleaved_parallel_calls(server):
    calls = [ToolCall("a", "AAAA", "id_a"), ToolCall("b", "BBBB", "id_b")]
    server.script([tool_calls_reply(calls, parts=2, interleave=True)])
    events = [e for e in _events(_post(server)) if e != "[DONE]" and e["choices"]]
    order = [tc["index"] for e in events for tc in e["choices"][0]["delta"].get("tool_calls", [])]
    assert order == [0, 1, 0, 1]


@pytest.mark.parametrize("status", [400, 401, 404, 429, 500, 502, 503, 529])
def test_error_statuses_have_openai_bodies(server, status):
    server.script([error(status)])
    resp = _post(server)
    assert resp.status_code == status
    assert resp.json()["error"]["message"]


def test_error_headers_and_helpers(server):
    server.script([rate_limited("7"), rate_limited(None), overloaded(), context_window_exceeded()])
    first = _post(server)
    assert first.status_code == 429 and first.headers["retry-after"] == "7"
    assert "retry-after" not in _post(server).headers
    third = _post(server)
    assert third.status_code == 529 and third.json()["error"]["type"] == "overloaded_error"
    ctx = _post(server)
    assert ctx.status_code == 400
    assert ctx.json()["error"]["code"] == "context_length_exceeded"
    assert "maximum context length" in ctx.json()["error"]["message"]


def test_error_with_raw_body(server):
    server.script([error(502, body="<html>bad gateway</html>")])
    resp = _post(server)
    assert resp.status_code == 502 and resp.text == "<html>bad gateway</html>"


def test_reset_before_response(server):
    server.script([reset_before_response()])
    with pytest.raises(httpx.TransportError):
        _post(server)
    assert len(server.completions) == 1  # the request was read and recorded


def test_cut_mid_stream_is_a_truncated_body(server):
    server.script([cut_mid_stream(2)])
    received: list[str] = []
    with (
        pytest.raises(httpx.TransportError),
        httpx.stream(
            "POST",
            f"{server.url}/chat/completions",
            json={"model": "m", "messages": [], "stream": True},
        ) as resp,
    ):
        for line in resp.iter_lines():
            if line:
                received.append(line)
    assert len(received) == 2


def test_cut_in_the_middle_of_tool_arguments(server):
    step = cut_mid_stream(2, tool_call_reply("write_file", {"path": "a", "content": "x" * 40}))
    server.script([step])
    with pytest.raises(httpx.TransportError):
        _post(server)


def test_malformed_chunk_is_sent_verbatim(server):
    server.script([malformed_chunk(at=1)])
    events = _events(_post(server))
    assert isinstance(events[1], str) and events[1].startswith('{"id": "chatcmpl-broken"')
    assert events[-1] == "[DONE]"


def test_empty_choices(server):
    server.script([empty_choices(), empty_choices(text_reply("after"))])
    only = _events(_post(server))
    assert only[0] == {"choices": []}
    assert all(e == "[DONE]" or not e["choices"] for e in only)
    assert not any(e != "[DONE]" and e["choices"] for e in only)
    mixed = _events(_post(server))
    assert mixed[0] == {"choices": []}
    assert any(e != "[DONE]" and e["choices"] for e in mixed)


def test_slow_first_byte_hits_client_timeout_and_stop_is_prompt(server):
    server.script([slow(0, first_byte=30)])
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            f"{server.url}/chat/completions",
            json={"model": "m", "messages": [], "stream": True},
            timeout=httpx.Timeout(10, read=0.2),
        )
    server.stop()  # does not wait the 30 s out


def test_slow_chunks_still_deliver(server):
    server.script([slow(0.01, text_reply("abcdef", chunk_size=2))])
    events = _events(_post(server))
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-2]) == "abcdef"


def test_requests_record_body_and_headers(server):
    httpx.post(
        f"{server.url}/chat/completions",
        json={"model": "m", "messages": [], "max_tokens": 5},
        headers={"X-Custom": "yes", "Authorization": "Bearer k"},
    )
    req = server.requests[-1]
    assert req.method == "POST" and req.path == "/v1/chat/completions"
    assert req.body["max_tokens"] == 5
    assert req.headers["x-custom"] == "yes" and req.headers["authorization"] == "Bearer k"
    assert server.last_body == req.body
    server.clear()
    assert server.requests == []


def test_script_is_fifo_then_default(server):
    server.default = text_reply("default")
    server.script([text_reply("one")])
    server.push(text_reply("two"), error(503))
    assert server.pending == 3
    texts = []
    for _ in range(2):
        msg = _post(server, stream=False).json()["choices"][0]["message"]
        texts.append(msg["content"])
    assert texts == ["one", "two"]
    assert _post(server, stream=False).status_code == 503
    assert _post(server, stream=False).json()["choices"][0]["message"]["content"] == "default"
    server.script([])
    assert server.pending == 0


def test_callable_step_sees_the_request(server):
    def answer(request: dict[str, Any]):
        last = request["messages"][-1]
        return text_reply(f"got {last['role']}")

    server.default = answer
    msg = _post(server, stream=False).json()["choices"][0]["message"]
    assert msg["content"] == "got user"


def test_concurrent_requests_are_all_recorded(server):
    server.default = text_reply("x")
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(5):
                assert _post(server).status_code == 200
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(server.completions) == 40


def test_step_from_json_covers_every_type():
    kinds = [
        {"type": "text", "text": "hi"},
        {"type": "tool_call", "name": "x", "args": {"a": 1}},
        {"type": "tool_calls", "calls": [{"name": "a"}, {"name": "b", "args": {}}]},
        {"type": "error", "status": 429, "headers": {"Retry-After": "1"}},
        {"type": "context_window"},
        {"type": "reset"},
        {"type": "cut", "after_chunks": 1},
        {"type": "malformed"},
        {"type": "empty_choices"},
        {"type": "slow", "delay": 0.01, "step": {"type": "text", "text": "s"}},
    ]
    for obj in kinds:
        assert step_from_json(obj) is not None
    with pytest.raises(ValueError):
        step_from_json({"type": "nope"})
    with pytest.raises(ValueError):
        step_from_json({"type": "slow", "step": {"type": "reset"}})


def _spawn(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", "--port", "0", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    return proc, url


def _end(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_cli_prints_url_and_serves_markdown():
    proc, url = _spawn()
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        body = {"model": "m", "messages": [], "stream": True}
        events = _events(httpx.post(f"{url}/chat/completions", json=body, timeout=10))
        text = "".join(
            e["choices"][0]["delta"].get("content") or "" for e in events if e != "[DONE]"
        )
        assert text.startswith("## Test answer") and "```python" in text
    finally:
        _end(proc)


def test_cli_serves_a_json_script(tmp_path):
    script = tmp_path / "steps.json"
    script.write_text(
        json.dumps(
            {
                "steps": [
                    {"type": "tool_call", "name": "list_dir", "args": {"path": "."}},
                    {"type": "error", "status": 503},
                ],
                "default": {"type": "text", "text": "fallback"},
            }
        )
    )
    proc, url = _spawn("--script", str(script), "--delay", "0.001")
    try:
        body = {"model": "m", "messages": []}
        first = httpx.post(f"{url}/chat/completions", json=body, timeout=10).json()
        call = first["choices"][0]["message"]["tool_calls"][0]
        assert call["function"]["name"] == "list_dir"
        assert httpx.post(f"{url}/chat/completions", json=body).status_code == 503
        last = httpx.post(f"{url}/chat/completions", json=body).json()
        assert last["choices"][0]["message"]["content"] == "fallback"
    finally:
        _end(proc)
