"""The model out of the box, in the TUI as `picobot agent` starts it (settings loaded by the
app): no key and no model chosen -> the offline demo with a banner; an empty key warns at
start and on send; `/model` swaps the model client both ways (the LiteLLM side answered by
the local OpenAI-compatible server), refuses unknown names and completes known ones."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from picobot_tui.widgets.blocks import Notice

from picobot_tui.core.llm.demo import DemoModel
from picobot_tui.core.paths import config_path
from picobot_tui.run.options import RunOptions
from picobot_tui.tui.app import PicobotApp
from picobot_tui.tui.model_switch import ModelCompletion
from tests.support.openai_server import OpenAITestServer, text_reply
from tests.tui.app_support import transcript_text, type_and_send, wait_for, wait_idle

LONG = 40_000
"""Pauses to wait for LiteLLM's import in the warm-up thread (a bound, not a timing)."""


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)


def _write_config(data: dict[str, Any]) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _app(workspace: Path) -> PicobotApp:
    return PicobotApp(options=RunOptions(workspace=workspace), deterministic=True)


def _notices(app: PicobotApp, words: str) -> list[Notice]:
    return [n for n in app.conversation.transcript.query(Notice) if words in n.text]


async def test_no_key_and_no_model_chosen_starts_on_the_demo_with_a_banner(
    tmp_path: Path,
) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        assert app.status.model == "demo" and app.runtime is not None
        assert isinstance(app.runtime.model, DemoModel)
        [banner] = await wait_for(pilot, lambda: _notices(app, "demo model, offline"), "banner")
        assert "OPENAI_API_KEY" in banner.text and "providers.openai.apiKey" in banner.text
        assert "picobot onboard" not in banner.text  # the user may have just run it
        await type_and_send(pilot, "hello")
        await wait_idle(pilot)
        assert "[demo model]" in transcript_text(app)
        assert not _notices(app, "No API key")


async def test_after_onboard_without_a_key_the_tui_offers_the_demo(
    tmp_path: Path, picobot_home: Path
) -> None:
    """Issue 25, point 1: onboard wrote the model, so it counted as chosen and the TUI
    opened on a model with no key. Now the config it writes (through the real script, no
    terminal, no key) leaves the model a comment: the demo, and a banner naming the key."""
    from tests.headless.conftest import run_cli

    assert run_cli(picobot_home, "onboard", OPENAI_API_KEY="").returncode == 0
    app = _app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        assert app.status.model == "demo"
        [banner] = await wait_for(pilot, lambda: _notices(app, "demo model, offline"), "banner")
        assert "OPENAI_API_KEY" in banner.text and "picobot onboard" not in banner.text


async def test_a_chosen_model_without_a_key_warns_before_litellm_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25, point 1: the warning came after LiteLLM's import (~5 s after the first
    screen). The warm-up (the import) is held here until the warning has shown: before the
    change it never shows while held."""
    import threading

    from picobot_tui.core.llm.client import LiteLLMClient

    release = threading.Event()
    monkeypatch.setattr(LiteLLMClient, "warm", lambda self, model=None: release.wait(120))
    _write_config({"agents": {"defaults": {"model": "openai/gpt-4o-mini"}}})
    app = _app(tmp_path)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            [warning] = await wait_for(pilot, lambda: _notices(app, "No API key"), "warning")
            assert not release.is_set()  # LiteLLM's warm-up is still waiting
            assert "OPENAI_API_KEY" in warning.text and "providers.openai.apiKey" in warning.text
            assert "`/model demo`" in warning.text and "picobot onboard" not in warning.text
            release.set()
    finally:
        release.set()


async def test_an_empty_key_warns_at_start_and_on_send(tmp_path: Path) -> None:
    _write_config(
        {
            "agents": {"defaults": {"model": "openai/gpt-4o-mini", "maxRetries": 2}},
            "providers": {"openai": {"apiKey": ""}},
        }
    )
    app = _app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        assert app.status.model == "openai/gpt-4o-mini"  # chosen: no demo fallback
        await wait_for(pilot, lambda: _notices(app, "No API key"), "start warning", tries=LONG)
        await type_and_send(pilot, "hello")
        await wait_idle(pilot)
        warnings = _notices(app, "No API key for `openai/gpt-4o-mini`")
        assert len(warnings) == 2  # at start, and the failed send
        assert "OPENAI_API_KEY" in warnings[-1].text
        text = " ".join(n.text for n in app.conversation.transcript.query(Notice))
        assert "server error" not in text and "retrying" not in text


async def test_model_command_swaps_the_client_both_ways(tmp_path: Path) -> None:
    with OpenAITestServer(default=text_reply("Answer from the local server.")) as server:
        _write_config(
            {
                "agents": {"defaults": {"model": "demo", "maxRetries": 0}},
                "providers": {"openai": {"apiKey": "sk-test-local", "apiBase": server.url}},
            }
        )
        app = _app(tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_for(pilot, lambda: app.ready, "app ready")
            assert app.runtime is not None
            await type_and_send(pilot, "hello demo")
            await wait_idle(pilot)
            assert "[demo model]" in transcript_text(app) and server.completions == []

            await type_and_send(pilot, "/model openai/test-model")
            await wait_for(pilot, lambda: app.runtime.loop.model_name == "openai/test-model")
            assert app.status.model == "openai/test-model"
            await type_and_send(pilot, "hello server")
            await wait_idle(pilot)
            assert len(server.completions) == 1
            assert server.last_body["model"] == "test-model"
            assert "Answer from the local server." in transcript_text(app)

            await type_and_send(pilot, "/model demo")
            await wait_for(pilot, lambda: app.runtime.loop.model_name == "demo")
            await type_and_send(pilot, "hello demo again")
            await wait_idle(pilot)
            assert len(server.completions) == 1  # "demo" never reached LiteLLM
            assert transcript_text(app).count("[demo model]") == 2


async def test_model_command_refuses_an_unknown_name(tmp_path: Path) -> None:
    _write_config({"agents": {"defaults": {"model": "demo"}}})
    app = _app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        await type_and_send(pilot, "/model gpt-4o-mimi")
        [warning] = await wait_for(
            pilot, lambda: _notices(app, "Model not switched"), "warning", tries=LONG
        )
        assert "unknown model `gpt-4o-mimi`" in warning.text
        assert "Did you mean `gpt-4o-mini`" in warning.text and "`/model demo`" in warning.text
        assert app.runtime is not None and app.runtime.loop.model_name == "demo"
        assert app.status.model == "demo"


async def test_model_command_completes_known_models(tmp_path: Path) -> None:
    with OpenAITestServer() as server:
        server.models = ["test-model", "gpt-4o-mini"]  # /model asks the server first
        _write_config(
            {
                "agents": {"defaults": {"model": "demo"}},
                "providers": {"openai": {"apiKey": "sk-test-local", "apiBase": server.url}},
            }
        )
        app = _app(tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_for(
                pilot,
                lambda: any(isinstance(s, ModelCompletion) for s in app.prompt.completion_sources),
                "the model names",
                tries=LONG,
            )
            app.prompt.input.focus()
            app.prompt.text = "/model gpt-4o-mi"
            await wait_for(pilot, lambda: app.prompt.completions.display, "completion list")
            offered = [c.text for c in app.prompt.complete(app.prompt.text)]
            assert offered[0] == "/model openai/gpt-4o-mini"
            await pilot.press("enter")  # takes the highlighted name and switches to it
            assert app.runtime is not None
            await wait_for(pilot, lambda: app.runtime.loop.model_name == "openai/gpt-4o-mini")
