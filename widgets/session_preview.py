"""Read-only preview of a stored session's transcript, for the session browser.

`render_transcript` is a pure function (no I/O, no widgets) so it can run in a worker thread
and be tested directly. All user, model and tool text goes in as plain text, never as markup:
a message containing `[bold]` or `[interrupted]` must show those characters literally. The
assistant's text is rendered as Markdown (`preview_markdown`), only for the previewed session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from textual import on, work
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from picobot_tui.core import json_input
from picobot_tui.core.content import content_text
from picobot_tui.core.textsafe import safe_value, terminal_safe
from picobot_tui.core.visible import label

from .preview_markdown import markdown_content

if TYPE_CHECKING:
    from picobot_tui.core.sessions import SessionInfo, SessionStore

# Keep the preview cheap for long sessions: it is a glance, not the conversation pane.
MAX_CHARS = 1_200  # per message
MAX_LINES = 16  # per message
HEAD = 20  # messages kept from the start of a long session ...
TAIL = 150  # ... and from its end
MAX_SNIPPETS = 5

SOURCE_LABELS = {"tui": "TUI", "headless": "agent -m", "json": "agent --json", "library": "library"}
_ROLE_STYLE = {"user": "bold $accent", "assistant": "bold $success", "system": "bold $warning"}


def message_text(message: Mapping[str, Any]) -> str:
    """The plain text of a chat message; content may be a string or a list of parts."""
    return content_text(message.get("content"))


def one_line(text: str, width: int) -> str:
    """Collapse whitespace, show controls as stand-ins, cut to `width` with an ellipsis."""
    return label(text, width)


def _clip(text: str) -> tuple[str, bool]:
    """`text` cut to MAX_LINES and MAX_CHARS, and whether anything was cut."""
    text = text.strip("\n")
    lines = text.splitlines()
    cut = False
    if len(lines) > MAX_LINES:
        lines, cut = lines[:MAX_LINES], True
    text = "\n".join(lines)
    if len(text) > MAX_CHARS:
        text, cut = text[:MAX_CHARS], True
    return text, cut


def tool_call_summary(call: Mapping[str, Any], width: int = 70) -> tuple[str, str]:
    """(name, one-line arguments) for an OpenAI-style tool call."""
    function = call.get("function") or {}
    name = str(function.get("name") or call.get("name") or "tool")
    raw = function.get("arguments", call.get("arguments", ""))
    args: Any = raw
    if isinstance(raw, str):
        try:
            args = json_input.loads(raw) if raw.strip() else {}
        except ValueError:
            args = raw
    if isinstance(args, Mapping):
        if len(args) == 1:
            # exec(command=...), read_file(path=...): the value alone says it all.
            shown = str(next(iter(args.values())))
        else:
            shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    else:
        shown = str(args)
    return label(name), one_line(shown, width)


def _selected_indices(messages: Sequence[Mapping[str, Any]], pattern: re.Pattern[str] | None):
    """Which messages to show: all of a short session; head, tail and matches of a long one."""
    n = len(messages)
    if n <= HEAD + TAIL:
        return list(range(n))
    keep = set(range(HEAD)) | set(range(n - TAIL, n))
    if pattern is not None:
        hits = [i for i, m in enumerate(messages) if pattern.search(message_text(m))]
        keep.update(hits[:MAX_SNIPPETS])
    return sorted(keep)


def _header(info: SessionInfo | None, count: int) -> list[Content]:
    if info is None:
        return []
    meta = " · ".join(
        part
        for part in (
            info.key,
            info.model or "no model",
            f"{count} message{'s' if count != 1 else ''}",
            SOURCE_LABELS.get(info.source or "", ""),
            f"in {label(info.workspace)}" if info.workspace else "",
            "" if info.answered else "no answer yet",
        )
        if part
    )
    return [
        Content.styled(label(info.title or "(untitled)"), "bold"),
        Content.styled(terminal_safe(meta), "$text-muted"),
        Content(""),
    ]


def render_transcript(
    messages: Sequence[Mapping[str, Any]],
    info: SessionInfo | None = None,
    query: str = "",
) -> Content:
    """Render messages as a compact transcript: tool calls on one line each, results summarised.

    With a query, matches are listed first (a word from the middle of a long session is then
    visible without scrolling) and highlighted throughout.
    """
    pattern = re.compile(re.escape(query.strip()), re.IGNORECASE) if query.strip() else None
    messages = [
        cast(Mapping[str, Any], safe_value(m)) for m in messages
    ]  # stored text may hold escape sequences
    out: list[Content] = _header(info, len(messages))
    if pattern is not None:
        matches = _match_lines(messages, pattern, query.strip())
        out.extend(matches)
    tool_names: dict[str, str] = {}
    previous = -1
    for index in _selected_indices(messages, pattern):
        if index != previous + 1:
            out.append(Content.styled(f"… {index - previous - 1} messages not shown …", "italic"))
            out.append(Content(""))
        previous = index
        out.extend(_render_message(messages[index], tool_names))
    if not messages:
        out.append(Content.styled("(no messages)", "italic $text-muted"))
    content = Content("\n").join(out).rstrip()
    if pattern is not None:
        content = content.highlight_regex(pattern, style="reverse")
    return content


def _match_lines(
    messages: Sequence[Mapping[str, Any]], pattern: re.Pattern[str], query: str
) -> list[Content]:
    lines: list[Content] = []
    total = 0
    for index, message in enumerate(messages):
        text = message_text(message)
        for match in pattern.finditer(text):
            total += 1
            if len(lines) < MAX_SNIPPETS:
                start = max(0, match.start() - 30)
                snippet = one_line(text[start : match.end() + 40], 70)
                role = str(message.get("role", "?"))
                lines.append(Content.assemble((f"  #{index + 1} {role}: ", "$text-muted"), snippet))
    if not total:
        return []
    title = f"{total} match{'es' if total != 1 else ''} for “{query}”"
    return [Content.styled(title, "bold"), *lines, Content("")]


def _render_message(message: Mapping[str, Any], tool_names: dict[str, str]) -> Iterable[Content]:
    role = str(message.get("role", "?"))
    text = message_text(message)
    suffix = (
        Content.styled("  (interrupted)", "italic $text-muted")
        if message.get("interrupted")
        else ""
    )
    if role == "tool":
        name = str(message.get("name") or tool_names.get(str(message.get("tool_call_id")), "tool"))
        lines = text.strip().splitlines() or [""]
        more = f"  (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        style = "$error" if lines[0].lower().startswith("error") else "$text-muted"
        yield Content.assemble(
            ("  ↳ ", "$text-muted"),
            (name, "bold $text-muted"),
            ": ",
            (one_line(lines[0], 60), style),
            (more, "$text-muted"),
        )
        yield Content("")
        return
    if role == "system":
        yield Content.assemble(
            ("system", _ROLE_STYLE["system"]), ("  " + one_line(text, 60), "$text-muted")
        )
        yield Content("")
        return
    label = "you" if role == "user" else role
    yield Content.assemble((label, _ROLE_STYLE.get(role, "bold")), suffix)
    if text.strip():
        clipped, cut = _clip(text)
        # The model writes Markdown: render it. What the user typed shows as typed.
        yield markdown_content(clipped) if role == "assistant" else Content(clipped)
        if cut:
            yield Content.styled("…", "$text-muted")
    for call in message.get("tool_calls") or ():
        name, args = tool_call_summary(call)
        if call.get("id"):
            tool_names[str(call["id"])] = name
        yield Content.assemble(("  ⚙ ", "$warning"), (name, "bold"), " ", (args, "$text-muted"))
    yield Content("")


class SessionPreview(VerticalScroll, can_focus=True):
    """Shows one session's transcript; loads it off the UI thread."""

    def compose(self):
        yield Static("", id="preview-body", markup=False)

    loaded: bool = False
    """True once the latest requested session is on screen (tests wait on it)."""
    key: str | None = None
    """The session shown or being loaded."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._request: object | None = None

    def clear(self, note: str = "") -> None:
        self._request = None
        self.loaded = False
        self.key = None
        self.workers.cancel_group(self, "preview")
        self.query_one("#preview-body", Static).update(Content.styled(note, "italic $text-muted"))

    def show(self, store: SessionStore, info: SessionInfo, query: str = "") -> None:
        """Load and render `info`'s messages in a worker; the newest request wins."""
        self._request = request = object()
        self.loaded = False
        self.key = info.key
        self._load(store, info, query, request)

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def _load(self, store: SessionStore, info: SessionInfo, query: str, request: object) -> None:
        try:
            messages = store.load_messages(info.key)
            content = render_transcript(messages, info, query)
        except Exception as error:  # a broken file must not take the browser down
            content = Content.styled(f"Could not load {info.key}: {error}", "$error")
        if not get_current_worker().is_cancelled:
            self.post_message(self._Loaded(content, request))  # thread-safe, never blocks

    class _Loaded(Message):
        def __init__(self, content: Content, request: object) -> None:
            super().__init__()
            self.content, self.request = content, request

    @on(_Loaded)
    def _loaded(self, message: _Loaded) -> None:
        message.stop()
        if message.request is not self._request:
            return  # a newer selection is already loading
        self.query_one("#preview-body", Static).update(message.content)
        self.scroll_home(animate=False)
        self.loaded = True
