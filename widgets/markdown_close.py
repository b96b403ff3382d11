"""Closing what a cut answer left open, so an interrupted answer shows as Markdown.

An answer interrupted mid-phrase ("You said: _tell") ends inside an emphasis, an inline code
span or a code fence, and Markdown then shows the opening mark as it is. The closers are
added for display only: the session keeps the text as it was received. Hand-written: no
Python library does this (Streamdown's `remend` is JavaScript). It closes what a cut can
leave open in the last paragraph (a ``` or ~~~ fence, `code`, ** __ * _ ~~), using
CommonMark's flanking rules so bullets, snake_case and spaced stars are left alone.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_RUN = re.compile(r"\*\*|__|~~|\*|_")


def close_open_markup(text: str) -> str:
    """`text` with the marks its last paragraph leaves open closed, innermost first."""
    fences = _FENCE.findall(text)
    if len(fences) % 2:
        return text.rstrip("\n") + "\n" + fences[-1]  # inside a code block: close it only
    body = text.rstrip()
    para = body.rsplit("\n\n", 1)[-1]
    tail = ""
    plain = _CODE_SPAN.sub(lambda m: " " * len(m.group()), para)
    if "`" in plain:  # an inline code span left open: what follows it is code
        plain = plain[: plain.index("`")]
        tail = "`"
    stack: list[str] = []
    for m in _RUN.finditer(plain):
        mark, before, after = m.group(), plain[m.start() - 1 : m.start()], plain[m.end() :][:1]
        left = bool(after) and not after.isspace()  # may open
        right = bool(before) and not before.isspace()  # may close
        if mark[0] == "_" and before.isalnum() and after.isalnum():
            continue  # snake_case: never emphasis
        if right and mark in stack:
            while stack and stack.pop() != mark:
                pass
        elif left:
            stack.append(mark)
    if not stack and not tail:
        return text
    return body + tail + "".join(reversed(stack))
