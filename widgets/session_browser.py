"""The session browser: find a past session (by title or by a word from its content) and act on it.

`SessionBrowserScreen(store)` dismisses with `("resume", key)`, `("new", None)`, or `None`
(Escape). It never reaches into the app: the caller decides what resuming means.

Nothing here touches the disk on the UI thread. A thread worker fetches the first page; when
the user scrolls near its end, the rest comes in one more call (each `store.list` ranks every
session, so one call beats many) and goes into the table a page at a time from memory. So
10,000 sessions open about as fast as 10. A filter runs `store.search` (title and content) in an exclusive thread
worker that streams batches back as messages; every keystroke cancels the running search and
restarts it after a short debounce. Rename, delete and export run in workers too.
Ctrl+F cycles a source filter (all, TUI, headless) that both the listing and the search
apply in the store; the table's title names it. Ctrl+O switches between this workspace's
sessions (the default when the store knows the workspace and it has any) and every
folder's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import picobot_tui.styles
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Label
from textual.worker import get_current_worker

from picobot_tui.core.sessions.export import default_export_dir, exported_message

from .session_browser_messages import Rows as _Rows
from .session_browser_messages import SearchHits as _SearchHits
from .session_dialogs import ConfirmDeleteDialog, RenameDialog
from .session_list import SessionTable
from .session_preview import SessionPreview

if TYPE_CHECKING:
    from picobot_tui.core.sessions import SessionInfo, SessionStore

CSS_FILE = Path(picobot_tui.styles.__file__).parent / "session_browser.tcss"

FIRST_PAGE = 100  # rows fetched and shown at once: enough to fill any terminal
PAGE = 200  # rows added to the list each time the cursor or viewport nears its end
SEARCH_LIMIT = 500
SEARCH_DEBOUNCE = 0.15  # seconds after the last keystroke
SEARCH_FLUSH = 0.05  # stream search hits to the UI at most this often (the first at once)
PREVIEW_DEBOUNCE = 0.08  # holding ↓ should not start a load per row
# ctrl+f cycles the source filter: (store.list's `source`, the label in the header).
SOURCE_CYCLE: tuple[tuple[str | None, str], ...] = (
    (None, "all"),
    ("tui", "TUI"),
    ("headless", "headless"),
)

BrowserResult = tuple[str, str | None] | None


# ---- widgets ---------------------------------------------------------------------------------


def _without_keys(bindings: Iterable[BindingType], keys: set[str]) -> list[BindingType]:
    out: list[BindingType] = []
    for binding in bindings:
        if not isinstance(binding, Binding):  # a (key, action[, description]) tuple
            binding = Binding(*binding)
        kept = [k for k in binding.key.split(",") if k.strip() not in keys]
        if kept:
            out.append(dataclasses.replace(binding, key=",".join(kept)))
    return out


class FilterInput(Input, inherit_bindings=False):
    """The filter field. Enter, Ctrl+D and Ctrl+E act on sessions here (resume, delete,
    export) rather than on the text: Home, End and Delete still edit it."""

    BINDINGS = _without_keys(Input.BINDINGS, {"enter", "ctrl+d", "ctrl+e"})


# ---- the screen ---------------------------------------------------------------------------


class SessionBrowserScreen(Screen[BrowserResult]):
    """Browse, filter, preview, resume, rename, delete and export sessions."""

    CSS_PATH = CSS_FILE
    AUTO_FOCUS = "#session-filter"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        # Priority so it also beats the list's own Enter (and shows first in the footer).
        Binding("enter", "resume", "Resume", priority=True),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+r,f2", "rename", "Rename"),
        Binding("ctrl+d", "delete", "Delete"),
        Binding("ctrl+e", "export", "Export"),
        Binding("ctrl+f", "cycle_source", "Source"),
        Binding("ctrl+o", "toggle_here", "Here/all"),
        Binding("escape", "close", "Close"),
        Binding("ctrl+s", "close", "Close", show=False),
        # Arrow keys move through the list even while typing in the filter.
        Binding("up", "move('up')", show=False),
        Binding("down", "move('down')", show=False),
        Binding("pageup", "move('page_up')", show=False),
        Binding("pagedown", "move('page_down')", show=False),
    ]

    def __init__(self, store: SessionStore, *, export_dir: Path | None = None) -> None:
        super().__init__()
        self.store = store
        self.export_dir = export_dir
        # Listing (no filter): what has been fetched so far, in order.
        self._browse: list[SessionInfo] = []  # in the list (when no filter), in order
        self._backlog: deque[SessionInfo] = deque()  # fetched, not shown yet
        self._known: set[str] = set()  # keys of both
        self._offset = 0  # rows consumed from store.list
        self._complete = False  # nothing beyond `_offset`
        self._fetching = False
        self._want_more = False  # the user reached the end before the rest arrived
        self._listing_generation = 0  # a new source filter drops rows fetched for the old one
        self._source_index = 0  # into SOURCE_CYCLE
        # Only this workspace's sessions, when the store knows it; an empty first page
        # falls back to all once (a new folder should not open on an empty list).
        self._here = store.workspace is not None
        self._here_fallback = self._here
        # Filter.
        self._query = ""
        self._search_generation = 0
        self._searching = False
        self._search_fresh = False  # the next hits replace the rows still shown
        self._search_timer: Timer | None = None
        self._preview_timer: Timer | None = None

    # ---- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="filter-bar"):
            yield FilterInput(
                placeholder="Type to filter by title or content…",
                id="session-filter",
                select_on_focus=False,
            )
            yield Label("", id="browser-status")
        with Horizontal(id="browser-body"):
            table = SessionTable(id="session-table")
            table.border_title = self._table_title()
            table.show_workspaces(self._mixed)
            yield table
            preview = SessionPreview(id="session-preview")
            preview.border_title = "Preview"
            yield preview
        yield Footer()

    def on_mount(self) -> None:
        self._fetch(FIRST_PAGE)
        self._set_status("loading…")

    @property
    def table(self) -> SessionTable:
        return self.query_one("#session-table", SessionTable)

    @property
    def preview(self) -> SessionPreview:
        return self.query_one("#session-preview", SessionPreview)

    @property
    def filter_input(self) -> Input:
        return self.query_one("#session-filter", Input)

    @property
    def searching(self) -> bool:
        """True while a filter search is pending or running (tests wait on it)."""
        return self._searching or self._search_timer is not None

    def _set_status(self, text: str) -> None:
        self.query_one("#browser-status", Label).update(text)

    def _listing_status(self) -> str:
        n = len(self._browse) + len(self._backlog)
        if not n and self._complete:
            return "no sessions"
        return f"{n:,}{'' if self._complete else '+'} session{'s' if n != 1 else ''}"

    # ---- listing: the first page at once, the rest in one call, shown a page at a time ----

    def _fetch(self, limit: int | None) -> None:
        if self._fetching or self._complete:
            return
        self._fetching = True
        self._fetch_rows(
            self._offset,
            limit,
            self._listing_generation,
            self.source,
            self.workspace,
            fallback=self._here_fallback and not self._offset,
        )

    @work(thread=True, group="listing", exit_on_error=False)
    def _fetch_rows(
        self,
        offset: int,
        limit: int | None,
        generation: int,
        source: str | None,
        workspace: str | None,
        *,
        fallback: bool = False,
    ) -> None:
        everywhere = False
        try:
            if fallback:  # one ranking for both: a second call doubled the time to paint
                rows, everywhere = self.store.list_here_or_all(limit, source=source)
            else:
                rows = self.store.list(
                    limit=limit, offset=offset, source=source, workspace=workspace
                )
        except Exception as error:
            self.post_message(_Rows(generation, offset, limit, [], error=str(error)))
        else:
            self.post_message(_Rows(generation, offset, limit, rows, everywhere=everywhere))

    @on(_Rows)
    def _rows_fetched(self, message: _Rows) -> None:
        if message.generation != self._listing_generation:
            return  # fetched for the source filter before the last ctrl+f
        self._fetching = False
        if message.error:
            self._complete = True
            self._set_status(self._listing_status())
            self.notify(f"Could not list sessions: {message.error}", severity="error")
            return
        if message.everywhere:  # nothing here yet: every folder's, said in the title
            self._here = False
            self.table.border_title = self._table_title()
            self.table.show_workspaces(self._mixed)
        self._here_fallback = False
        self._offset = message.offset + len(message.rows)
        self._complete = message.limit is None or len(message.rows) < message.limit
        # Sessions created meanwhile shift the offsets: skip rows already fetched.
        fresh = [info for info in message.rows if info.key not in self._known]
        self._known.update(info.key for info in fresh)
        self._backlog.extend(fresh)
        first = not self._browse
        if first or self._want_more:
            self._reveal(FIRST_PAGE if first else PAGE)
        else:
            self._set_status(self._listing_status())
        if first and not self._query:
            if self.table.row_count:
                # After the list is painted: rendering the preview's Markdown (and importing
                # markdown-it, the first time) must not delay the first frame (bench #9b).
                self.call_after_refresh(self._selection_changed)
            else:
                self._selection_changed()  # just the "no sessions" note

    def _reveal(self, count: int) -> None:
        """Move up to `count` fetched rows into the listing."""
        self._want_more = not self._backlog and not self._complete
        rows = [self._backlog.popleft() for _ in range(min(count, len(self._backlog)))]
        self._browse.extend(rows)
        if not self._query:
            if rows:
                self.table.add_sessions(rows)
            self._set_status(self._listing_status())

    @on(SessionTable.NearEnd)
    def _near_end(self) -> None:
        if self._query:
            return
        self._reveal(PAGE)
        if not self._backlog:
            # Every store.list call ranks all sessions, so the rest comes in one call (only
            # when the user scrolls: opening the browser costs one page) and is then shown
            # from memory.
            self._fetch(None)

    def _show_listing(self) -> None:
        """Back from a filter to the listing fetched so far."""
        self.table.set_sessions(self._browse)
        self._set_status(self._listing_status())
        self._selection_changed()

    # ---- filter ------------------------------------------------------------------------------

    @on(Input.Changed, "#session-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        query = event.value.strip()
        pending = self._search_timer is not None
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        if query == self._query and not pending and not self._searching:
            return
        # Every keystroke cancels the search in flight; its late hits are dropped by generation.
        self._search_generation += 1
        self.workers.cancel_group(self, "search")
        self._searching = False
        if not query:
            if self._query:  # else the listing is still on screen: a search never started
                self._query = ""
                self._show_listing()
            self._set_status(self._listing_status())
            return
        self._set_status("searching…")
        self._search_timer = self.set_timer(SEARCH_DEBOUNCE, lambda: self._start_search(query))

    def _start_search(self, query: str) -> None:
        self._search_timer = None
        self._query = query
        self._search_generation += 1
        self._searching = True
        self._search_fresh = True
        self._search(query, self._search_generation, self.source, self.workspace)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(
        self, query: str, generation: int, source: str | None, workspace: str | None
    ) -> None:
        worker = get_current_worker()
        hits = None
        batch: list[SessionInfo] = []
        sent_any = False
        last = time.monotonic()
        try:
            hits = self.store.search(query, limit=SEARCH_LIMIT, source=source, workspace=workspace)
            for info in hits:
                if worker.is_cancelled:
                    return
                batch.append(info)
                now = time.monotonic()
                if not sent_any or now - last >= SEARCH_FLUSH:
                    self.post_message(_SearchHits(generation, batch))
                    batch, sent_any, last = [], True, now
        except Exception as error:
            self.post_message(_SearchHits(generation, batch, done=True, error=str(error)))
            return
        finally:
            close = getattr(hits, "close", None)  # a generator: release its open file now
            if close is not None:
                close()
        if not worker.is_cancelled:
            self.post_message(_SearchHits(generation, batch, done=True))

    @on(_SearchHits)
    def _search_hits(self, message: _SearchHits) -> None:
        if message.generation != self._search_generation:
            return  # a newer keystroke superseded this search
        table = self.table
        if self._search_fresh:
            self._search_fresh = False
            table.set_sessions(message.rows)
            self._selection_changed()
        else:
            table.add_sessions(message.rows)
        if message.done:
            self._searching = False
            if message.error:
                self.notify(f"Search failed: {message.error}", severity="error")
        n = table.row_count
        if self._searching:
            self._set_status(f"searching… {n}")
        else:
            more = "+" if n >= SEARCH_LIMIT else ""
            self._set_status(f"{n}{more} match{'es' if n != 1 else ''}" if n else "no matches")
        if message.done and not n:
            self.preview.clear(f"No session matches “{self._query}”.")

    @on(SessionTable.TypeAhead)
    def _type_ahead(self, message: SessionTable.TypeAhead) -> None:
        field = self.filter_input
        field.focus()
        field.insert_text_at_cursor(message.text)

    # ---- selection and preview ------------------------------------------------------------------

    @on(SessionTable.RowHighlighted)
    def _row_highlighted(self) -> None:
        if self._preview_timer is not None:
            self._preview_timer.stop()
        self._preview_timer = self.set_timer(PREVIEW_DEBOUNCE, self._selection_changed)

    def _selection_changed(self) -> None:
        self._preview_timer = None
        info = self.table.selected
        if info is None:
            if self._query:
                note = ""
            elif self.workspace is not None:
                note = "No sessions in this workspace (ctrl+o: every folder's)."
            elif self.source is None:
                note = "No sessions yet."
            else:
                note = f"No {SOURCE_CYCLE[self._source_index][1]} sessions (ctrl+f: all)."
            self.preview.clear(note)
            return
        self.preview.show(self.store, info, self._query)

    # ---- actions --------------------------------------------------------------------------------

    def action_move(self, how: str) -> None:
        table = self.table
        {
            "up": table.action_cursor_up,
            "down": table.action_cursor_down,
            "page_up": table.action_page_up,
            "page_down": table.action_page_down,
        }[how]()

    def _selected_or_bell(self) -> SessionInfo | None:
        info = self.table.selected
        if info is None:
            self.app.bell()
        return info

    def action_resume(self) -> None:
        info = self._selected_or_bell()
        if info is not None:
            self.dismiss(("resume", info.key))

    def action_new_session(self) -> None:
        self.dismiss(("new", None))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_rename(self) -> None:
        info = self._selected_or_bell()
        if info is None:
            return

        def renamed(title: str | None) -> None:
            if title and title != info.title:
                self._rename(info, title)

        self.app.push_screen(RenameDialog(info.title), renamed)

    def action_delete(self) -> None:
        info = self._selected_or_bell()
        if info is None:
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._delete(info)

        self.app.push_screen(ConfirmDeleteDialog(info.title or "(untitled)", info.key), confirmed)

    def action_export(self) -> None:
        info = self._selected_or_bell()
        if info is not None:
            self._export(info)

    # ---- source filter ----------------------------------------------------------------------

    @property
    def source(self) -> str | None:
        """The source filter (a SOURCE_FILTERS name of the store), None for every session."""
        return SOURCE_CYCLE[self._source_index][0]

    @property
    def workspace(self) -> str | None:
        """The workspace filter: the store's workspace while on "here", else None (all)."""
        return self.store.workspace if self._here else None

    @property
    def _mixed(self) -> bool:
        """Sessions of every folder are listed, and the store knows which one is this."""
        return self.workspace is None and self.store.workspace is not None

    def _table_title(self) -> str:
        label = SOURCE_CYCLE[self._source_index][1]
        title = "Sessions" if self.source is None else f"Sessions · {label} only"
        if self.workspace is not None:
            return f"{title} · this workspace (ctrl+o: all)"
        if self.store.workspace is not None:
            return f"{title} · all workspaces"
        return title

    def action_cycle_source(self) -> None:
        """All → TUI → headless (-m, --json, the library) → all: the listing starts over
        from the store, and a filter in the field searches again within the new source."""
        self._source_index = (self._source_index + 1) % len(SOURCE_CYCLE)
        self._restart_listing()

    def action_toggle_here(self) -> None:
        """This workspace's sessions ↔ every folder's (when the store knows the workspace)."""
        if self.store.workspace is None:
            self.notify("picobot does not know this workspace: every session is shown.")
            return
        self._here, self._here_fallback = not self._here, False
        self._restart_listing()

    def _restart_listing(self) -> None:
        """Start the listing (and a filter's search) over after a filter changed."""
        self.table.border_title = self._table_title()
        self.table.show_workspaces(self._mixed)
        self._listing_generation += 1
        self._browse, self._backlog, self._known = [], deque(), set()
        self._offset, self._complete, self._fetching, self._want_more = 0, False, False, False
        if not self._query:
            self.table.set_sessions([])
            self._set_status("loading…")
        elif self._search_timer is None:  # else the pending search runs in the new source
            self._start_search(self._query)
        self._fetch(FIRST_PAGE)

    # ---- store mutations, off the UI thread ---------------------------------------------------

    @work(group="mutate", exit_on_error=False)
    async def _rename(self, info: SessionInfo, title: str) -> None:
        try:
            await asyncio.to_thread(self.store.rename, info.key, title)
        except Exception as error:
            self.notify(f"Rename failed: {error}", severity="error")
            return
        renamed = dataclasses.replace(info, title=title)
        self._browse = [renamed if i.key == info.key else i for i in self._browse]
        self.table.update_session(renamed)
        if self.table.selected is not None and self.table.selected.key == info.key:
            self._selection_changed()

    @work(group="mutate", exit_on_error=False)
    async def _delete(self, info: SessionInfo) -> None:
        try:
            await asyncio.to_thread(self.store.delete, info.key)
        except Exception as error:
            self.notify(f"Delete failed: {error}", severity="error")
            return
        if info.key in self._known:
            self._known.discard(info.key)
            self._browse = [i for i in self._browse if i.key != info.key]
            self._offset = max(0, self._offset - 1)  # the rest shifts up by one
        self.table.remove_session(info.key)
        if not self._query:
            self._set_status(self._listing_status())
        self._selection_changed()
        self.notify(f"Deleted “{info.title or info.key}”.")

    @work(group="mutate", exit_on_error=False)
    async def _export(self, info: SessionInfo) -> None:
        try:
            path = await asyncio.to_thread(
                self.store.export_file, info.key, self.export_dir or default_export_dir()
            )
        except Exception as error:
            self.notify(f"Export failed: {error}", severity="error")
            return
        self.notify(exported_message(path), title="Export")
