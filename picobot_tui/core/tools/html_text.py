"""A crude HTML-to-text conversion: good enough for a model to read a page."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "template", "svg", "head", "iframe", "object"}
_BLOCK = {
    "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "br", "hr",
    "li", "ul", "ol", "dl", "dt", "dd", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
    "pre", "blockquote", "figure", "figcaption", "form", "title",
}  # fmt: skip


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP:
            self._skip += 1
        if tag == "pre":
            self._pre += 1
        if tag in _BLOCK:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")
        elif tag in {"h1", "h2", "h3"}:
            self.parts.append("#" * int(tag[1]) + " ")
        elif tag in {"td", "th"}:
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP and self._skip:
            self._skip -= 1
        if tag == "pre" and self._pre:
            self._pre -= 1
        if tag in _BLOCK and tag != "li":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data if self._pre else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """Visible text of a page, with its title first; scripts and styles dropped."""
    parser = _Extractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # HTMLParser is lenient, but never let a page break the tool
        pass
    text = "".join(parser.parts)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n[ \t]+", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    title = re.sub(r"\s+", " ", parser.title).strip()
    return f"# {title}\n\n{text}" if title else text
