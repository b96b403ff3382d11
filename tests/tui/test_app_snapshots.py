"""Snapshots of the main screen mid-turn, the approval modal, and the 80x24 layout.

Deterministic: scripted model, fixed clock, fixed session id, no cursor blink, no live
timers, no stream throttling; the content comes from tests.tui.scenes.
Update deliberately with `pytest tests/tui --snapshot-update` and review the SVGs.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from picobot_tui.config.settings import Settings
from tests.tui.app_support import make_app
from tests.tui.scenes import SCENES
from tests.tui.settle import settle


def _run(scene: str):
    async def run_before(pilot: Pilot) -> None:
        await SCENES[scene](pilot.app)
        await settle(pilot)

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
