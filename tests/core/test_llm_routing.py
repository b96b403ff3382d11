"""Model string -> provider entry, LiteLLM kwargs, and the missing-key check (no LiteLLM)."""

from __future__ import annotations

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.client import (
    LOCAL_DUMMY_KEY,
    check_credentials,
    provider_for,
    resolve_route,
)
from picobot_tui.core.shapes.providers import PROVIDER_ENV


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch):
    for var in PROVIDER_ENV.values():
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("openai/gpt-4o-mini", "openai"),
        ("anthropic/claude-sonnet-4-5", "anthropic"),
        ("openrouter/meta-llama/llama-3-70b", "openrouter"),
        ("gemini/gemini-2.0-flash", "gemini"),
        ("deepseek/deepseek-chat", "deepseek"),
        ("groq/llama-3.1-8b-instant", "groq"),
        ("ollama/llama3", "ollama"),
        ("ollama_chat/qwen2.5", "ollama"),
        ("hosted_vllm/qwen", "vllm"),
        ("vllm/qwen", "vllm"),
        ("custom/mine", "custom"),
        ("gpt-4o", "openai"),
        ("claude-3-5-haiku", "anthropic"),
        ("bedrock/anthropic.claude", None),
        ("llama3", None),
    ],
)
def test_provider_for(model, provider):
    assert provider_for(model) == provider


def test_route_passes_key_base_and_headers():
    s = Settings(
        providers={
            "openrouter": {
                "api_key": "sk-or-123",
                "api_base": "https://openrouter.ai/api/v1",
                "extra_headers": {"HTTP-Referer": "https://picobot.dev"},
            }
        }
    )
    route = resolve_route(s, "openrouter/meta-llama/llama-3-70b")
    assert route.provider == "openrouter"
    assert route.model == "openrouter/meta-llama/llama-3-70b"
    assert route.kwargs == {
        "api_key": "sk-or-123",
        "api_base": "https://openrouter.ai/api/v1",
        "extra_headers": {"HTTP-Referer": "https://picobot.dev"},
    }


def test_route_without_config_leaves_litellm_to_its_env():
    route = resolve_route(Settings(), "anthropic/claude-sonnet-4-5")
    assert route.provider == "anthropic" and route.kwargs == {}


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("https://gateway.example/openai/v1", "https://gateway.example/openai/v1"),
    ],
)
def test_openai_compatible_base_gets_v1(base, expected):
    route = resolve_route(Settings(providers={"openai": {"api_base": base}}), "openai/x")
    assert route.kwargs["api_base"] == expected


def test_ollama_base_is_left_alone():
    s = Settings(providers={"ollama": {"api_base": "http://127.0.0.1:11434"}})
    assert resolve_route(s, "ollama/llama3").kwargs["api_base"] == "http://127.0.0.1:11434"


def test_dummy_key_only_with_a_base_and_no_key():
    s = Settings(providers={"openai": {"api_base": "http://127.0.0.1:1/v1"}})
    assert resolve_route(s, "openai/x").kwargs["api_key"] == LOCAL_DUMMY_KEY
    assert "api_key" not in resolve_route(Settings(), "openai/x").kwargs


def test_env_key_wins_over_the_dummy(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    s = Settings(providers={"openai": {"api_base": "http://127.0.0.1:1/v1"}})
    assert "api_key" not in resolve_route(s, "openai/x").kwargs  # LiteLLM reads the env


def test_vllm_prefix_becomes_hosted_vllm():
    s = Settings(providers={"vllm": {"api_base": "http://127.0.0.1:8000/v1"}})
    assert resolve_route(s, "vllm/meta/llama").model == "hosted_vllm/meta/llama"


def test_unknown_prefix_uses_custom_only_when_it_has_a_base():
    assert resolve_route(Settings(), "mistral/small").provider is None
    s = Settings(providers={"custom": {"api_base": "http://127.0.0.1:9/v1", "api_key": "k"}})
    route = resolve_route(s, "mistral/small")
    assert route.provider == "custom" and route.model == "mistral/small"
    assert route.kwargs["custom_llm_provider"] == "openai"
    assert resolve_route(s, "custom/mine").model == "mine"


# -- check_credentials ----------------------------------------------------------------------


def test_missing_key_message_points_at_every_fix():
    msg = check_credentials(Settings(), "openai/gpt-4o-mini")
    assert msg is not None
    for part in (
        "openai/gpt-4o-mini",
        "OPENAI_API_KEY",
        "providers.openai.apiKey",
        "--model demo",
    ):
        assert part in msg
    assert "picobot onboard" not in msg


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("openrouter/x/y", "OPENROUTER_API_KEY"),
        ("gemini/gemini-2.0-flash", "GEMINI_API_KEY"),
        ("deepseek/deepseek-chat", "DEEPSEEK_API_KEY"),
        ("groq/llama-3.1-8b-instant", "GROQ_API_KEY"),
    ],
)
def test_each_provider_names_its_env_var(model, env, monkeypatch):
    msg = check_credentials(Settings(), model)
    assert msg is not None and env in msg
    monkeypatch.setenv(env, "sk-something-long")
    assert check_credentials(Settings(), model) is None


def test_configured_key_passes():
    s = Settings(providers={"openai": {"api_key": "sk-configured"}})
    assert check_credentials(s, "openai/gpt-4o-mini") is None


@pytest.mark.parametrize(
    "model", ["ollama/llama3", "ollama_chat/qwen", "demo", "bedrock/anthropic.claude-v2"]
)
def test_local_demo_and_unknown_providers_pass(model):
    assert check_credentials(Settings(), model) is None


def test_anything_with_api_base_counts_as_local():
    s = Settings(providers={"openai": {"api_base": "http://127.0.0.1:8000/v1"}})
    assert check_credentials(s, "openai/local-model") is None


def test_vllm_without_base_asks_for_one():
    msg = check_credentials(Settings(), "vllm/qwen")
    assert msg is not None and "providers.vllm.apiBase" in msg and "--model demo" in msg
    s = Settings(providers={"vllm": {"api_base": "http://127.0.0.1:8000/v1"}})
    assert check_credentials(s, "vllm/qwen") is None


def test_one_demo_rule_for_runtime_and_credentials(monkeypatch):
    # Only exactly `demo` runs the demo model; `demo/x` goes to LiteLLM like any other name.
    from picobot_tui.core.llm.client import LiteLLMClient
    from picobot_tui.core.llm.demo import DemoModel, is_demo
    from picobot_tui.run.runtime import make_model_client

    assert is_demo("demo") and not is_demo("demo/x") and not is_demo("demo-1")
    assert isinstance(make_model_client(Settings(), "demo"), DemoModel)
    assert isinstance(make_model_client(Settings(), "demo/x"), LiteLLMClient)

    # check_credentials passes `demo` by that same rule, not by provider lookup.
    def no_route(settings, model):
        raise AssertionError(f"{model} was routed")

    monkeypatch.setattr("picobot_tui.core.llm.client.resolve_route", no_route)
    assert check_credentials(Settings(), "demo") is None
