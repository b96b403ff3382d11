"""Deterministic waits before a snapshot: conditions, never sleeps, and an error (not a
silently unsettled snapshot) when the screen never settles."""

from __future__ import annotations

from picobot_tui.widgets.blocks import AssistantMessage
from textual.pilot import Pilot
from textual.screen import ModalScreen, Screen


async def until(pilot: Pilot, condition, what: str, tries: int = 4000) -> None:
    """Pause until `condition()` holds; bounded by a count of pauses, and an error (not a
    silently unsettled snapshot) when it never holds."""
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.005)
    raise AssertionError(f"the screen never settled: {what}")


async def settle(pilot: Pilot) -> None:
    """Wait until the screen has settled: streamed text shown, nothing left to lay out or
    repaint on any screen that shows, and two renders in a row identical. On a loaded CI
    machine a fixed number of short pauses was not always enough (the 80x24 and approval
    snapshots caught a frame mid-layout), so every wait is on a condition."""
    app = pilot.app

    def text_shown() -> bool:
        live = [m for m in app.query(AssistantMessage) if m.streaming]
        return all(m.shown_text == m.source for m in live)

    def shown() -> list[Screen]:
        # The top screen and, through a modal's see-through background, those under it. A
        # screen hidden under a full screen (the browser) is not laid out until it shows.
        screens: list[Screen] = []
        for screen in reversed(app.screen_stack):
            screens.append(screen)
            if not isinstance(screen, ModalScreen):
                break
        return screens

    def nothing_dirty() -> bool:
        return not any(s._layout_required or s._dirty_widgets for s in shown())

    await until(pilot, text_shown, "streamed text on screen")
    await pilot.wait_for_scheduled_animations()
    await until(pilot, nothing_dirty, "layout and repaint done")
    previous = app.export_screenshot()
    for _ in range(400):
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        current = app.export_screenshot()
        if current == previous and nothing_dirty():
            return
        previous = current
    raise AssertionError("the screen never settled: it kept changing between renders")
