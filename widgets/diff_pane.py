"""A diff viewer: side by side when there is room, unified when narrow, highlighted by file type.

`DiffView(text, path=...)` takes a unified diff (what the file tools' previews and the
checkpoints' `FileDiff.text` hold) and lays it out for its own width: at `SPLIT_WIDTH` cells
or more, the old text on the left and the new on the right, a removed run paired line by line
with the added run that replaced it; narrower, one column with `-`/`+` marks. Long lines wrap
(nothing of a change is ever cut off, as this shows what the user is asked to allow). Lines
are highlighted with Textual's Pygments highlighter when the path names a known file type;
each side of a hunk is highlighted as one piece, so a string spanning lines stays a string.

Lines before the first hunk that are not diff headers (`new file: a.txt (3 lines)`, the
checkpoints' `not undoable: …`) are shown above it as notes; a `not undoable` note stands out.

Built on difflib's unified format rather than textual-diff-view (AGPL-3.0, and picobot is
MIT): the view needs only the hunks, which every producer here already writes.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Literal

from rich.cells import cell_len
from textual import events
from textual.content import Content
from textual.widgets import Static

SPLIT_WIDTH = 100
"""At this many cells or more the diff is shown side by side."""
TAB = "    "

_HUNK_RE = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)")
_HEADERS = ("diff --git ", "index ", "--- ", "+++ ", "similarity ", "rename ", "\\ ")
_MODE_LINES = ("new file mode", "deleted file mode", "old mode", "new mode")

Side = Literal["old", "new"]

# The core's stand-ins for control and invisible characters (picobot_tui.core.visible).
_STAND_IN_RE = re.compile("[\u2400-\u2421]|\u27e8U\\+[0-9A-F]{4,6}\u27e9")


def mark_stand_ins(content: Content) -> Content:
    """Highlight the stand-ins of escapes and invisible characters, so they stand out."""
    for m in _STAND_IN_RE.finditer(content.plain):
        content = content.stylize("bold reverse $text-warning", m.start(), m.end())
    return content


@dataclass
class Line:
    kind: Literal[" ", "-", "+"]
    text: str
    old_no: int | None = None
    new_no: int | None = None


@dataclass
class Hunk:
    header: str
    lines: list[Line] = field(default_factory=list)


@dataclass
class ParsedDiff:
    notes: list[str] = field(default_factory=list)
    hunks: list[Hunk] = field(default_factory=list)
    path: str | None = None

    @property
    def added(self) -> int:
        return sum(1 for h in self.hunks for line in h.lines if line.kind == "+")

    @property
    def removed(self) -> int:
        return sum(1 for h in self.hunks for line in h.lines if line.kind == "-")


def parse_unified(text: str) -> ParsedDiff:
    """The notes, hunks and file path of a unified diff (one or more files). A hunk holds as
    many lines as its header counts, so a removed `-- x` line is never taken for a header."""
    out = ParsedDiff()
    hunk: Hunk | None = None
    old_no = new_no = old_left = new_left = 0
    for raw in text.splitlines():
        if hunk is not None and (old_left > 0 or new_left > 0):
            kind = raw[:1] or " "
            if kind in (" ", "-", "+"):
                line = Line(" " if kind == " " else "-" if kind == "-" else "+", raw[1:])
                if kind != "+":
                    line.old_no, old_no, old_left = old_no, old_no + 1, old_left - 1
                if kind != "-":
                    line.new_no, new_no, new_left = new_no, new_no + 1, new_left - 1
                hunk.lines.append(line)
                continue
            if raw.startswith("\\"):
                continue  # "\ No newline at end of file"
        m = _HUNK_RE.match(raw)
        if m:
            old_no, new_no = int(m.group(1)), int(m.group(3))
            old_left = int(m.group(2)) if m.group(2) is not None else 1
            new_left = int(m.group(4)) if m.group(4) is not None else 1
            hunk = Hunk(raw)
            out.hunks.append(hunk)
            continue
        hunk = None
        if raw.startswith(("+++ ", "--- ")):
            name = raw[4:].strip()
            if name != "/dev/null" and (out.path is None or raw.startswith("+++")):
                out.path = name[2:] if name[:2] in ("a/", "b/") else name
            continue
        if raw.startswith(_HEADERS):
            continue
        if raw.startswith(_MODE_LINES) or raw.strip():
            out.notes.append(raw)
    return out


def _highlighted(lines: list[str], path: str | None) -> list[Content]:
    """Each line as Content, highlighted as one piece of code when the file type is known."""
    plain = [line.replace("\t", TAB) for line in lines]
    if path and plain:
        try:
            from textual.highlight import guess_language, highlight

            language = guess_language("\n".join(plain), path)
            if language and language not in ("text", "default"):
                parts = highlight("\n".join(plain), language=language, path=path).split("\n")
                if len(parts) == len(plain):
                    return [mark_stand_ins(p) for p in parts]
        except Exception:  # highlighting is a nicety: plain text is always right
            pass
    return [mark_stand_ins(Content(p)) for p in plain]


def _wrap(content: Content, width: int) -> list[Content]:
    """`content` cut into pieces of at most `width` cells (at least one piece)."""
    if width <= 0:
        return [content]
    plain = content.plain
    offsets: list[int] = []
    used = 0
    for i, ch in enumerate(plain):
        w = cell_len(ch)
        if used + w > width:
            offsets.append(i)
            used = 0
        used += w
    if not offsets:
        return [content]
    return list(content.divide(offsets))


def _pad(content: Content, width: int) -> Content:
    gap = width - content.cell_length
    return content + Content(" " * gap) if gap > 0 else content


WORD_OLD = "bold on $error 35%"
WORD_NEW = "bold on $success 35%"


def emphasize(
    old: tuple[Line, Content], new: tuple[Line, Content]
) -> tuple[tuple[Line, Content], tuple[Line, Content]]:
    """A removed line and the added line that replaced it, what differs between them marked
    (when they are alike enough for that to help, and hold no tab: offsets stay exact)."""
    a, b = old[0].text, new[0].text
    if "\t" in a or "\t" in b or a == b:
        return old, new
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < 0.5:
        return old, new
    left, right = old[1], new[1]
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if i2 > i1:
            left = left.stylize(WORD_OLD, i1, i2)
        if j2 > j1:
            right = right.stylize(WORD_NEW, j1, j2)
    return (old[0], left), (new[0], right)


_ROW_STYLE = {"-": "on $error-muted", "+": "on $success-muted", " ": ""}
_MARK_STYLE = {"-": "bold $text-error", "+": "bold $text-success", " ": "$text-muted"}


class DiffView(Static):
    """A unified diff laid out for the widget's width (see the module docstring)."""

    DEFAULT_CSS = """
    DiffView { height: auto; width: 1fr; }
    """

    def __init__(
        self,
        text: str,
        *,
        path: str | None = None,
        split_width: int = SPLIT_WIDTH,
        show_path: bool = True,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__("", id=id, classes=classes)
        self.text = text
        self.diff = parse_unified(text)
        self.path = path or self.diff.path
        self.split_width = split_width
        self.show_path = show_path
        self._width = 0
        self._code: dict[tuple[int, Side], list[Content]] = {}

    @property
    def split(self) -> bool:
        """Side by side at the current width."""
        return self._width >= self.split_width

    def on_resize(self, event: events.Resize) -> None:
        width = self.content_size.width
        if width and width != self._width:
            self._width = width
            self.update(self.render_for(width))

    def on_mount(self) -> None:
        if self.content_size.width:
            self.on_resize(events.Resize(self.size, self.size))

    def _side_code(self, index: int, side: Side) -> list[Content]:
        """The highlighted lines of one side of hunk `index` (context and its own changes)."""
        key = (index, side)
        if key not in self._code:
            drop = "+" if side == "old" else "-"
            lines = [line.text for line in self.diff.hunks[index].lines if line.kind != drop]
            self._code[key] = _highlighted(lines, self.path)
        return self._code[key]

    def render_for(self, width: int) -> Content:
        """The whole view at `width` cells: notes, then each hunk."""
        rows: list[Content] = []
        if self.diff.path and self.show_path:  # the file, as `--- a/x` / `+++ b/x` name it
            rows.extend(_wrap(mark_stand_ins(Content.styled(self.diff.path, "bold")), width))
        for note in self.diff.notes:
            style = "bold $text-warning" if note.startswith("not undoable") else "$text-muted"
            rows.extend(_wrap(Content.styled(note, style), width))
        numbers = [
            n for h in self.diff.hunks for line in h.lines for n in (line.old_no, line.new_no) if n
        ]
        digits = len(str(max(numbers, default=1)))
        for index, hunk in enumerate(self.diff.hunks):
            rows.append(Content.styled(hunk.header[:width], "$text-accent"))
            if width >= self.split_width:
                rows.extend(self._split_rows(index, width, digits))
            else:
                rows.extend(self._unified_rows(index, width, digits))
        if not rows:
            rows.append(Content.styled("(no changes)", "$text-muted"))
        return Content("\n").join(rows)

    def _cell(self, no: int | None, kind: str, code: Content | None, width: int) -> list[Content]:
        """One side of a row: number, mark and code, wrapped and padded to `width`."""
        digits = self._digits
        if code is None:
            return [Content.styled(" " * width, "on $panel")]
        gutter = Content.styled(f"{no or '':>{digits}} ", "$text-muted")
        mark = Content.styled(f"{kind} ", _MARK_STYLE[kind])
        room = max(1, width - digits - 3)
        pieces = _wrap(code, room)
        out = []
        for i, piece in enumerate(pieces):
            head = gutter + mark if i == 0 else Content(" " * (digits + 3))
            cell = _pad(head + piece, width)
            out.append(cell.stylize(_ROW_STYLE[kind]) if _ROW_STYLE[kind] else cell)
        return out

    _digits = 1

    def _split_rows(self, index: int, width: int, digits: int) -> list[Content]:
        self._digits = digits
        half = (width - 1) // 2
        right = width - 1 - half
        old_code = iter(self._side_code(index, "old"))
        new_code = iter(self._side_code(index, "new"))
        rows: list[Content] = []
        removed: list[tuple[Line, Content]] = []
        added: list[tuple[Line, Content]] = []

        def flush() -> None:
            for i in range(max(len(removed), len(added))):
                left = removed[i] if i < len(removed) else None
                new = added[i] if i < len(added) else None
                if left and new:
                    left, new = emphasize(left, new)
                rows.extend(
                    self._pair(
                        self._cell(left[0].old_no, "-", left[1], half) if left else None,
                        self._cell(new[0].new_no, "+", new[1], right) if new else None,
                        half,
                        right,
                    )
                )
            removed.clear()
            added.clear()

        for line in self.diff.hunks[index].lines:
            if line.kind == "-":
                removed.append((line, next(old_code)))
            elif line.kind == "+":
                added.append((line, next(new_code)))
            else:
                flush()
                a, b = next(old_code), next(new_code)
                rows.extend(
                    self._pair(
                        self._cell(line.old_no, " ", a, half),
                        self._cell(line.new_no, " ", b, right),
                        half,
                        right,
                    )
                )
        flush()
        return rows

    def _pair(
        self, left: list[Content] | None, right: list[Content] | None, lw: int, rw: int
    ) -> list[Content]:
        left = left or self._cell(None, " ", None, lw)
        right = right or self._cell(None, " ", None, rw)
        height = max(len(left), len(right))
        blank_l = Content(" " * lw)
        blank_r = Content(" " * rw)
        bar = Content.styled("│", "$text-muted")
        return [
            (left[i] if i < len(left) else blank_l)
            + bar
            + (right[i] if i < len(right) else blank_r)
            for i in range(height)
        ]

    def _unified_rows(self, index: int, width: int, digits: int) -> list[Content]:
        self._digits = digits
        old_code = iter(self._side_code(index, "old"))
        new_code = iter(self._side_code(index, "new"))
        rows: list[Content] = []
        for line in self.diff.hunks[index].lines:
            if line.kind == "-":
                rows.extend(self._cell(line.old_no, "-", next(old_code), width))
            elif line.kind == "+":
                rows.extend(self._cell(line.new_no, "+", next(new_code), width))
            else:
                next(old_code)
                rows.extend(self._cell(line.new_no, " ", next(new_code), width))
        return rows
