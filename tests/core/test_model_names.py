"""The model name check (core/llm/model_names.py) with the real LiteLLM tables (offline),
and a missing key: found before the call, never retried, never a server error."""

from __future__ import annotations

import os

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.client import LiteLLMClient, load_litellm
from picobot_tui.core.llm.errors import classify
from picobot_tui.core.llm.model import LLMError, ModelRequest
from picobot_tui.core.llm.model_names import close_names, completions, unknown_model
from picobot_tui.core.retries import after_failure
from picobot_tui.core.settings import AgentDefaults


def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize(
    "model",
    [
        "demo",
        "gpt-4o-mini",  # a bare name LiteLLM routes
        "openai/a-name-litellm-has-never-heard-of",  # picobot's own provider prefix
        "vllm/qwen",
        "mistral/mistral-large-latest",  # a LiteLLM provider picobot has no entry for
    ],
)
def test_known_or_prefixed_names_pass(model: str) -> None:
    assert unknown_model(Settings(), model) is None


def test_an_unknown_bare_name_is_refused_with_what_to_do() -> None:
    message = unknown_model(Settings(), "nonsense-model")
    assert message is not None
    assert message.startswith("unknown model `nonsense-model`")
    assert "`--model demo`" in message and "providers.openai.apiBase" in message
    assert "providers.custom" not in message  # the key the README teaches


def test_a_typo_gets_the_close_name() -> None:
    message = unknown_model(Settings(), "gpt-4o-mimi", how="/model")
    assert message is not None
    assert "Did you mean `gpt-4o-mini`" in message and "`/model demo`" in message


def test_a_mistyped_provider_prefix_gets_the_provider() -> None:
    message = unknown_model(Settings(), "antropic/claude-sonnet-4-5")
    assert message is not None
    assert "`antropic` is not a provider" in message
    assert "`anthropic/claude-sonnet-4-5`" in message


def test_any_name_passes_when_its_provider_has_an_api_base() -> None:
    settings = Settings(providers={"custom": {"api_base": "http://127.0.0.1:9/v1"}})
    assert unknown_model(settings, "my-local-model-q4") is None
    assert unknown_model(Settings(), "my-local-model-q4") is not None


def test_empty_name_is_refused() -> None:
    assert "empty" in (unknown_model(Settings(), " ") or "")


def test_close_names_and_completions() -> None:
    assert close_names("gpt-4o-mimi", ["gpt-4o-mini", "claude-3"]) == ["gpt-4o-mini"]
    settings = Settings(agents={"defaults": {"model": "openai/my-configured"}})
    names = completions(settings, load_litellm())
    assert names[:2] == ["demo", "openai/my-configured"]
    assert "openai/gpt-4o-mini" in names  # LiteLLM's list, as picobot names it
    assert any(n.startswith("anthropic/claude") for n in names)
    assert completions(settings) == ["demo", "openai/my-configured"]  # without LiteLLM


# -- a missing key ----------------------------------------------------------------------------


@pytest.mark.parametrize("key", [None, ""])
async def test_a_missing_or_empty_key_fails_before_any_request(
    monkeypatch: pytest.MonkeyPatch, key: str | None
) -> None:
    _no_keys(monkeypatch)
    providers = {"openai": {"api_key": key}} if key is not None else {}
    client = LiteLLMClient(Settings(providers=providers))
    request = ModelRequest("openai/gpt-4o-mini", [{"role": "user", "content": "hi"}], [], 16, 0)
    with pytest.raises(LLMError) as info:
        async for _ in client.stream(request):
            pass
    error = info.value
    assert (error.kind, error.transient) == ("auth", False)
    assert "No API key" in error.message and "OPENAI_API_KEY" in error.message
    outcome = after_failure(error, 1, AgentDefaults(max_retries=3))
    assert type(outcome).__name__ == "ErrorEvent"  # never retried


async def test_litellm_missing_credentials_is_auth_not_a_server_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LiteLLM's own error for a call without a key (a made-up HTTP 500): auth, no retry."""
    _no_keys(monkeypatch)
    litellm = load_litellm()
    with pytest.raises(Exception) as info:  # the SDK refuses before sending anything
        await litellm.acompletion(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            max_retries=0,
        )
    error = classify(info.value, model="openai/gpt-4o-mini", provider="openai")
    assert (error.kind, error.transient, error.status) == ("auth", False, None)
    assert "server error" not in error.message and "retry" not in error.message
    assert "providers.openai.apiKey" in error.hint


async def test_litellm_unrouted_model_is_a_short_not_found() -> None:
    """If an unknown name still reaches LiteLLM (a TUI warned at start), the error is short."""
    litellm = load_litellm()
    with pytest.raises(Exception) as info:  # refused before any request
        await litellm.acompletion(
            model="nonsense-model", messages=[{"role": "user", "content": "hi"}], max_retries=0
        )
    error = classify(info.value, model="nonsense-model")
    assert (error.kind, error.transient, error.status) == ("not_found", False, None)
    assert error.message.startswith("Unknown model (nonsense-model): LiteLLM cannot tell")
    assert "…" not in error.message  # never LiteLLM's how-to cut mid-word


def test_an_openai_compatible_server_is_asked_for_its_models_once() -> None:
    """Issue 25, point 2: `GET /v1/models`, once a process per server, before any call."""
    from tests.support.openai_server import OpenAITestServer

    with OpenAITestServer() as server:
        server.models = ["gpt-4o-mini", "qwen3:latest"]
        settings = Settings(providers={"openai": {"api_base": server.url, "api_key": "k"}})
        assert unknown_model(settings, "openai/qwen3") is None  # Ollama's `:latest`
        message = unknown_model(settings, "gpt-4o-mni")
        assert message is not None and "Did you mean `gpt-4o-mini`?" in message
        assert "(providers.openai.apiBase)" in message
        gets = [r for r in server.requests if r.method == "GET"]
        assert len(gets) == 1 and gets[0].path == "/v1/models"
        assert gets[0].headers["authorization"] == "Bearer k"
        assert not server.completions
