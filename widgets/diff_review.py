"""`/diff`: the changes of a turn, of the whole session or of one tool call, file by file.

`DiffReviewScreen(title, files)` shows one collapsible row per file (`a.py  +3 −1`, a note
when the change cannot be undone or is binary); Enter opens a file's diff (`DiffView`: side by
side when wide). It is driven from above: `show(title, files)` replaces what it shows. It talks
upward with messages: `RevertRequested(path)` (`r` on a file: put that one file back) and
`ScopeRequested(scope)` (`t` this turn, `s` the whole session).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Collapsible, Static

from .diff_pane import DiffView


@dataclass(frozen=True)
class FileItem:
    """One changed file: `key` names it for a revert (its absolute path), `shown` for a person."""

    key: str
    shown: str
    added: int
    removed: int
    text: str
    undoable: bool = True
    binary: bool = False

    @property
    def title(self) -> str:
        counts = "binary" if self.binary else f"+{self.added} −{self.removed}"
        note = "  (not undoable: not kept)" if not self.undoable else ""
        return f"{self.shown}  {counts}{note}"


def totals(files: list[FileItem]) -> str:
    noun = "file" if len(files) == 1 else "files"
    added, removed = sum(f.added for f in files), sum(f.removed for f in files)
    return f"{len(files)} {noun}, +{added} −{removed}"


class FileDiff(Collapsible):
    """A file's row; expanded, its diff."""

    def __init__(self, item: FileItem, *, collapsed: bool = True) -> None:
        super().__init__(
            DiffView(item.text, path=item.shown, show_path=False),
            title=item.title,
            collapsed=collapsed,
            classes="diff-file",
        )
        self.item = item


class DiffReviewScreen(ModalScreen[None]):
    """The changes, file by file (see the module docstring)."""

    DEFAULT_CSS = """
    DiffReviewScreen { align: center middle; background: $background 60%; }
    #diff-dialog {
        width: 96%; height: 94%; border: thick $accent; background: $surface; padding: 0 1;
    }
    #diff-title, #diff-hint { height: auto; }
    #diff-files { height: 1fr; }
    #diff-empty { height: auto; color: $text-muted; margin: 1 0; }
    DiffReviewScreen Collapsible { padding-bottom: 0; }
    """
    BINDINGS: ClassVar = [
        Binding("escape,q", "close", "Close"),
        Binding("r", "revert", "Revert file"),
        Binding("t", "scope('turn')", "This turn"),
        Binding("s", "scope('session')", "Session"),
    ]

    class RevertRequested(Message):
        """Put one file back to its state before the changes shown."""

        def __init__(self, key: str, shown: str) -> None:
            super().__init__()
            self.key = key
            self.shown = shown

    class ScopeRequested(Message):
        def __init__(self, scope: str) -> None:
            super().__init__()
            self.scope = scope

    def __init__(self, title: str, files: list[FileItem], *, scoped: bool = True) -> None:
        super().__init__(classes="diff-review")
        self.title_text = title
        self.files = files
        self.scoped = scoped
        """t/s switch between this turn and the session (False for one call's diff)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="diff-dialog"):
            yield Static(self._title(), id="diff-title")
            yield VerticalScroll(id="diff-files")
            hint = "Enter open/close · r revert the file · "
            if self.scoped:
                hint += "t this turn · s whole session · "
            yield Static(Content.styled(hint + "Esc close", "$text-muted"), id="diff-hint")

    def _title(self) -> Content:
        return Content.assemble(
            (self.title_text, "bold"),
            ("  " + (totals(self.files) if self.files else "no file changes"), "$text-muted"),
        )

    async def on_mount(self) -> None:
        await self._fill()

    async def _fill(self) -> None:
        box = self.query_one("#diff-files", VerticalScroll)
        await box.remove_children()
        if not self.files:
            await box.mount(Static("Nothing changed here.", id="diff-empty"))
            return
        single = len(self.files) == 1
        await box.mount_all(FileDiff(f, collapsed=not single) for f in self.files)
        first = box.query(FileDiff).first()
        first.query_one("CollapsibleTitle").focus()

    async def show(self, title: str, files: list[FileItem]) -> None:
        """Show other changes (after a revert, or another scope)."""
        self.title_text, self.files = title, files
        self.query_one("#diff-title", Static).update(self._title())
        await self._fill()

    def current(self) -> FileItem | None:
        """The file whose row (or diff) has the focus, else the only one."""
        node = self.focused
        while node is not None and not isinstance(node, FileDiff):
            node = node.parent  # type: ignore[assignment]
        if isinstance(node, FileDiff):
            return node.item
        return self.files[0] if len(self.files) == 1 else None

    def action_revert(self) -> None:
        item = self.current()
        if item is None:
            self.notify("Move to a file first (Tab), then r")
            return
        if not item.undoable:
            self.notify(f"{item.shown}: not undoable (too big to keep)", severity="warning")
            return
        self.post_message(self.RevertRequested(item.key, item.shown))

    def action_scope(self, scope: str) -> None:
        if self.scoped:
            self.post_message(self.ScopeRequested(scope))

    def action_close(self) -> None:
        self.dismiss(None)
