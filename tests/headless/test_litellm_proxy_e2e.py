"""The real LiteLLM Proxy in front (issue 24): the real `picobot` streams through it to the
local OpenAI test server. What the proxy says a call cost is what picobot reports; the
cached tokens the upstream reports come through and are priced; the master key picobot
sends it is never written down.

Measured here (litellm 1.110.2): the proxy sends `x-litellm-response-cost` on a whole
response only. A streamed one, the only kind picobot makes, carries no such header (just
`x-litellm-response-cost-original: 0.0` and other zero breakdowns); its figure comes as
`usage.cost` in the last chunk. A model it cannot price gets neither.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core.llm.litellm_compat import PROXY_COST_HEADER
from tests.headless.conftest import read_messages, run_cli, session_files
from tests.support.cache_checks import marker_count
from tests.support.litellm_proxy import ALIAS, MODEL, UNPRICED, UPSTREAM_KEY, LiteLLMProxy
from tests.support.litellm_proxy import litellm_proxy as litellm_proxy  # the fixture
from tests.support.openai_server import OpenAITestServer, Reply, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e

CACHED = 2048


def _reply(text: str) -> Reply:
    return replace(text_reply(text), usage=(3000, 40), cached=CACHED)


def _home(home: Path, proxy: LiteLLMProxy, model: str, **tools: Any) -> Path:
    config: dict[str, Any] = {
        "agents": {"defaults": {"model": f"openai/{model}", "retryBackoff": 0.05}},
        "providers": {"openai": {"apiKey": proxy.master_key, "apiBase": f"{proxy.url}/v1"}},
    }
    if tools:
        config["tools"] = tools
    (home / "config.json").write_text(json.dumps(config))
    return home


def _usage_events(home: Path, *messages: str) -> list[dict[str, Any]]:
    lines = "".join(json.dumps({"type": "message", "content": m}) + "\n" for m in messages)
    res = run_cli(home, "agent", "--json", input=lines)
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    return [e for e in events if e["type"] == "usage"]


def _ask(proxy: LiteLLMProxy, model: str, *, stream: bool) -> tuple[dict[str, str], str]:
    """One request straight to the proxy: its response headers (lower-cased) and body."""
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    request = urllib.request.Request(
        f"{proxy.url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {proxy.master_key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as resp:
        return {k.lower(): v for k, v in resp.headers.items()}, resp.read().decode()


def _streamed_usage(body: str) -> dict[str, Any]:
    frames = [line[6:] for line in body.splitlines() if line.startswith("data: {")]
    return [json.loads(f) for f in frames if '"usage"' in f][-1]["usage"]


def _table_price(model: str, prompt: int, cached: int, output: int) -> float:
    import litellm

    info = litellm.model_cost[model]
    return (
        (prompt - cached) * info["input_cost_per_token"]
        + cached * info["cache_read_input_token_cost"]
        + output * info["output_cost_per_token"]
    )


def test_picobot_reports_the_cost_the_proxy_says(
    picobot_home: Path, llm_server: OpenAITestServer, litellm_proxy: LiteLLMProxy
) -> None:
    """Through an alias only the proxy can price (picobot's price table has no `team-model`),
    picobot's cost is the proxy's own figure: the one its header gives for a whole response,
    and its streamed `usage.cost` gives for picobot's streamed call."""
    llm_server.script([_reply("whole"), _reply("streamed"), _reply("picobot")])
    headers, _ = _ask(litellm_proxy, ALIAS, stream=False)
    said = float(headers[PROXY_COST_HEADER])
    streamed_headers, body = _ask(litellm_proxy, ALIAS, stream=True)
    assert PROXY_COST_HEADER not in streamed_headers  # so picobot must read usage.cost
    assert float(streamed_headers[f"{PROXY_COST_HEADER}-original"]) == 0.0
    assert _streamed_usage(body)["cost"] == pytest.approx(said)

    [usage] = _usage_events(_home(picobot_home, litellm_proxy, ALIAS), "hi")
    assert llm_server.completions[-1].body["stream"] is True
    assert usage["cost"] == pytest.approx(said)
    assert usage["cost"] == pytest.approx(_table_price(MODEL, 3000, CACHED, 40))
    assert usage["session_cost"] == pytest.approx(said)


def test_cached_tokens_come_through_and_are_priced(
    picobot_home: Path, llm_server: OpenAITestServer, litellm_proxy: LiteLLMProxy
) -> None:
    """OpenAI's `prompt_tokens_details.cached_tokens` passes the proxy; the cost is the price
    table's within 1 % whether the proxy priced the call or (a model it cannot price, which
    gets no cost from it) picobot did."""
    llm_server.script([_reply("one"), replace(_reply("two"), usage=(3100, 40), cached=2944)])
    first, second = _usage_events(_home(picobot_home, litellm_proxy, MODEL), "hi", "again")
    assert all(marker_count(r.body) == 0 for r in llm_server.completions)
    assert (first["prompt_tokens"], first["cache_read_tokens"]) == (3000, CACHED)
    assert first["hit_rate"] == pytest.approx(CACHED / 3000)
    assert first["cost"] == pytest.approx(_table_price(MODEL, 3000, CACHED, 40), rel=0.01)
    assert second["cache_read_tokens"] == 2944
    assert second["cost"] == pytest.approx(_table_price(MODEL, 3100, 2944, 40), rel=0.01)

    # The proxy cannot price its `gpt-4o` (its upstream model is in no table): it sends no
    # cost, and picobot prices the call by its own name instead of reporting 0 or nothing.
    headers, body = _ask(litellm_proxy, UNPRICED, stream=True)
    assert PROXY_COST_HEADER not in headers and "cost" not in _streamed_usage(body)
    _home(picobot_home, litellm_proxy, UNPRICED)
    llm_server.script([_reply("three")])
    [third] = _usage_events(picobot_home, "once more")
    assert third["cache_read_tokens"] == CACHED
    assert third["cost"] == pytest.approx(_table_price(UNPRICED, 3000, CACHED, 40), rel=0.01)


def test_the_master_key_is_never_written(
    picobot_home: Path, llm_server: OpenAITestServer, litellm_proxy: LiteLLMProxy
) -> None:
    """The master key picobot authenticates to the proxy with is scrubbed from the session,
    the trace and picobot.log, even when a file and the model's answer repeat it."""
    key = litellm_proxy.master_key
    home = _home(picobot_home, litellm_proxy, MODEL)
    (home / "workspace" / "notes.txt").write_text(f"proxy key: {key}\n")
    llm_server.script(
        [tool_call_reply("read_file", {"path": "notes.txt"}), _reply(f"The key is {key}.")]
    )
    res = run_cli(home, "agent", "-m", "what is in notes.txt?", "--logs")
    assert res.returncode == 0, res.stderr
    auth = {r.headers.get("authorization") for r in llm_server.completions}
    assert auth == {f"Bearer {UPSTREAM_KEY}"}  # the proxy's own key went upstream
    assert key not in res.stderr  # the log lines (stdout is the answer, streamed as it came)
    [session] = session_files(home)
    written = {
        "session": session.read_text(),
        "trace": (home / "data" / "traces" / "traces.jsonl").read_text(),
        "log": (home / "data" / "logs" / "picobot.log").read_text(),
    }
    for name, text in written.items():
        assert key not in text, name
    # The key really reached picobot, from the file and in the answer, and was scrubbed.
    assert "REDACTED" in llm_server.completions[-1].body["messages"][-1]["content"]
    assert "REDACTED" in read_messages(session)[-1]["content"]
