"""No dialog, notice or toast cuts a word at 80×24 or 120×40 (issue 25, point 6), and a
snapshot of each at both sizes.

Every modal the TUI can show is opened (the quit question through Ctrl+Q during a real turn,
the export toast through `/export`), the screen settles, and every word of its texts must be
found whole in a line the compositor draws (tests/tui/words_shown.py). Then the same frame is
compared with its SVG. Update deliberately with
`pytest tests/tui/test_no_cut_words.py --snapshot-update` and look at every SVG.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from picobot_tui.widgets.blocks import Notice
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input
from textual.widgets._toast import Toast

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.scripted import text
from tests.tui.app_support import (
    GatedModel,
    make_app,
    make_settings,
    transcript_text,
    type_and_send,
    wait_for,
    wait_idle,
)
from tests.tui.scenes import SCENES
from tests.tui.settle import settle, until
from tests.tui.test_approval_snapshot import _fixed_session
from tests.tui.test_model_picker import fake_litellm  # noqa: F401  # a fixture
from tests.tui.test_session_browser_snapshot import utc  # noqa: F401  # a fixture
from tests.tui.words_shown import DIALOG_KINDS, cut_words, screen_lines

SIZES = [(80, 24), (120, 40)]
FOLDER = Path("/home/ada/projects/parser-service")
EXPORTED = "picobot-cli_5eed0001-20250301-090000.md"


@dataclass
class Case:
    open: Callable[[Pilot, Path], Awaitable[None]]
    model: Callable[[], Any] = list
    kinds: tuple[type[Widget], ...] = DIALOG_KINDS
    fixtures: tuple[str, ...] = ()
    """Fixtures the frame needs (a home shown as `~`, a time zone, LiteLLM's model map)."""


async def _push(pilot: Pilot, screen: Any) -> None:
    await _fixed_session(pilot)
    await pilot.app.push_screen(screen)


# -- the dialogs -------------------------------------------------------------------------------


async def _quit_during_a_turn(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.quit_dialog import QuitDialog

    app: Any = pilot.app
    await _fixed_session(pilot)
    await type_and_send(pilot, "Why do the parser tests fail on CI?")
    streaming = lambda: app.busy and "Reading the CI log" in transcript_text(app)  # noqa: E731
    await wait_for(pilot, streaming, "the answer streaming")
    await pilot.press("ctrl+q")
    await until(pilot, lambda: isinstance(app.screen, QuitDialog), "the quit question")


async def _trust(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.trust_dialog import TrustScreen

    await _push(pilot, TrustScreen(FOLDER))


def _turns() -> list[Any]:
    from picobot_tui.widgets.rewind_dialog import TurnItem

    return [
        TurnItem(1, "The parser tests fail on CI but pass locally. Can you find out why?"),
        TurnItem(2, "Open the source with encoding utf-8 and add a test", "2 files, +14 −3"),
    ]


async def _rewind_list(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.rewind_dialog import RewindScreen

    await _push(pilot, RewindScreen(_turns()))


async def _rewind_choices(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.rewind_dialog import RewindScreen

    screen = RewindScreen(_turns())
    await _push(pilot, screen)
    await pilot.pause()
    screen.choose_turn(2)


async def _rewind_conflict(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.rewind_dialog import ConflictScreen

    await _push(pilot, ConflictScreen(["parser/io.py", "tests/test_parser.py"]))


async def _rename(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.session_dialogs import RenameDialog

    await _push(pilot, RenameDialog("Parser tests fail on CI"))


async def _permissions(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.permissions import PermissionsScreen

    rules = ["exec: git status [this workspace]", "web_fetch: docs.python.org [everywhere]"]
    await _push(pilot, PermissionsScreen(rules, workspace=str(FOLDER)))


async def _permissions_empty(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.permissions import PermissionsScreen

    await _push(pilot, PermissionsScreen([], workspace=str(FOLDER)))


async def _approval_edit(pilot: Pilot, tmp: Path) -> None:
    await _fixed_session(pilot)
    await SCENES["approval"](pilot.app)  # type: ignore[arg-type]


async def _approval_exec(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.approval import ApprovalScreen

    args = {"command": "git status --short"}
    preview = f"$ git status --short\n(in {FOLDER}, timeout 60 s)"
    screen = ApprovalScreen(
        "call_7", "exec", args, preview, prefix="git status", workspace=str(FOLDER)
    )
    await _push(pilot, screen)


async def _approval_full(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.approval import FullPreviewScreen

    await _push(pilot, FullPreviewScreen("exec: git status --short", "$ git status --short"))


async def _diff_review(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.diff_review import DiffReviewScreen

    from tests.tui.test_diff_snapshots import _files

    await _push(pilot, DiffReviewScreen("Changes of turn 3", _files()))


async def _mcp(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.mcp_pane import McpPane

    from tests.tui.test_mcp_tui import FIXED

    await _push(pilot, McpPane(FIXED))


async def _model_picker(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.model_picker import ModelPicker
    from textual.widgets import OptionList

    app: Any = pilot.app
    await _fixed_session(pilot)
    await type_and_send(pilot, "/model")
    await until(pilot, lambda: isinstance(app.screen, ModelPicker), "the picker")
    await until(pilot, lambda: app.screen.query_one(OptionList).option_count == 4, "its names")


async def _session_browser(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.session_browser import SessionBrowserScreen

    from tests.tui.test_session_browser_snapshot import build_store

    screen = SessionBrowserScreen(build_store(tmp))
    await _push(pilot, screen)
    screen.filter_input.cursor_blink = False
    loaded = lambda: screen.table.row_count == 5 and screen.preview.loaded  # noqa: E731
    await until(pilot, loaded, "the sessions and a preview")


async def _browser_delete(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.widgets.session_dialogs import ConfirmDeleteDialog

    await _session_browser(pilot, tmp)
    await pilot.press("ctrl+d")
    await until(pilot, lambda: isinstance(pilot.app.screen, ConfirmDeleteDialog), "the question")


# -- notices and toasts ------------------------------------------------------------------------


async def _untrusted_notice(pilot: Pilot, tmp: Path) -> None:
    from picobot_tui.tui.trust import untrusted_notice

    await _fixed_session(pilot)
    runtime = SimpleNamespace(mcp=object(), tools=SimpleNamespace(ctx=SimpleNamespace(workspace=FOLDER)))  # fmt: skip
    await pilot.app.router.apply(untrusted_notice(runtime))  # type: ignore[attr-defined]


async def _notice_under_a_long_transcript(pilot: Pilot, tmp: Path) -> None:
    """The notice at the bottom of a transcript that scrolls (its scrollbar narrows it)."""
    await _fixed_session(pilot)
    for n in range(12):
        await pilot.app.conversation.add_user(f"Question {n} about the parser tests")  # type: ignore[attr-defined]
    await _untrusted_notice(pilot, tmp)


async def _export_toast(pilot: Pilot, tmp: Path) -> None:
    app: Any = pilot.app
    await _fixed_session(pilot)
    await type_and_send(pilot, "hello")
    await wait_idle(pilot)
    await type_and_send(pilot, "/export")
    await wait_for(pilot, lambda: app.screen.query(Toast), "the export toast")


async def _model_toast(pilot: Pilot, tmp: Path) -> None:
    app: Any = pilot.app
    await _fixed_session(pilot)
    await type_and_send(pilot, "/model openrouter/anthropic/claude-sonnet-4.5")
    await wait_for(pilot, lambda: app.screen.query(Toast), "the model toast")


async def _copy_toast(pilot: Pilot, tmp: Path) -> None:
    app: Any = pilot.app
    await _fixed_session(pilot)
    await type_and_send(pilot, "hello")
    await wait_idle(pilot)
    await type_and_send(pilot, "/copy")
    await wait_for(pilot, lambda: app.screen.query(Toast), "the copy toast")


def _answers() -> list[Any]:
    return [text("Hello! What shall we look at in the parser?")]


CASES: dict[str, Case] = {
    "quit-during-a-turn": Case(_quit_during_a_turn, lambda: GatedModel(["Reading the CI log"])),
    "trust": Case(_trust),
    "rewind-list": Case(_rewind_list),
    "rewind-choices": Case(_rewind_choices),
    "rewind-conflict": Case(_rewind_conflict),
    "rename": Case(_rename),
    "permissions": Case(_permissions),
    "permissions-empty": Case(_permissions_empty),
    "approval-edit": Case(_approval_edit),
    "approval-exec": Case(_approval_exec),
    "approval-full": Case(_approval_full),
    "diff-review": Case(_diff_review),
    "mcp": Case(_mcp),
    "model-picker": Case(_model_picker, fixtures=("fake_litellm", "openai_model")),
    "session-browser": Case(_session_browser, fixtures=("utc",)),
    "session-browser-delete": Case(_browser_delete, fixtures=("utc",)),
    "untrusted-notice": Case(_untrusted_notice, kinds=(Notice,), fixtures=("fixed_home",)),
    "notice-under-a-long-transcript": Case(
        _notice_under_a_long_transcript, kinds=(Notice,), fixtures=("fixed_home",)
    ),
    "export-toast": Case(_export_toast, _answers, kinds=(Toast,), fixtures=("fixed_home",)),
    "model-toast": Case(_model_toast, kinds=(Toast,)),
    "copy-toast": Case(_copy_toast, _answers, kinds=(Toast,)),
}


@pytest.fixture
def settings() -> Iterator[Settings]:
    """The hermetic settings with a workspace whose path is the same length on every run:
    it is in the system prompt, so its length is in the status bar's token count (a
    pytest-299 base folder drew "666/128k" where pytest-21 drew "665/128k")."""
    root = Path(tempfile.mkdtemp(prefix="pbsnap-", dir="/tmp"))
    workspace = root / "workspace"
    workspace.mkdir()
    yield make_settings(workspace)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def fixed_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A home the frame can name the same on every machine: `~/.picobot` under a HOME that
    is a temporary folder, shown as `~`."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PICOBOT_HOME", raising=False)
    return home


@pytest.fixture
def openai_model(settings: Settings) -> None:
    settings.agents.defaults.model = "openai/gpt-4o-mini"


def _app(settings: Settings, case: Case) -> Any:
    app = make_app(settings, case.model())
    app.NOTIFICATION_TIMEOUT = 3600  # a toast outlives the slowest settle
    return app


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", list(CASES))
def test_no_word_is_cut(
    snap_compare, settings: Settings, name: str, size: tuple[int, int], request, tmp_path: Path
) -> None:
    case = CASES[name]
    for fixture in case.fixtures:
        request.getfixturevalue(fixture)
    cut: list[list[str]] = []

    async def run_before(pilot: Pilot) -> None:
        await case.open(pilot, tmp_path)
        # A focused Input blinks its cursor every 0.5 s: on a loaded machine the picture
        # was taken in either phase (CI run 61: the rename dialog, cursor off). Steady on.
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False
        await settle(pilot)
        cut.append(cut_words(pilot.app, case.kinds))
        if cut[-1]:
            print("\n".join(screen_lines(pilot.app)))

    matched = snap_compare(_app(settings, case), terminal_size=size, run_before=run_before)
    assert cut == [[]], f"{name} at {size[0]}×{size[1]} cuts {cut}"
    assert matched
