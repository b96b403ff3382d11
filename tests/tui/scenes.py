"""Deterministic scenes of the TUI, for snapshot tests and the screenshots in docs/img.

Each scene feeds hand-written core events through the app's EventRouter (the path a running
turn takes), with fixed durations and token counts, so the frame is the same on every run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from picobot_tui.core.events import (
    ApprovalRequested,
    BudgetChanged,
    Event,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageUpdated,
)

if TYPE_CHECKING:
    from picobot_tui.tui.app import PicobotApp

SESSION_KEY = "cli:5eed0001-20250301-090000"
MODEL = "openai/gpt-4o-mini"

QUESTION = "The parser tests fail on CI but pass locally. Can you find out why?"

ANSWER_1 = """I'll check how the tests are laid out first, then run the failing one.

The CI log points at `tests/test_parser.py::test_unicode_names`:

```python
def test_unicode_names():
    assert parse("naïve = 1").name == "naïve"
```
"""

ANSWER_2_PARTIAL = """Found it. CI runs with `LANG=C`, so the file is read as **ASCII** and
`naïve` is mangled before parsing. Two fixes:

1. open the source with `encoding="utf-8"` in `parser/io.py`
2. set `PYTHONUTF8=1` in"""


def _turn_start() -> list[Event]:
    return [
        TurnStarted(SESSION_KEY, 1, MODEL),
        BudgetChanged(18_250, 128_000, 102_400),
    ]


def _tools_done() -> list[Event]:
    return [
        ToolCallStarted("call_1", "list_dir", {"path": "tests"}, 1, 20),
        ToolCallFinished("call_1", "list_dir", True, 12.0, "tests/ (3 entries)\n...", "ok"),
        ToolCallStarted("call_2", "read_file", {"path": "tests/test_parser.py"}, 2, 20),
        ToolCallFinished("call_2", "read_file", True, 4.0, "def test_unicode_names(): ...", "ok"),
        ToolCallStarted(
            "call_3", "exec", {"command": "LANG=C pytest -q tests/test_parser.py"}, 3, 20
        ),
        ToolCallFinished(
            "call_3",
            "exec",
            False,
            2_310.0,
            "exit code 1\nFAILED tests/test_parser.py::test_unicode_names\n"
            "AssertionError: assert 'na\\xc3\\xafve' == 'naïve'",
            "error",
        ),
        UsageUpdated(3_120, 214, 3_334, 0.0009, 0.0123),
        BudgetChanged(21_480, 128_000, 102_400),
    ]


async def _feed(app: PicobotApp, events: list[Event]) -> None:
    for event in events:
        await app.router.apply(event)


async def _user(app: PicobotApp, text: str) -> None:
    app.sessions.key = SESSION_KEY
    app.status.session = SESSION_KEY.removeprefix("cli:")
    await app.conversation.add_user(text)


async def mid_turn_streaming(app: PicobotApp) -> None:
    """A turn in progress: tools done (one failed), the answer streaming in."""
    await _user(app, QUESTION)
    await _feed(app, _turn_start())
    await _feed(app, [TextDelta(ANSWER_1)])
    await _feed(app, _tools_done())
    await _feed(app, [TextDelta(ANSWER_2_PARTIAL)])


async def mid_turn_running_tool(app: PicobotApp) -> None:
    """A turn in progress with a tool still running (spinner in the timeline)."""
    await _user(app, QUESTION)
    await _feed(app, _turn_start())
    await _feed(app, [TextDelta(ANSWER_1)])
    await _feed(app, _tools_done())
    await _feed(
        app,
        [
            TextDelta("The failure depends on the locale. Let me confirm with `PYTHONUTF8=1`:"),
            ToolCallStarted(
                "call_4",
                "exec",
                {"command": "PYTHONUTF8=1 LANG=C pytest -q tests/test_parser.py"},
                4,
                20,
            ),
        ],
    )


APPROVAL_PREVIEW = "\n".join(
    [
        "--- a/parser/io.py",
        "+++ b/parser/io.py",
        "@@ -8,7 +8,7 @@ from pathlib import Path",
        " ",
        " def read_source(path: Path) -> str:",
        '     """The text of a source file."""',
        "-    with open(path) as f:",
        '+    with open(path, encoding="utf-8") as f:',
        "         return f.read()",
        " ",
    ]
)


async def approval(app: PicobotApp) -> None:
    """The approval modal over a turn, showing the diff of a file edit."""
    from picobot_tui.widgets.approval import ApprovalScreen

    await mid_turn_streaming(app)
    args = {"path": "parser/io.py", "old": "open(path)", "new": 'open(path, encoding="utf-8")'}
    await _feed(app, [ToolCallStarted("call_5", "edit_file", args, 4, 20)])
    # The block and the timeline entry say "waiting for approval" (and the state too).
    await _feed(app, [ApprovalRequested("call_5", "edit_file", args, APPROVAL_PREVIEW)])
    await app.push_screen(ApprovalScreen("call_5", "edit_file", args, APPROVAL_PREVIEW))


SCENES: dict[str, Callable[[PicobotApp], Awaitable[None]]] = {
    "main-streaming": mid_turn_streaming,
    "main-running-tool": mid_turn_running_tool,
    "approval": approval,
}
