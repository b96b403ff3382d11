"""Snapshots of the main screen mid-turn, the approval modal, and the 80x24 layout.

Deterministic: scripted model, fixed clock, fixed session id, no cursor blink, no live
timers, no stream throttling; the content comes from tests.tui.scenes.
Update deliberately with `pytest tests/tui --snapshot-update` and review the SVGs.
"""

from __future__ import annotations

import pytest
from picobot_tui.widgets.blocks import AssistantMessage
from textual.pilot import Pilot

from picobot_tui.config.settings import Settings
from tests.tui.app_support import make_app
from tests.tui.scenes import SCENES


async def _until(pilot: Pilot, condition, what: str, tries: int = 4000) -> None:
    """Pause until `condition()` holds; bounded by a count of pauses, and an error (not a
    silently unsettled snapshot) when it never holds."""
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.005)
    raise AssertionError(f"the screen never settled: {what}")


async def _settle(pilot: Pilot) -> None:
    """Wait until the screen has settled: streamed text shown, nothing left to lay out or
    repaint on any screen of the stack, and two renders in a row identical. On a loaded CI
    machine a fixed number of short pauses was not always enough (the 80x24 and approval
    snapshots caught a frame mid-layout), so every wait is on a condition."""
    app = pilot.app

    def text_shown() -> bool:
        live = [m for m in app.query(AssistantMessage) if m.streaming]
        return all(m.shown_text == m.source for m in live)

    def nothing_dirty() -> bool:
        return not any(s._layout_required or s._dirty_widgets for s in app.screen_stack)

    await _until(pilot, text_shown, "streamed text on screen")
    await pilot.wait_for_scheduled_animations()
    await _until(pilot, nothing_dirty, "layout and repaint done")
    previous = app.export_screenshot()
    for _ in range(400):
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        current = app.export_screenshot()
        if current == previous and nothing_dirty():
            return
        previous = current
    raise AssertionError("the screen never settled: it kept changing between renders")


def _run(scene: str):
    async def run_before(pilot: Pilot) -> None:
        await SCENES[scene](pilot.app)
        await _settle(pilot)

    return run_before


@pytest.fixture
def snap_settings(settings: Settings) -> Settings:
    return settings


def test_main_screen_mid_turn_streaming(snap_compare, snap_settings):
    app = make_app(snap_settings)
    assert snap_compare(app, terminal_size=(120, 36), run_before=_run("main-streaming"))


def test_main_screen_with_a_running_tool(snap_compare, snap_settings):
    app = make_app(snap_settings)
    assert snap_compare(app, terminal_size=(120, 36), run_before=_run("main-running-tool"))


def test_approval_modal(snap_compare, snap_settings):
    app = make_app(snap_settings)
    assert snap_compare(app, terminal_size=(120, 36), run_before=_run("approval"))


def test_narrow_80x24_layout(snap_compare, snap_settings):
    app = make_app(snap_settings)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_run("main-running-tool"))


def test_light_theme(snap_compare, snap_settings):
    snap_settings.ui.theme = "textual-light"
    app = make_app(snap_settings)
    assert snap_compare(app, terminal_size=(120, 36), run_before=_run("main-streaming"))
