"""Start-up without settings, as `picobot agent` runs: the first frame is painted before the
settings and the core load; messages typed meanwhile are sent once they have."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core.paths import config_path
from picobot_tui.run.options import RunError, RunOptions
from picobot_tui.tui import startup_gc
from picobot_tui.tui.app import PicobotApp
from picobot_tui.tui.launch import run_app
from tests.tui.app_support import session_lines, wait_for, wait_idle


def _write_config(data: dict[str, Any] | str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _record_first_frame(app: PicobotApp) -> dict[str, Any]:
    """What the app had loaded when its first frame went to the display."""
    seen: dict[str, Any] = {}
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        if renderable is not None and not seen:
            seen.update(settings=app.settings, ready=app.ready, state=app.status.state)
            seen["timeline_hidden"] = app.main_screen.has_class("-hide-timeline")
            seen["theme"] = app.theme
        original(screen, renderable)

    app._display = display  # type: ignore[method-assign]
    return seen


async def test_first_frame_comes_before_the_settings_then_the_app_gets_ready(
    tmp_path: Path,
) -> None:
    _write_config({"ui": {"theme": "textual-light", "showTimeline": False}})
    app = PicobotApp(options=RunOptions(model="demo", workspace=tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        assert app.settings is not None
        assert app.status.model == "demo" and app.status.state == "idle"
        # The validated settings agree with the peek the first frame used.
        assert app.theme == "textual-light"
        assert app.main_screen.has_class("-hide-timeline")


async def test_first_frame_is_painted_before_settings_load(tmp_path: Path) -> None:
    _write_config({"ui": {"theme": "textual-light", "showTimeline": False}})
    app = PicobotApp(options=RunOptions(model="demo", workspace=tmp_path))
    seen = _record_first_frame(app)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
    assert seen, "no frame reached the display"
    assert seen["settings"] is None and seen["ready"] is False
    assert seen["state"] == "starting"
    # ...yet it already shows the configured theme and panes (peeked from config.json).
    assert seen["theme"] == "textual-light" and seen["timeline_hidden"] is True


async def test_a_message_sent_while_starting_is_sent_once_ready(tmp_path: Path) -> None:
    app = PicobotApp(options=RunOptions(model="demo", workspace=tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        assert not app.ready  # the start is still scheduled behind the first refresh
        app.prompt.text = "hello early"
        app.prompt.input.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.ready, "app ready")
        await wait_idle(pilot)
        users = [m for m in session_lines(app) if m.get("role") == "user"]
        assert [m["content"] for m in users] == ["hello early"]


async def test_a_config_error_found_after_the_first_frame_exits_2_with_the_message(
    tmp_path: Path,
) -> None:
    path = _write_config('{\n  "agents": {"defaults": {"maxTokens": "lots"}}\n}\n')
    app = PicobotApp(options=RunOptions(model="demo", workspace=tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.start_error is not None, "start error")
    assert app.return_code == 2
    assert app.start_error is not None
    assert str(path) in app.start_error.message and "maxTokens" in app.start_error.message


def test_run_app_raises_the_start_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_run(self: PicobotApp) -> int:
        self.start_error = RunError("config broken", 2)
        return 2

    monkeypatch.setattr(PicobotApp, "run", fake_run)
    with pytest.raises(RunError, match="config broken"):
        run_app(RunOptions(model="demo"))


def test_run_app_refuses_an_unknown_session_before_the_screen_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(PicobotApp, "run", lambda self: pytest.fail("the app started"))
    with pytest.raises(RunError) as info:
        run_app(RunOptions(model="demo", session="cli:nope-20240101-000000"))
    assert info.value.code == 2


@pytest.mark.parametrize("config", ["{}", '{"ui": {"bell": 3}}'])
async def test_the_gc_paused_for_start_up_runs_again_once_started_or_failed(
    tmp_path: Path, config: str
) -> None:
    _write_config(config)
    app = PicobotApp(options=RunOptions(model="demo", workspace=tmp_path))
    startup_gc.pause()  # as `picobot agent` does before importing the app
    try:
        assert not gc.isenabled()
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_for(pilot, lambda: app.ready or app.start_error, "started or failed")
            assert gc.isenabled()
    finally:
        gc.enable()
