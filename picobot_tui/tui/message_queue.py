"""Messages the user sent while a turn ran (or while the app started): sent in order once the
agent is free, shown above the prompt, given back for editing when the user interrupts."""

from __future__ import annotations

from collections.abc import Callable, Sequence


class MessageQueue(list[str]):
    """A list of queued messages that keeps the prompt's queue display in step."""

    def __init__(self, show: Callable[[Sequence[str]], None]) -> None:
        super().__init__()
        self._show = show

    def add(self, text: str) -> None:
        self.append(text)
        self._show(self)

    def take(self) -> str | None:
        """The oldest message, removed (None when empty)."""
        if not self:
            return None
        text = self.pop(0)
        self._show(self)
        return text

    def give_back(self, current: str) -> str:
        """Empty the queue into one text for the prompt, ahead of what is typed there."""
        pending = "\n\n".join(self)
        self.clear()
        self._show(self)
        return pending + (("\n\n" + current) if current.strip() else "")
