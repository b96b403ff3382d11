"""The token-budget gauge: context estimate vs budget, the 80 % mark, last call, cost."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from picobot_tui.core.budget import COMPRESS_AT


def human_tokens(n: int) -> str:
    """1234 -> "1.2k", 128000 -> "128k"."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{round(n / 1000)}k"
    return f"{n / 1_000_000:.1f}M"


def format_cost(cost: float | None) -> str:
    return "n/a" if cost is None else f"${cost:.4f}"


def compression_words(estimated: int, threshold: int) -> str:
    """The distance to compression, in words."""
    if threshold <= 0:
        return ""
    left = threshold - estimated
    if left <= 0:
        return "compresses on the next call"
    return f"compresses in ~{human_tokens(left)} tokens"


class BudgetGauge(Widget):
    """Set `estimated`/`budget`/`threshold` (from BudgetChanged), `usage(...)` and
    `compressed(...)`; it redraws itself."""

    estimated: reactive[int] = reactive(0)
    budget: reactive[int] = reactive(0)
    threshold: reactive[int] = reactive(0)
    prompt_tokens: reactive[int | None] = reactive(None)
    completion_tokens: reactive[int | None] = reactive(None)
    session_cost: reactive[float | None] = reactive(None)
    cost_known: reactive[bool] = reactive(False)
    cache_line: reactive[str] = reactive("")
    """`cache 10k read · 1.2k written · 82 % (session 76 %)`; "" while nothing was cached."""
    compression: reactive[str] = reactive("")
    messages: reactive[int | None] = reactive(None)
    """How many messages the shown conversation holds, when it was loaded (a resume, a
    branch); None once the user sends (the estimate then counts what the turn adds)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Context"

    def set_budget(self, estimated: int, budget: int, threshold: int) -> None:
        self.estimated, self.budget, self.threshold = estimated, budget, threshold

    def usage(
        self,
        prompt: int,
        completion: int,
        session_cost: float | None,
        *,
        cache_read: int = 0,
        cache_write: int = 0,
        hit_rate: float | None = None,
        session_hit_rate: float | None = None,
    ) -> None:
        self.prompt_tokens, self.completion_tokens = prompt, completion
        self.session_cost = session_cost
        self.cost_known = True
        if cache_read or cache_write or session_hit_rate:
            rates = f"{hit_rate or 0:.0%}"
            if session_hit_rate is not None:
                rates += f" (session {session_hit_rate:.0%})"
            self.cache_line = (
                f"{human_tokens(cache_read)} read · {human_tokens(cache_write)} written · {rates}"
            )

    def compressed(self, dropped: int, before: int, after: int) -> None:
        self.compression = (
            f"compressed: dropped {dropped} old messages, "
            f"{human_tokens(before)} → {human_tokens(after)}"
        )
        self.estimated = after

    def reset(self) -> None:
        self.estimated = 0
        self.messages = None
        self.prompt_tokens = self.completion_tokens = None
        self.session_cost = None
        self.cost_known = False
        self.compression = ""
        self.cache_line = ""

    def summary(self) -> str:
        """One line for narrow layouts (status bar)."""
        pct = f"{self.estimated / self.budget:.0%}" if self.budget else "–"
        cost = format_cost(self.session_cost) if self.cost_known else ""
        return (
            f"ctx {human_tokens(self.estimated)}/{human_tokens(self.budget)} {pct} {cost}".strip()
        )

    def _bar(self, width: int) -> Content:
        width = max(width, 10)
        # No threshold yet (an empty session: no BudgetChanged): the mark still sits at 80 %.
        threshold = self.threshold or int(self.budget * COMPRESS_AT)
        fill = min(width, round(width * self.estimated / self.budget)) if self.budget else 0
        mark = min(width - 1, round(width * threshold / self.budget)) if self.budget else -1
        over = self.budget and self.estimated >= threshold
        fill_style = "$error" if over else "$primary"
        empty, warn = "$foreground-darken-3", "bold $warning"
        # Runs of cells, not a part per cell: that made the first frame's render 30 ms.
        if 0 <= mark < fill:
            runs = [("█" * mark, fill_style), ("┃", warn), ("█" * (fill - mark - 1), fill_style)]
            runs.append(("░" * (width - fill), empty))
        elif mark >= fill:
            runs = [("█" * fill, fill_style), ("░" * (mark - fill), empty), ("┃", warn)]
            runs.append(("░" * (width - mark - 1), empty))
        else:
            runs = [("█" * fill, fill_style), ("░" * (width - fill), empty)]
        return Content.assemble(*(run for run in runs if run[0]))

    def _what_it_counts(self) -> str:
        # A branch from before its parent's first message (or any session loaded empty)
        # still costs its system prompt and tools: say so, or 642 tokens of nothing looked
        # like the parent's context (issue 25, point 9).
        if self.messages == 0 and self.estimated > 0:
            return "no messages: system prompt and tools"
        return compression_words(self.estimated, self.threshold)

    def render(self) -> Content:
        width = self.content_region.width or self.size.width or 30
        pct = f" ({self.estimated / self.budget:.0%})" if self.budget else ""
        lines: list[Content] = [
            self._bar(width),
            Content.assemble(
                (human_tokens(self.estimated), "bold"),
                f" / {human_tokens(self.budget)} tokens{pct}",
            ),
            Content.assemble((self._what_it_counts(), "$text-muted")),
        ]
        if self.prompt_tokens is not None:
            lines.append(
                Content.assemble(
                    ("last call ", "$text-muted"),
                    f"{self.prompt_tokens:,} in · {self.completion_tokens:,} out",
                )
            )
        else:
            lines.append(Content.assemble(("last call ", "$text-muted"), "–"))
        if self.cache_line:
            lines.append(Content.assemble(("cache ", "$text-muted"), self.cache_line))
        cost = format_cost(self.session_cost) if self.cost_known else "–"
        lines.append(Content.assemble(("cost ", "$text-muted"), (cost, "bold")))
        if self.compression:
            lines.append(Content.assemble((self.compression, "$text-accent")))
        return Content("\n").join(lines)
