"""What the session browser's worker threads post back to it (post_message is thread-safe).

Each carries the generation it was started for: a newer keystroke or source filter makes
the screen drop it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from picobot_tui.core.sessions import SessionInfo


class Rows(Message):
    """A page of the listing (`limit` None: the rest of it). `everywhere`: the first page
    asked for this workspace's sessions came from every folder's, as it has none."""

    def __init__(
        self,
        generation: int,
        offset: int,
        limit: int | None,
        rows: list[SessionInfo],
        error: str = "",
        everywhere: bool = False,
    ) -> None:
        super().__init__()
        self.generation, self.offset, self.limit = generation, offset, limit
        self.rows, self.error, self.everywhere = rows, error, everywhere


class SearchHits(Message):
    """A batch of search hits; `done` with the last one."""

    def __init__(
        self, generation: int, rows: list[SessionInfo], done: bool = False, error: str = ""
    ) -> None:
        super().__init__()
        self.generation, self.rows, self.done, self.error = generation, rows, done, error
