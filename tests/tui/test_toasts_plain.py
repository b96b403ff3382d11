"""Toasts show what they name as text (a further attack beside issue 21 point 11).

A toast names a session title (the user's, a `--json` or ACP client's first message, a
rename), a file the model wrote, a rule, an error. Textual reads a toast as markup by
default: a title `[/]` raised MarkupError when the toast was drawn (the app died), and a
title `[@click=app.quit]…[/]` made a clickable action. Every toast is now plain text, its
controls as stand-ins (`PicobotApp.notify`), whoever calls it.
"""

from __future__ import annotations

import unicodedata

from textual.widgets._toast import Toast

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.model import TextChunk, UsageChunk
from tests.tui.app_support import make_app, type_and_send, wait_for, wait_idle

TITLE = "[@click=app.quit]fix[/] the \u202ebuild [/]"


async def test_a_session_title_in_a_toast_is_text_not_markup(settings: Settings) -> None:
    steps = [[TextChunk("ok"), UsageChunk(1, 1)], [TextChunk("ok"), UsageChunk(1, 1)]]
    app = make_app(settings, steps)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await type_and_send(pilot, TITLE)
        await wait_idle(pilot)
        assert app.sessions.session is not None
        key = app.sessions.session.key
        await type_and_send(pilot, "/new")
        await wait_for(pilot, lambda: app.sessions.session is None or app.sessions.session.key != key, "a new session")  # fmt: skip
        await type_and_send(pilot, f"/resume {key}")
        toast = await wait_for(
            pilot,
            lambda: [t for t in app.screen.query(Toast) if "Resumed" in t.render().plain],
            "the Resumed toast",
            tries=200,
        )
        shown = toast[0].render()
        running = app.is_running
    assert running
    assert "Resumed: [@click=app.quit]fix[/] the ⟨U+202E⟩build [/]" in shown.plain
    assert not any("click" in str(span.style) for span in shown.spans)
    assert not [c for c in shown.plain if unicodedata.category(c) in ("Cc", "Cf")]
