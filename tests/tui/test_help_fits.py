"""/help at 80×24, 100×30 with the side panes open, and 120×40: two columns, key and
description, each description wrapped inside its own column (a hanging indent), so no
line wraps mid-phrase back under the keys (issue 25, point 9: the keys were one joined
line, which wrapped inside "Shift+Enter/Ctrl+J"; then at ~100 columns with the side panes
open the descriptions still wrapped to column 0)."""

from __future__ import annotations

import pytest
from picobot_tui.widgets.blocks import HelpNotice
from textual.geometry import Region

from picobot_tui.config.settings import Settings
from picobot_tui.tui.commands import help_rows
from tests.tui.app_support import make_app, type_and_send, wait_for
from tests.tui.settle import settle


def notice_lines(notice: HelpNotice) -> list[str]:
    """The notice as drawn, inside its padding and border (every line, scrolled or not)."""
    region = notice.content_region
    left = region.x - notice.region.x
    outer = notice.outer_size
    strips = notice.render_lines(Region(0, 0, outer.width, outer.height))
    return [strip.text[left : left + region.width].rstrip() for strip in strips]


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_help_is_two_columns_with_a_hanging_indent(
    settings: Settings, size: tuple[int, int]
) -> None:
    app = make_app(settings, [])
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        if size == (100, 30):  # the narrowest transcript: both side panes open
            assert app.main_screen.has_class("-wide")
            assert app.query_one("#side").display and app.query_one("#timeline").display
        await type_and_send(pilot, "/help")
        [notice] = await wait_for(
            pilot,
            lambda: [b for b in app.conversation.blocks() if isinstance(b, HelpNotice)],
            "the help notice",
        )
        await settle(pilot)
        lines = notice_lines(notice)
        rows = help_rows()
        keys = {key for key, what in rows if what}
        column = 2 + max(len(k) for k in keys) + 2  # where every description starts
        headings = {f"ℹ {rows[0][0]}", *(key for key, what in rows[1:] if not what)}
        wrapped = 0
        for line in lines:
            if not line or line in headings:
                continue
            head = line[:column].strip()
            assert head in keys or head == "", f"wraps under the keys: {line!r}\n" + "\n".join(lines)  # fmt: skip
            assert line[column : column + 1].strip(), f"not in the description column: {line!r}"
            wrapped += head == ""
        # Every row drawn once, in order (none lost below the notice's height).
        assert [ln[:column].strip() for ln in lines if ln[:column].strip() in keys] == [
            key for key, what in rows if what
        ]
        if size == (100, 30):  # descriptions do wrap there: in their column
            assert wrapped > 0
        # `y` on it copies the same rows as text.
        assert "/model [NAME]" in notice.copy_text()


def test_help_snapshot_at_100_columns_with_the_side_panes(snap_compare, settings: Settings) -> None:
    from tests.tui.test_approval_snapshot import _fixed_session

    async def run_before(pilot) -> None:
        await _fixed_session(pilot)
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: pilot.app.conversation.blocks(), "the help notice")
        await settle(pilot)

    assert snap_compare(make_app(settings, []), terminal_size=(100, 30), run_before=run_before)
