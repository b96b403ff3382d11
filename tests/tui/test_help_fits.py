"""/help at 80×24 and 120×40: every line fits its notice, so none wraps mid-phrase (issue 25,
point 9: the keys were one joined line, which wrapped inside "Shift+Enter/Ctrl+J")."""

from __future__ import annotations

import pytest
from picobot_tui.widgets.blocks import Notice
from rich.cells import cell_len

from picobot_tui.config.settings import Settings
from picobot_tui.tui.commands import help_text
from tests.tui.app_support import make_app, type_and_send, wait_for


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_help_line_fits_the_notice(settings: Settings, size: tuple[int, int]) -> None:
    app = make_app(settings, [])
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        await type_and_send(pilot, "/help")
        [notice] = await wait_for(
            pilot,
            lambda: [b for b in app.conversation.blocks() if isinstance(b, Notice)],
            "the help notice",
        )
        await pilot.pause()
        room = notice.content_region.width - cell_len("ℹ ")  # the icon starts the first line
        too_long = [line for line in help_text().splitlines() if cell_len(line) > room]
        assert too_long == [], (room, too_long)
