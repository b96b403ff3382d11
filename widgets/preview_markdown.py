"""Markdown as one `Content`, for the session browser's preview: cheap enough to render a
whole previewed session in the preview's worker thread, with no widget per block.

Headings, emphasis, code (inline and fenced), lists, quotes, rules, links and tables get a
style; everything else shows as its text. Text goes in as text, never as Textual markup, and
every piece is passed through `terminal_safe` again after parsing: a Markdown entity such as
`&#27;` decodes to a raw ESC.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from textual.content import Content

from picobot_tui.core.textsafe import terminal_safe

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

CODE_STYLE = "$accent"
MUTED = "$text-muted"
_INLINE_STYLES = {
    "strong": "bold",
    "em": "italic",
    "s": "strike",
    "link": "underline",
}
_HEADING_STYLES = {"h1": "bold underline", "h2": "bold"}


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # markdown-it-py comes with Rich; imported on first use

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _inline(children: Sequence[Token], base: str = "") -> Content:
    """An inline token's children (text, emphasis, code, links, breaks) as styled text."""
    styles: list[str] = [base] if base else []
    parts: list[str | tuple[str, str]] = []

    def add(text: str, extra: str = "") -> None:
        style = " ".join([*styles, extra]).strip()
        text = terminal_safe(text)
        parts.append((text, style) if style else text)

    for token in children:
        kind = token.type
        if kind.endswith("_open") and kind[:-5] in _INLINE_STYLES:
            styles.append(_INLINE_STYLES[kind[:-5]])
        elif kind.endswith("_close") and kind[:-6] in _INLINE_STYLES:
            if len(styles) > (1 if base else 0):
                styles.pop()
        elif kind == "code_inline":
            add(token.content, CODE_STYLE)
        elif kind == "softbreak":
            add(" ")
        elif kind == "hardbreak":
            add("\n")
        elif kind == "image":
            add(f"[image: {token.content}]" if token.content else "[image]", MUTED)
        else:  # text, html_inline and anything newer: its text as written
            add(token.content)
    return Content.assemble(*parts)


class _Writer:
    """Collects lines, each with the prefix of the quotes and list items it sits in."""

    def __init__(self) -> None:
        self.lines: list[Content] = []
        self.quotes = 0
        self.items: list[int] = []  # the marker width of each open list item
        self.marker: str | None = None  # the bullet waiting for its item's first line
        self.gap = False  # a blank line is due before the next block

    def _prefix(self) -> Content:
        bar = Content.styled("▌ " * self.quotes, MUTED) if self.quotes else Content("")
        if not self.items:
            return bar
        indent = " " * sum(self.items[:-1])
        if self.marker is not None:
            mark, self.marker = self.marker, None
            return Content.assemble(bar, indent, (mark, MUTED))
        return Content.assemble(bar, indent, " " * self.items[-1])

    def block(self, content: Content) -> None:
        """Add a block's lines (`content` may hold newlines)."""
        if self.gap and self.lines:
            self.lines.append(Content(""))
        self.gap = False
        for line in content.split("\n"):
            self.lines.append(self._prefix() + line)


def markdown_content(text: str) -> Content:
    """`text` (Markdown) rendered as one Content with styles; never raises on odd input."""
    tokens = _parser().parse(text)
    out = _Writer()
    lists: list[list[int]] = []  # per open list: [ordered, next number]
    row: list[Content] | None = None
    heading = ""
    for token in tokens:
        kind = token.type
        if kind == "heading_open":
            heading = _HEADING_STYLES.get(token.tag, "bold")
        elif kind == "heading_close":
            heading = ""
            out.gap = True
        elif kind == "inline":
            if row is not None:
                row.append(_inline(token.children or ()))
            else:
                out.block(_inline(token.children or (), heading))
        elif kind == "paragraph_close":
            out.gap = not token.hidden  # a tight list's items stay together
        elif kind in ("bullet_list_open", "ordered_list_open"):
            lists.append([kind == "ordered_list_open", int(token.attrs.get("start", 1) or 1)])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
            out.gap = not lists  # a nested list ends inside its item
        elif kind == "list_item_open":
            ordered, number = lists[-1] if lists else [False, 1]
            mark = f"{number}. " if ordered else "• "
            if lists:
                lists[-1][1] = number + 1
            out.items.append(len(mark))
            out.marker = mark
        elif kind == "list_item_close":
            if out.items:
                out.items.pop()
            out.marker = None
        elif kind == "blockquote_open":
            out.quotes += 1
        elif kind == "blockquote_close":
            out.quotes = max(0, out.quotes - 1)
            out.gap = True
        elif kind in ("fence", "code_block"):
            code = terminal_safe(token.content.rstrip("\n"))
            lines = [
                Content.assemble(("│ ", MUTED), (line, CODE_STYLE)) for line in code.split("\n")
            ]
            out.block(Content("\n").join(lines))
            out.gap = True
        elif kind == "hr":
            out.block(Content.styled("─" * 24, MUTED))
            out.gap = True
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and row is not None:
            out.block(Content(" │ ").join(row))
            row = None
        elif kind == "table_close":
            out.gap = True
        elif kind == "html_block":
            out.block(Content(terminal_safe(token.content.rstrip("\n"))))
            out.gap = True
    return Content("\n").join(out.lines)
