"""The TUI never writes a model's (or a stored session's) escape sequences to the terminal.

A model answer, tool-call arguments and a provider error holding OSC 52 (write the
clipboard), OSC 0 (window title) and CSI 2J (clear screen) are rendered live, then the same
session is resumed and shown in the session browser. After each step the frame Textual
would write is rendered and searched: its own output is cursor moves and colours (CSI ... H
and CSI ... m); an OSC, a BEL or a clear-screen can only have come from the content.
"""

from __future__ import annotations

import json
import re

from picobot_tui.core.llm.model import LLMError, TextChunk, ToolCallChunk, UsageChunk
from picobot_tui.core.llm.scripted import ScriptedModel
from tests.reliability.fuzz import tally

EVIL = (
    "alpha\x1b]52;c;cGF5bG9hZA==\x07bravo \x1b]0;pwned\x07charlie \x1b[2J\x1b[Hdelta "
    "\x9b31mecho \x1bPqf\x1b\\golf"
)
FOREIGN = re.compile(r"\x1b\]|\x07|\x1b\[2J|\x9b|\x1bP")


def _frame(app) -> str:
    update = app.screen._compositor.render_full_update()
    return update.render_segments(app.console)


async def test_escapes_in_content_never_reach_the_terminal(tmp_path) -> None:
    from picobot_tui.widgets.session_browser import SessionBrowserScreen

    from tests.tui.app_support import make_app, make_settings, type_and_send, wait_for, wait_idle

    (tmp_path / "ws").mkdir()
    settings = make_settings(tmp_path / "ws")
    settings.tools.approval = "auto"
    args = json.dumps({"path": "x.txt", "content": EVIL})  # escapes arrive as \u001b
    steps = [
        [TextChunk(EVIL), ToolCallChunk(0, "c1", "write_file", args), UsageChunk(1, 1)],
        [TextChunk(f"done {EVIL}"), UsageChunk(1, 1)],
        [LLMError(f"provider says {EVIL}", kind="bad_request", transient=False, hint=EVIL)],
    ]
    app = make_app(settings, ScriptedModel(steps))
    frames: dict[str, str] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "write it")
        await wait_idle(pilot)
        for block in app.conversation.transcript.query("ToolBlock"):
            block.expanded = True
        await pilot.pause()
        frames["live turn"] = _frame(app)
        await type_and_send(pilot, "again")
        await wait_idle(pilot)
        frames["provider error"] = _frame(app)
        key = app.sessions.session.key
    app.sessions.close()  # as quitting does; the lock is free for the next app
    # Resumed in a new app: the same content comes back from the session file.
    app = make_app(settings, ScriptedModel([]))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await app.sessions.resume(key)
        await wait_idle(pilot)
        for block in app.conversation.transcript.query("ToolBlock"):
            block.expanded = True
        await pilot.pause()
        frames["resumed"] = _frame(app)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionBrowserScreen), "browser")
        await wait_for(pilot, lambda: "bravo" in _frame(app), "preview shown")
        frames["session browser"] = _frame(app)
    tally("TUI frames checked for content escapes")
    assert (tmp_path / "ws" / "x.txt").read_text() == EVIL  # the tool got the raw text
    leaks = {k: FOREIGN.findall(v) for k, v in frames.items() if FOREIGN.search(v)}
    assert not leaks, leaks
    missing = [k for k, v in frames.items() if "bravo" not in v or "charlie" not in v]
    assert not missing, missing
