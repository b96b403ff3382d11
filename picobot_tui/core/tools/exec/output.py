"""exec's output capture: the head and the tail of a stream, masked before it is cut.

A command's output can be far larger than a tool result, so only its first and last parts
are kept. Cutting first and scrubbing later would keep a key that straddles a cut in pieces
(neither piece is the key, so the scrubber misses both). So each part is kept with a margin
of `scrub.longest` characters (the longest spelling of any known secret), and at the end
each cut point is moved off any secret it falls inside before the parts are scrubbed: the
head's cut back to the secret's start, the tail's forward to its end. A secret that starts
before a cut point is whole within the margin, so it is always seen whole.
"""

from __future__ import annotations

import codecs

from picobot_tui.core.secrets import Scrubber


def _off_secrets(scrub: Scrubber | None, text: str, cut: int, *, back: bool) -> int:
    """`cut`, moved to the start (back) or end of a secret that straddles it."""
    if scrub is None:
        return cut
    for start, end in scrub.spans(text):
        if start < cut < end:
            return start if back else end
        if start >= cut:
            break
    return cut


class OutputCapture:
    """Keeps the head and the tail of a stream of text, and counts what falls between."""

    def __init__(self, limit: int, scrub: Scrubber | None = None) -> None:
        self.head_max = limit // 2
        self.tail_max = limit - self.head_max
        self.scrub = scrub
        margin = scrub.longest if scrub is not None else 0
        self._head_keep = self.head_max + margin
        self._tail_keep = self.tail_max + margin if self.tail_max else 0
        self.head = ""
        self.tail = ""
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        self.total += len(text)
        room = self._head_keep - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-self._tail_keep :] if self._tail_keep else ""

    def _clean(self, text: str) -> str:
        return self.scrub(text) if self.scrub is not None else text

    def text(self) -> str:
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped == 0:  # head and tail still meet: cut the whole text
            whole = self.head + self.tail
            if len(whole) <= self.head_max + self.tail_max:
                return self._clean(whole)
            head_end = _off_secrets(self.scrub, whole, self.head_max, back=True)
            tail_start = _off_secrets(self.scrub, whole, len(whole) - self.tail_max, back=False)
            if tail_start <= head_end:
                return self._clean(whole)
            head, tail = whole[:head_end], whole[tail_start:]
        else:
            head_end = _off_secrets(self.scrub, self.head, self.head_max, back=True)
            tail_cut = max(0, len(self.tail) - self.tail_max)
            tail_start = _off_secrets(self.scrub, self.tail, tail_cut, back=False)
            head, tail = self.head[:head_end], self.tail[tail_start:]
        cut = self.total - len(head) - len(tail)
        return (
            f"{self._clean(head)}\n… [{cut} chars of output cut; {self.total} in all] …\n"
            f"{self._clean(tail)}"
        )
