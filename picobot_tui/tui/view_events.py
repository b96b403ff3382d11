"""The TUI's own events, next to the core's: what session switching and starting show.

The switcher and the app produce these; the EventRouter applies them, so the router stays
the one module that writes to the panes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AppStarting:
    """The first frame, before the settings are loaded: the model asked for, `starting`."""

    model: str


@dataclass(frozen=True)
class AppStarted:
    """Settings and runtime are loaded: show the model, go idle, size the gauge."""

    model: str
    token_budget: int


@dataclass(frozen=True)
class PanesCleared:
    """Empty the conversation, the timeline and the gauge (new or other session)."""

    token_budget: int


@dataclass(frozen=True)
class SessionLabelled:
    """The status bar's session label, e.g. `20260101-ab12 (new)`."""

    label: str


@dataclass(frozen=True)
class HistoryLoaded:
    """A stored session's messages (OpenAI format), shown with their tool calls."""

    messages: list[dict[str, Any]]


@dataclass(frozen=True)
class UserSent:
    """The user's message is shown and a turn starts on it."""

    text: str


@dataclass(frozen=True)
class NoticeShown:
    """A notice of the app's own (help, a credentials problem, an internal error)."""

    kind: str
    text: str


@dataclass(frozen=True)
class ModelShown:
    """The model the next turns use (`/model NAME`)."""

    name: str


@dataclass(frozen=True)
class ExecNoteShown:
    """The status bar's warning about exec's sandbox (empty when it is sandboxed)."""

    note: str


@dataclass(frozen=True)
class ConversationCleared:
    """`/clear`: empty the conversation pane only (the session keeps its history)."""


@dataclass(frozen=True)
class McpShown:
    """The status bar's MCP cell: `mcp 2/3` ("" with no server configured), and `state`:
    "failed" when any server failed, else "connecting" while any connects, else "connected"."""

    summary: str
    state: str


@dataclass(frozen=True)
class HelpShown:
    """`/help`: (key, description) rows in sections, a ("Title:", "") row heading each."""

    rows: tuple[tuple[str, str], ...]


ViewEvent = (
    AppStarting
    | AppStarted
    | PanesCleared
    | SessionLabelled
    | HistoryLoaded
    | UserSent
    | NoticeShown
    | HelpShown
    | ModelShown
    | ExecNoteShown
    | ConversationCleared
    | McpShown
)
VIEW_EVENTS = (
    AppStarting,
    AppStarted,
    PanesCleared,
    SessionLabelled,
    HistoryLoaded,
    UserSent,
    NoticeShown,
    HelpShown,
    ModelShown,
    ExecNoteShown,
    ConversationCleared,
    McpShown,
)
"""The classes of `ViewEvent`, for isinstance checks."""
