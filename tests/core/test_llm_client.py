"""LiteLLMClient end to end: real LiteLLM over real HTTP against the local test server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.accumulator import ToolCallAccumulator
from picobot_tui.core.llm.client import LOCAL_DUMMY_KEY, LiteLLMClient, load_litellm
from picobot_tui.core.llm.model import (
    Chunk,
    LLMError,
    ModelRequest,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)
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
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-picobot-test-KEY-abcdef0123456789"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    load_litellm()  # pay the 3-4 s import once for the module


@pytest.fixture
def server():
    with OpenAITestServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def settings_for(
    server: OpenAITestServer | None = None,
    *,
    provider: str = "openai",
    api_base: str | None = None,
    key: str | None = KEY,
    timeout: float = 10,
    **provider_extra: Any,
) -> Settings:
    entry: dict[str, Any] = {"api_base": api_base or (server.url if server else None)}
    if key is not None:
        entry["api_key"] = key
    entry.update(provider_extra)
    return Settings(
        providers={provider: entry},
        agents={"defaults": {"request_timeout": timeout}},
    )


def request(model: str = "openai/test-model", *, tools=(), max_tokens: int = 64) -> ModelRequest:
    return ModelRequest(
        model=model,
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
        tools=list(tools),
        max_tokens=max_tokens,
        temperature=0.2,
    )


async def collect(client: LiteLLMClient, req: ModelRequest | None = None) -> list[Chunk]:
    return [c async for c in client.stream(req or request())]


async def failure(
    client: LiteLLMClient, req: ModelRequest | None = None
) -> tuple[LLMError, list[Chunk]]:
    got: list[Chunk] = []
    with pytest.raises(LLMError) as info:
        async for c in client.stream(req or request()):
            got.append(c)
    return info.value, got


def text_of(chunks: list[Chunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


def calls_of(chunks: list[Chunk]) -> list[tuple[str, str, Any]]:
    acc = ToolCallAccumulator()
    for c in chunks:
        if isinstance(c, ToolCallChunk):
            acc.add(c)
    return [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in acc.calls()
    ]


# -- streaming ------------------------------------------------------------------------------


async def test_text_streams_in_deltas_then_usage(server):
    server.script([text_reply("The quick brown fox.", chunk_size=5, usage=(21, 6))])
    chunks = await collect(LiteLLMClient(settings_for(server)))
    texts = [c for c in chunks if isinstance(c, TextChunk)]
    assert len(texts) == 4 and text_of(chunks) == "The quick brown fox."
    assert chunks[-1] == UsageChunk(21, 6, None)  # unknown model: no cost
    assert sum(isinstance(c, UsageChunk) for c in chunks) == 1


async def test_known_model_has_a_cost(server):
    server.script([text_reply("hi", usage=(1000, 500))])
    chunks = await collect(LiteLLMClient(settings_for(server)), request("openai/gpt-4o-mini"))
    usage = chunks[-1]
    assert isinstance(usage, UsageChunk) and usage.prompt_tokens == 1000
    assert usage.cost is not None and usage.cost > 0


async def test_no_usage_from_provider_yields_no_usage_chunk(server):
    # LiteLLM would make up an estimate; the loop estimates itself instead.
    server.script([text_reply("no usage here", usage=None)])
    chunks = await collect(LiteLLMClient(settings_for(server)))
    assert text_of(chunks) == "no usage here"
    assert not any(isinstance(c, UsageChunk) for c in chunks)


async def test_request_body_and_headers(server):
    settings = settings_for(server, extra_headers={"X-Picobot-Test": "1"})
    server.script([text_reply("ok")])
    await collect(LiteLLMClient(settings), request(tools=TOOLS, max_tokens=123))
    req = server.completions[-1]
    assert req.path == "/v1/chat/completions"
    body = req.body
    assert body["model"] == "test-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 123 and body["temperature"] == 0.2
    assert body["tools"] == TOOLS
    assert body["messages"][-1] == {"role": "user", "content": "hi"}
    assert req.headers["x-picobot-test"] == "1"
    assert req.headers["authorization"] == f"Bearer {KEY}"


async def test_tools_omitted_when_empty(server):
    server.script([text_reply("ok")])
    await collect(LiteLLMClient(settings_for(server)))
    assert "tools" not in server.last_body


async def test_dummy_key_when_only_api_base_is_configured(server):
    server.script([text_reply("ok")])
    chunks = await collect(LiteLLMClient(settings_for(server, key=None)))
    assert text_of(chunks) == "ok"
    assert server.completions[-1].headers["authorization"] == f"Bearer {LOCAL_DUMMY_KEY}"


async def test_env_key_is_used_over_the_dummy(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-0123456789")
    server.script([text_reply("ok")])
    await collect(LiteLLMClient(settings_for(server, key=None)))
    assert server.completions[-1].headers["authorization"] == "Bearer sk-from-env-0123456789"


async def test_api_base_without_v1_gets_it(server):
    server.script([text_reply("ok")])
    await collect(LiteLLMClient(settings_for(server, api_base=server.base_url)))
    assert server.completions[-1].path == "/v1/chat/completions"


@pytest.mark.parametrize(
    ("provider", "model", "sent"),
    [
        ("vllm", "vllm/meta/llama-3", "meta/llama-3"),
        ("vllm", "hosted_vllm/qwen", "qwen"),
        ("custom", "custom/my-model", "my-model"),
        ("custom", "org/some-model", "org/some-model"),
        ("custom", "plainmodel", "plainmodel"),
    ],
)
async def test_provider_entries_by_prefix(server, provider, model, sent):
    server.script([text_reply("routed")])
    client = LiteLLMClient(settings_for(server, provider=provider))
    chunks = await collect(client, request(model))
    assert text_of(chunks) == "routed"
    assert server.last_body["model"] == sent
    assert server.completions[-1].headers["authorization"] == f"Bearer {KEY}"


# -- tool calls -----------------------------------------------------------------------------


async def test_tool_call_deltas_reassemble(server):
    args = {"path": "notes/todo.md", "offset": 3}
    server.script([tool_call_reply("read_file", args, id="call_abc", parts=5)])
    chunks = await collect(LiteLLMClient(settings_for(server)), request(tools=TOOLS))
    assert sum(isinstance(c, ToolCallChunk) for c in chunks) == 5
    assert calls_of(chunks) == [("call_abc", "read_file", args)]


async def test_text_then_tool_call(server):
    server.script([tool_call_reply("read_file", {"path": "a"}, text="Let me look.")])
    chunks = await collect(LiteLLMClient(settings_for(server)), request(tools=TOOLS))
    assert text_of(chunks) == "Let me look."
    assert calls_of(chunks) == [("call_1", "read_file", {"path": "a"})]


@pytest.mark.parametrize("interleave", [False, True])
async def test_parallel_tool_calls(server, interleave):
    calls = [ToolCall("read_file", {"path": "a"}, "id_a"), ToolCall("list_dir", {"d": 1}, "id_b")]
    server.script([tool_calls_reply(calls, parts=3, interleave=interleave)])
    chunks = await collect(LiteLLMClient(settings_for(server)), request(tools=TOOLS))
    assert calls_of(chunks) == [
        ("id_a", "read_file", {"path": "a"}),
        ("id_b", "list_dir", {"d": 1}),
    ]


async def test_parallel_calls_without_index_groq_style(server):
    calls = [
        ToolCall("read_file", {"path": "a"}, "id_a"),
        ToolCall("read_file", {"path": "b"}, "id_b"),
    ]
    server.script([tool_calls_reply(calls, parts=2, omit_index=True)])
    chunks = await collect(LiteLLMClient(settings_for(server)), request(tools=TOOLS))
    assert calls_of(chunks) == [
        ("id_a", "read_file", {"path": "a"}),
        ("id_b", "read_file", {"path": "b"}),
    ]


async def test_tool_calls_without_id(server):
    calls = [ToolCall("read_file", {"path": "a"}), ToolCall("list_dir", {})]
    server.script([tool_calls_reply(calls, parts=2, omit_id=True)])
    chunks = await collect(LiteLLMClient(settings_for(server)), request(tools=TOOLS))
    assert calls_of(chunks) == [("call_0", "read_file", {"path": "a"}), ("call_1", "list_dir", {})]


# -- faults ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "kind", "transient", "status"),
    [
        (error(500), "server", True, 500),
        (error(502), "server", True, 502),
        (error(503), "server", True, 503),
        (overloaded(), "server", True, 529),
        (error(404), "not_found", False, 404),
        (error(400, "Invalid value for 'temperature'"), "bad_request", False, 400),
        (context_window_exceeded(), "context_window", False, 400),
        (error(429, code="insufficient_quota", type="insufficient_quota"), "quota", False, 429),
    ],
)
async def test_http_errors_are_classified(server, step, kind, transient, status):
    server.script([step])
    err, got = await failure(LiteLLMClient(settings_for(server)))
    assert (err.kind, err.transient, err.status) == (kind, transient, status)
    assert got == []
    assert "\n" not in err.message and "openai/test-model" in err.message
    assert len(server.completions) == 1  # max_retries=0: no hidden SDK retry


async def test_rate_limit_honours_retry_after_seconds(server):
    server.script([rate_limited("3")])
    err, _ = await failure(LiteLLMClient(settings_for(server)))
    assert (err.kind, err.transient, err.status, err.retry_after) == ("rate_limit", True, 429, 3.0)


async def test_rate_limit_retry_after_http_date(server):
    when = email.utils.formatdate(time.time() + 120, usegmt=True)
    server.script([rate_limited(when)])
    err, _ = await failure(LiteLLMClient(settings_for(server)))
    assert err.kind == "rate_limit" and err.retry_after is not None
    assert 0 < err.retry_after <= 120


async def test_rate_limit_without_retry_after(server):
    server.script([rate_limited(None)])
    err, _ = await failure(LiteLLMClient(settings_for(server)))
    assert (err.kind, err.transient, err.retry_after) == ("rate_limit", True, None)


async def test_retry_after_ms_header(server):
    server.script([error(429, headers={"retry-after-ms": "1500"})])
    err, _ = await failure(LiteLLMClient(settings_for(server)))
    assert err.retry_after == 1.5


async def test_auth_error_has_a_hint_and_never_the_key(server):
    server.script([error(401, f"Incorrect API key provided: {KEY}. Find yours at ...")])
    err, _ = await failure(LiteLLMClient(settings_for(server)))
    assert (err.kind, err.transient, err.status) == ("auth", False, 401)
    assert KEY not in err.message and KEY not in err.hint and KEY not in str(err)
    assert "providers.openai.apiKey" in err.hint and "OPENAI_API_KEY" in err.hint
    assert "picobot onboard" not in err.message + err.hint  # what the user just ran


async def test_env_key_is_scrubbed_too(server, monkeypatch):
    env_key = "sk-env-only-KEY-9876543210"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    server.script([error(401, f"Incorrect API key provided: {env_key}")])
    err, _ = await failure(LiteLLMClient(settings_for(server, key=None)))
    assert err.kind == "auth" and env_key not in err.message


async def test_reset_before_response(server):
    server.script([reset_before_response()])
    err, got = await failure(LiteLLMClient(settings_for(server)))
    assert (err.kind, err.transient, err.status) == ("connection", True, None)
    assert got == []


async def test_connection_refused():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = LiteLLMClient(settings_for(api_base=f"http://127.0.0.1:{port}/v1"))
    err, _ = await failure(client)
    # Nothing listens on this machine's port: not retried (a retry finds the same).
    assert (err.kind, err.transient, err.status) == ("connection", False, None)
    assert f"nothing listening on http://127.0.0.1:{port}/v1" in err.message
    assert "apiBase" in err.hint


async def test_cut_mid_stream_keeps_the_partial_text(server):
    server.script([cut_mid_stream(3, text_reply("one two three four five", chunk_size=4))])
    err, got = await failure(LiteLLMClient(settings_for(server)))
    assert (err.kind, err.transient) == ("connection", True)
    assert text_of(got) == "one two thre"
    assert "broke off" in err.message


async def test_cut_in_the_middle_of_tool_arguments(server):
    step = tool_call_reply("read_file", {"path": "a-rather-long-file-name.txt"}, parts=6)
    server.script([cut_mid_stream(3, step)])
    err, got = await failure(LiteLLMClient(settings_for(server)), request(tools=TOOLS))
    assert (err.kind, err.transient) == ("connection", True)
    partial = [c for c in got if isinstance(c, ToolCallChunk)]
    assert 0 < len(partial) < 6


async def test_malformed_chunk(server):
    server.script([malformed_chunk()])
    err, _ = await failure(LiteLLMClient(settings_for(server)))
    assert err.transient and err.kind == "server"
    assert "malformed" in err.message


async def test_only_empty_choices_is_a_transient_error(server):
    server.script([empty_choices()])
    err, got = await failure(LiteLLMClient(settings_for(server)))
    assert err.transient and got == []


async def test_empty_choices_before_content_are_skipped(server):
    server.script([empty_choices(text_reply("fine"), count=2)])
    chunks = await collect(LiteLLMClient(settings_for(server)))
    assert text_of(chunks) == "fine"


async def test_slow_first_byte_times_out(server):
    server.script([slow(0, first_byte=30)])
    err, _ = await failure(LiteLLMClient(settings_for(server, timeout=0.3)))
    assert (err.kind, err.transient) == ("timeout", True)
    assert "requestTimeout" in err.hint


async def test_slow_chunks_time_out_mid_stream(server):
    server.script([slow(30, text_reply("abc"))])
    err, _ = await failure(LiteLLMClient(settings_for(server, timeout=0.3)))
    assert (err.kind, err.transient) == ("timeout", True)


async def test_cancellation_is_not_turned_into_an_error(server):
    server.script([slow(30, text_reply("never"))])
    client = LiteLLMClient(settings_for(server))
    task = asyncio.create_task(collect(client))
    while not server.completions:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_stopping_early_closes_cleanly(server):
    server.script([text_reply("a long answer that we stop reading early", chunk_size=2)])
    stream = LiteLLMClient(settings_for(server)).stream(request())
    first = await anext(stream)
    await stream.aclose()
    assert isinstance(first, TextChunk)
    server.script([text_reply("next call works")])
    assert text_of(await collect(LiteLLMClient(settings_for(server)))) == "next call works"


@pytest.mark.parametrize(
    ("content_type", "detail"),
    [
        ("text/html; charset=utf-8", ": an HTML page came back, not the API's JSON."),
        ("text/plain", " (openai/test-model, HTTP 502)."),
    ],
)
async def test_a_body_that_is_not_json_is_said_in_words_not_as_error_code(
    server, content_type, detail
):
    """The SDK's stand-in "Error code: 502" only repeated the status; a web page at the
    apiBase (a UI, a proxy's login page) is named, and the hint points at the address."""
    body = "<html><body>Bad gateway</body></html>" if "html" in content_type else "bad gateway"
    server.script([error(502, body=body, headers={"Content-Type": content_type})])
    err, got = await failure(LiteLLMClient(settings_for(server)))
    assert str(err).endswith(detail) and "Error code" not in str(err), str(err)
    assert ("apiBase" in (err.hint or "")) == ("html" in content_type), err.hint
    assert got == []


async def test_the_next_call_works_after_each_fault(server):
    client = LiteLLMClient(settings_for(server))
    for fault in (error(500), reset_before_response(), cut_mid_stream(1), malformed_chunk()):
        server.script([fault, text_reply("recovered")])
        with pytest.raises(LLMError):
            await collect(client)
        assert text_of(await collect(client)) == "recovered"


async def test_faults_print_nothing_to_the_terminal(server, capfd):
    client = LiteLLMClient(settings_for(server))
    server.script([error(500), cut_mid_stream(1), malformed_chunk(), error(401), text_reply("x")])
    for _ in range(4):
        with pytest.raises(LLMError):
            await collect(client)
    await collect(client)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# -- context window, warm-up, logging, import hygiene ---------------------------------------


def test_context_window_from_config_then_litellm():
    configured = Settings(agents={"defaults": {"context_window": 32000}})
    assert LiteLLMClient(configured).context_window("openai/test-model") == 32000
    client = LiteLLMClient(Settings())
    assert client.context_window("openai/gpt-4o-mini") == 128000
    assert client.context_window("openai/no-such-model-xyz") is None


def test_warm_configures_litellm_and_routes_its_logs(capfd):
    LiteLLMClient(Settings()).warm()
    assert capfd.readouterr() == ("", "")
    litellm = sys.modules["litellm"]
    assert litellm.suppress_debug_info is True
    records: list[logging.LogRecord] = []

    class Grab(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    grab = Grab()
    picobot = logging.getLogger("picobot")
    picobot.addHandler(grab)
    try:
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            logger = logging.getLogger(name)
            assert logger.propagate is False and logger.level == logging.WARNING
            logger.info("too chatty")
            logger.warning("from %s", name)
    finally:
        picobot.removeHandler(grab)
    assert [r.getMessage() for r in records] == [
        "from LiteLLM",
        "from LiteLLM Router",
        "from LiteLLM Proxy",
    ]


def test_importing_the_client_does_not_import_litellm():
    code = (
        "import sys\n"
        "import picobot_tui.core.llm.client as llm, picobot_tui.core.llm.errors\n"
        "import picobot_tui.core.llm.accumulator\n"
        "from picobot_tui.config.settings import Settings\n"
        "client = llm.LiteLLMClient(Settings())\n"
        "llm.check_credentials(Settings(), 'openai/gpt-4o-mini')\n"
        "assert 'litellm' not in sys.modules, 'litellm imported'\n"
        "assert 'openai' not in sys.modules, 'openai imported'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def test_fresh_process_streams_without_warm_up_and_prints_nothing(tmp_path):
    """The lazy path as the headless CLI uses it: no warm(), no cost-map env var set by
    the caller (llm.py must set it), output only what the caller prints."""
    code = (
        "import asyncio, os, sys\n"
        "assert 'LITELLM_LOCAL_MODEL_COST_MAP' not in os.environ\n"
        "from picobot_tui.config.settings import Settings\n"
        "from picobot_tui.core.llm.client import LiteLLMClient\n"
        "from picobot_tui.core.llm.model import ModelRequest\n"
        "from tests.support.openai_server import OpenAITestServer, text_reply\n"
        "async def main():\n"
        "    with OpenAITestServer([text_reply('fresh')]) as s:\n"
        "        c = LiteLLMClient(Settings(providers={'openai': {'api_base': s.url}}))\n"
        "        req = ModelRequest('openai/m', [{'role': 'user', 'content': 'x'}], [], 5, 0)\n"
        "        chunks = [ch async for ch in c.stream(req)]\n"
        "    print(''.join(getattr(ch, 'text', '') for ch in chunks))\n"
        "asyncio.run(main())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["PICOBOT_HOME"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "fresh\n"
    assert proc.stderr == ""


def test_warm_runs_its_mock_completion_with_the_model_it_is_given(monkeypatch):
    """LiteLLM loads the tokenizer of the model it counts for: warming with another model
    than the one used kept two tokenizers in memory (bench #6)."""
    client = LiteLLMClient(Settings())
    litellm = load_litellm()
    calls: list[dict] = []

    def completion(**kwargs):
        calls.append(kwargs)
        return iter(())

    monkeypatch.setattr(litellm, "completion", completion)
    client.warm("openai/test-model")
    client.warm("vllm/qwen")
    client.warm()
    assert [c["model"] for c in calls] == [
        "openai/test-model",
        "hosted_vllm/qwen",
        "openai/gpt-4o-mini",
    ]
    assert all(c["mock_response"] and "api_key" not in c for c in calls)
