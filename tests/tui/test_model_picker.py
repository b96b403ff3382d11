"""`/model` with no name opens a picker of the configured and known models, the one in use
marked; choosing one switches as `/model NAME` does, Esc changes nothing (issue 25, point 9:
it was a toast naming the model). The snapshots are in test_no_cut_words.py."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest
from picobot_tui.widgets.model_picker import ModelPicker
from textual.widgets import Input, OptionList
from textual.widgets._toast import Toast

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm import model_names
from picobot_tui.core.shapes.providers import PROVIDER_ENV
from tests.tui.app_support import make_app, type_and_send, wait_for

MODEL = "openai/gpt-4o-mini"


@pytest.fixture
def fake_litellm(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """LiteLLM as loaded, with a small model map (the real import costs ~3 s), and no
    provider key in the environment: only the current model's provider is set up."""
    module = ModuleType("litellm")
    module.model_cost = {  # type: ignore[attr-defined]
        "gpt-4o": {"litellm_provider": "openai", "mode": "chat"},
        "gpt-4.1-mini": {"litellm_provider": "openai", "mode": "chat"},
        "text-embedding-3-small": {"litellm_provider": "openai", "mode": "embedding"},
        "claude-sonnet-4-5": {"litellm_provider": "anthropic", "mode": "chat"},
    }
    monkeypatch.setitem(sys.modules, "litellm", module)
    monkeypatch.setattr(model_names, "_KNOWN", {})  # its names are cached per process
    for var in PROVIDER_ENV.values():
        monkeypatch.delenv(var, raising=False)
    return module


def rows(picker: ModelPicker) -> list[str]:
    options = picker.query_one(OptionList)
    return [str(options.get_option_at_index(i).id) for i in range(options.option_count)]


def row_text(picker: ModelPicker, name: str) -> str:
    options = picker.query_one(OptionList)
    return str(options.get_option(name).prompt)


async def open_picker(pilot, app) -> ModelPicker:
    await wait_for(pilot, lambda: app.ready, "app ready")
    await type_and_send(pilot, "/model")
    picker = await wait_for(
        pilot, lambda: isinstance(app.screen, ModelPicker) and app.screen, "the picker"
    )
    await wait_for(pilot, lambda: "openai/gpt-4o" in rows(picker), "LiteLLM's names")
    return picker


async def test_the_picker_lists_the_models_and_switches_to_the_chosen_one(
    settings: Settings, fake_litellm: ModuleType
) -> None:
    settings.agents.defaults.model = MODEL
    app = make_app(settings)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        picker = await open_picker(pilot, app)
        # The one in use first, marked and highlighted; then demo; then the chat models of
        # the set-up provider (no embedding model, no provider without a key).
        assert rows(picker) == [MODEL, "demo", "openai/gpt-4.1-mini", "openai/gpt-4o"]
        assert "●" in row_text(picker, MODEL) and "in use" in row_text(picker, MODEL)
        assert picker.query_one(OptionList).highlighted == 0
        assert picker.query_one(Input).has_focus
        await pilot.press("4", ".", "1")  # typing filters
        assert rows(picker) == ["openai/gpt-4.1-mini"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.runtime.loop.model_name == "openai/gpt-4.1-mini")
        assert not isinstance(app.screen, ModelPicker)
        assert app.status.model == "openai/gpt-4.1-mini"  # as /model NAME shows it
        await wait_for(
            pilot,
            lambda: any(
                "Model switched to openai/gpt-4.1-mini" in str(t.render())
                for t in app.screen.query(Toast)
            ),  # fmt: skip
            "the toast /model NAME gives",
        )


async def test_down_then_enter_chooses_and_escape_changes_nothing(
    settings: Settings, fake_litellm: ModuleType
) -> None:
    settings.agents.defaults.model = MODEL
    app = make_app(settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_picker(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModelPicker), "closed")
        assert app.runtime.loop.model_name == MODEL
        picker = await open_picker(pilot, app)
        await pilot.press("down", "enter")  # the second row: demo
        await wait_for(pilot, lambda: app.runtime.loop.model_name == "demo", "on demo")
        assert not isinstance(app.screen, ModelPicker) and picker.is_attached is False
