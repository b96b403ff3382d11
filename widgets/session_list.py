"""The session list: a DataTable of SessionInfo rows, keyed by session key.

It knows nothing about the store. The browser screen feeds it pages of rows; the table says
when the user gets near the end of what is loaded (`NearEnd`) and forwards printable keys to
the filter (`TypeAhead`), so typing anywhere filters.

A branch (a session made by rewind, `SessionInfo.parent`) is shown under its parent when the
parent is loaded, indented with `↳` and the turn it starts again from; the rows are laid out
again only when a branch arrives (lists without branches keep the append-only path).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING

from rich.console import JustifyMethod
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

from picobot_tui.core.textsafe import terminal_safe
from picobot_tui.core.visible import label

if TYPE_CHECKING:
    from picobot_tui.core.sessions import SessionInfo

NEAR_END = 40  # rows: ask for the next page when the cursor or viewport gets this close
# Fixed columns; the title takes the rest of the width, cut with an ellipsis.
# The last one is the model, or the workspace while sessions of several folders are listed:
# at 120 columns a fifth column left the title 8 cells, and the preview names both.
COLUMNS = (("updated", "Updated", 16), ("count", "Msgs", 4), ("model", "Model", 16))
WORKSPACE_COLUMN = ("workspace", "Workspace", 16)
MIN_TITLE = 16


def tree_order(infos: Iterable[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """(info, depth) with each branch right under its parent (when listed), in the given
    order otherwise. A parent loop or a parent not listed leaves the branch at the top."""
    infos = list(infos)
    keys = {info.key for info in infos}
    children: dict[str, list[SessionInfo]] = {}
    roots: list[SessionInfo] = []
    for info in infos:
        parent = info.parent
        if parent and parent in keys and parent != info.key:
            children.setdefault(parent, []).append(info)
        else:
            roots.append(info)
    out: list[tuple[SessionInfo, int]] = []
    seen: set[str] = set()

    def walk(info: SessionInfo, depth: int) -> None:
        if info.key in seen:
            return
        seen.add(info.key)
        out.append((info, depth))
        for child in children.get(info.key, ()):
            walk(child, depth + 1)

    for info in roots:
        walk(info, 0)
    for info in infos:  # on a loop of parents: shown, at the top level
        walk(info, 0)
    return out


def workspace_name(path: str | None) -> str:
    """A workspace as its column shows it: the folder's name ("unknown": an older picobot
    did not record it)."""
    if not path:
        return "unknown"
    return PurePath(path).name or path


def format_time(value: str) -> str:
    """`2025-03-01 14:05` in local time for an ISO timestamp (or epoch seconds); raw otherwise."""
    try:
        stamp = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        try:
            stamp = datetime.fromtimestamp(float(value)).astimezone()
        except (TypeError, ValueError, OverflowError, OSError):
            return str(value)[:16]
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone()
    return stamp.strftime("%Y-%m-%d %H:%M")


class SessionTable(DataTable):
    """Sessions, one per row: title (as wide as the table allows), updated, count, model."""

    # Rows never scroll sideways (the title column fits), so Home/End go to the first/last row.
    BINDINGS = [
        Binding("home", "scroll_top", "First", show=False),
        Binding("end", "scroll_bottom", "Last", show=False),
    ]

    class NearEnd(Message):
        """The cursor or the viewport is close to the last loaded row."""

    class TypeAhead(Message):
        """A printable key was pressed on the table: it belongs to the filter."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self._infos: dict[str, SessionInfo] = {}  # insertion order (display: `_order`)
        self._depth: dict[str, int] = {}  # a branch's depth under its parent
        self._title_width = 40
        self._by_workspace = False  # the last column shows the workspace, not the model
        self._near_end_posted = -1  # row_count when NearEnd was last posted
        self._check_scheduled = False

    def on_mount(self) -> None:
        self._add_columns()
        self.watch(self, "scroll_y", self._schedule_check, init=False)

    @property
    def columns_shown(self) -> tuple[tuple[str, str, int], ...]:
        """The fixed columns, in order: (key, heading, width)."""
        return (*COLUMNS[:-1], WORKSPACE_COLUMN) if self._by_workspace else COLUMNS

    def show_workspaces(self, on: bool) -> None:
        """Show the workspace column instead of the model's (sessions of every folder)."""
        if on != self._by_workspace:
            self._by_workspace = on
            if self.is_mounted:  # else on_mount adds the columns
                self._rebuild()

    def _add_columns(self) -> None:
        self.add_column("Title", key="title", width=self._title_width)
        for key, heading, width in self.columns_shown:
            justify: JustifyMethod = "right" if key == "count" else "left"
            self.add_column(Text(heading, justify=justify), key=key, width=width)

    def on_resize(self) -> None:
        # DataTable has no flexible column: re-create the columns at the new title width.
        # Room for the scrollbar is always kept, so the width does not change as rows arrive.
        fixed = sum(width for _, _, width in COLUMNS) + 2 * self.cell_padding * (len(COLUMNS) + 1)
        width = self.content_region.width - self.styles.scrollbar_size_vertical - fixed
        width = max(MIN_TITLE, width)
        if width == self._title_width:
            return
        self._title_width = width
        self._rebuild()

    def _rebuild(self) -> None:
        """The columns again (a new width, or the workspace column), rows and cursor kept."""
        row = self.cursor_row
        self.clear(columns=True)
        self._add_columns()
        for info in self._ordered():
            self.add_row(*self._cells(info), key=info.key)
        if self.row_count:
            self.move_cursor(row=min(row, self.row_count - 1), animate=False)

    # ---- data -----------------------------------------------------------------------------

    def set_sessions(self, infos: Iterable[SessionInfo]) -> None:
        """Replace all rows."""
        self.clear()
        self._infos.clear()
        self._depth.clear()
        self._near_end_posted = -1
        self.add_sessions(infos)

    def add_sessions(self, infos: Iterable[SessionInfo]) -> int:
        """Append rows, skipping keys already shown; returns how many were added."""
        added = 0
        fresh: list[SessionInfo] = []
        for info in infos:
            if info.key in self._infos:
                continue
            self._infos[info.key] = info
            fresh.append(info)
            added += 1
        if any(info.parent for info in self._infos.values()):
            self._relayout()  # a branch goes under its parent, wherever that is
        else:
            for info in fresh:
                self.add_row(*self._cells(info), key=info.key)
        return added

    def _ordered(self) -> list[SessionInfo]:
        order = tree_order(self._infos.values())
        self._depth = {info.key: depth for info, depth in order if depth}
        return [info for info, _ in order]

    def _relayout(self) -> None:
        """All rows again in tree order, the cursor kept on its session."""
        current = self.selected
        row = self.cursor_row
        self.clear()
        for info in self._ordered():
            self.add_row(*self._cells(info), key=info.key)
        if not self.row_count:
            return
        if current is not None and current.key in self._infos:
            row = self.get_row_index(current.key)
        self.move_cursor(row=min(row, self.row_count - 1), animate=False)

    def update_session(self, info: SessionInfo) -> None:
        if info.key not in self._infos:
            return
        self._infos[info.key] = info
        keys = ("title", *(key for key, _, _ in self.columns_shown))
        for column, cell in zip(keys, self._cells(info), strict=True):
            self.update_cell(info.key, column, cell)

    def remove_session(self, key: str) -> None:
        if self._infos.pop(key, None) is not None:
            self.remove_row(key)
            if any(i.parent == key for i in self._infos.values()):
                self._relayout()  # its branches move up a level

    def session(self, key: str) -> SessionInfo | None:
        return self._infos.get(key)

    @property
    def keys(self) -> list[str]:
        """Keys in display order."""
        return [row.key.value for row in self.ordered_rows if row.key.value is not None]

    @property
    def selected(self) -> SessionInfo | None:
        if not self.row_count:
            return None
        try:
            row_key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except (CellDoesNotExist, RowDoesNotExist):
            return None
        return self._infos.get(row_key.value or "")

    def _cells(self, info: SessionInfo) -> tuple[Text, Text, Text, Text]:
        # Text, not str: DataTable parses str cells as markup, and titles are user text.
        title = label(info.title or "(untitled)")
        depth = self._depth.get(info.key, 0)
        forked_at = info.forked_at
        if depth or info.parent:
            where = f" (branch at turn {forked_at})" if forked_at else " (branch)"
            if title.startswith("↳ "):  # titled from its parent (branch.py): names the turn
                title, where = title[2:], ""
            title = "  " * max(0, depth - 1) + "↳ " + title + where
        return (
            Text(title, no_wrap=True, overflow="ellipsis"),
            Text(format_time(info.updated), no_wrap=True),
            Text(str(info.message_count), justify="right", no_wrap=True),
            Text(
                label(workspace_name(info.workspace))
                if self._by_workspace
                else terminal_safe(info.model or "—"),
                no_wrap=True,
                overflow="ellipsis",
            ),
        )

    # ---- events ---------------------------------------------------------------------------

    def _schedule_check(self, *_: object) -> None:
        # add_row fires the cursor watcher once per row: check once, after the batch is in.
        if not self._check_scheduled:
            self._check_scheduled = True
            self.call_after_refresh(self._check_near_end)

    def _check_near_end(self) -> None:
        self._check_scheduled = False
        if not self.row_count or self.row_count == self._near_end_posted:
            return  # one NearEnd per table length: the screen adds rows or has none left
        # Rows are one line high; counted in rows, not virtual_size, which updates lazily.
        near_cursor = self.cursor_row >= self.row_count - NEAR_END
        near_view = self.scroll_y + self.size.height >= self.row_count - NEAR_END
        if near_cursor or near_view:
            self._near_end_posted = self.row_count
            self.post_message(self.NearEnd())

    def watch_cursor_coordinate(self, old: Coordinate, new: Coordinate) -> None:
        super().watch_cursor_coordinate(old, new)
        self._schedule_check()

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character and event.character != " ":
            event.stop()
            event.prevent_default()
            self.post_message(self.TypeAhead(event.character))
