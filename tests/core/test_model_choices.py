"""What `/model` with no name offers (core/llm/model_names.choices): the model in use, the
configured one and `demo` first; the names an OpenAI-compatible `apiBase` serves, named as
the current model is; LiteLLM's chat models only of the providers that are set up."""

from __future__ import annotations

from types import ModuleType

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm import model_names, served_models
from picobot_tui.core.shapes.providers import PROVIDER_ENV
from tests.support.openai_server import OpenAITestServer


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_names, "_KNOWN", {})
    monkeypatch.setattr(served_models, "_SERVED", {})
    for var in PROVIDER_ENV.values():
        monkeypatch.delenv(var, raising=False)


def litellm_with(**cost: str) -> ModuleType:
    module = ModuleType("litellm")
    module.model_cost = {n: {"litellm_provider": p, "mode": "chat"} for n, p in cost.items()}  # type: ignore[attr-defined]
    return module


def test_a_served_list_is_offered_with_the_current_prefix() -> None:
    settings = Settings()
    settings.agents.defaults.model = "openai/qwen-7b"
    with OpenAITestServer() as server:
        server.models = ["qwen-7b", "llama-3-8b"]
        settings.providers.openai.api_base = server.url
        names = model_names.choices(
            settings, "openai/qwen-7b", litellm_with(**{"gpt-4o": "openai"})
        )
    # The server decides for the openai entry: LiteLLM's openai names are not offered.
    assert names == ["openai/qwen-7b", "demo", "openai/llama-3-8b"]


def test_litellm_names_of_providers_with_a_key_only(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings()
    settings.agents.defaults.model = "openai/gpt-4o-mini"
    litellm = litellm_with(
        **{
            "gpt-4o": "openai",
            "ft:gpt-4o-mini": "openai",  # a fine-tune's price entry, not a name to call
            "claude-sonnet-4-5": "anthropic",
            "grok-2": "xai",
        }
    )
    assert model_names.choices(settings, "demo", litellm) == ["demo", "openai/gpt-4o-mini", "openai/gpt-4o"]  # fmt: skip
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    names = model_names.choices(settings, "demo", litellm)
    assert "anthropic/claude-sonnet-4-5" in names and not any("grok" in n for n in names)
    assert model_names.choices(settings, "demo", None) == ["demo", "openai/gpt-4o-mini"]
