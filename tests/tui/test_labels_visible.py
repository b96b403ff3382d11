"""The TUI's labels show invisible characters (issue 21 point 11): a tool call's header, its
timeline row, and the session's title in the browser come from the model's and the user's
text; their bidi controls, zero-width characters and BOM are drawn as stand-ins
(`core.visible.label`), as the approval preview already drew them. Before, only C0 and C1
controls were stripped, and a bidi override could make a label read backwards."""

from __future__ import annotations

import json
import unicodedata

from picobot_tui.widgets.blocks import ToolBlock
from picobot_tui.widgets.session_browser import SessionBrowserScreen
from textual.widgets import Static

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.model import TextChunk, ToolCallChunk, UsageChunk
from picobot_tui.core.llm.scripted import ScriptedModel
from tests.tui.app_support import make_app, type_and_send, wait_for, wait_idle

HIDDEN = "\u202e\u2066\u200b\u200d\u200f\ufeff\u2060"


def _format_chars(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cc", "Cf")})


async def test_tool_labels_and_titles_draw_invisible_characters(settings: Settings) -> None:
    args = json.dumps({"path": f"notes{HIDDEN}.txt"})
    steps = [
        [ToolCallChunk(0, "c1", "read_file", args), UsageChunk(1, 1)],
        [TextChunk("no such file"), UsageChunk(1, 1)],
    ]
    app = make_app(settings, ScriptedModel(steps))
    labels: dict[str, str] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, f"open {HIDDEN} it")
        await wait_idle(pilot)
        block = app.conversation.transcript.query_one(ToolBlock)
        labels["tool header"] = block.query_one(".tool-header", Static).content.plain
        timeline = app.timeline.option_list
        # the row is two lines of its own (label, then status): each line is a label
        labels["timeline row"] = str(timeline.get_option_at_index(0).prompt).replace("\n", " ")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionBrowserScreen), "browser")
        screen = app.screen
        assert isinstance(screen, SessionBrowserScreen)
        await wait_for(pilot, lambda: screen.table.row_count == 1, "the session's row")
        labels["session title"] = str(screen.table.get_row_at(0)[0])
    assert {k: _format_chars(v) for k, v in labels.items()} == {k: [] for k in labels}
    assert "notes⟨U+202E⟩⟨U+2066⟩⟨U+200B⟩" in labels["tool header"]
    assert "notes⟨U+202E⟩" in labels["timeline row"]
    assert labels["session title"].startswith("open ⟨U+202E⟩⟨U+2066⟩⟨U+200B⟩")
