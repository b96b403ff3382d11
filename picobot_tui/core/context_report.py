"""What goes into the next model call, and why: `/context` in the TUI, `picobot context`.

Each part of the system prompt with where it came from and the bytes read for it (the
sections `ContextBuilder.build` records), each tool offered (built-in or MCP, with its
server), and the conversation so far, each with its tokens (chars/4 scaled by the last
call's tokens per estimated token, as the budget gauge counts) against the token budget. The total is the gauge's own
(`AgentLoop.budget`), so the two never disagree.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from picobot_tui.core.budget import COMPRESS_AT, estimate_text
from picobot_tui.core.tools import skill

if TYPE_CHECKING:
    from picobot_tui.core.loop import AgentLoop
    from picobot_tui.core.sessions import Session


@dataclass(frozen=True)
class Row:
    group: str
    """"prompt", "tools" or "conversation"."""
    name: str
    source: str
    """A file or folder, `built-in`, `MCP: <server>`, or the messages counted."""
    size: int
    """Bytes read from disk for it (0: nothing read)."""
    tokens: int


@dataclass(frozen=True)
class ContextReport:
    rows: list[Row]
    total: int
    """The gauge's estimate for the next call (calibrated by the last call, if any)."""
    budget: int
    threshold: int
    skipped: dict[str, str]
    """Files left out of the prompt, and why."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def context_report(loop: AgentLoop, session: Session | None) -> ContextReport:
    """The report for `session`'s next call (None: a new session, no conversation yet)."""
    skill.offer(loop.context, loop.tools)  # as the next turn will, before its prompt
    loop.context.build()  # fresh: the files as they are now (and `sections` with them)
    # chars/4, scaled as the gauge scales it (the last call's tokens per estimated token)
    scale = loop.estimator.scale
    rows = [
        Row("prompt", s.name, s.source, s.size, scale(estimate_text(s.text)))
        for s in loop.context.sections
    ]
    registry = loop.tools
    for schema in registry.schemas() if registry is not None else []:
        name = str(schema.get("function", {}).get("name", ""))
        server = getattr(registry.get(name) if registry is not None else None, "server_name", None)
        source = f"MCP: {server}" if server is not None else "built-in"
        rows.append(Row("tools", name, source, 0, scale(estimate_text(json.dumps(schema)))))
    if session is not None:
        gauge = loop.budget(session)
        total, budget, threshold = gauge.estimated_tokens, gauge.budget, gauge.threshold
    else:
        budget = loop.defaults.token_budget
        total, threshold = loop.fixed_cost(), int(budget * COMPRESS_AT)
    fixed = sum(r.tokens for r in rows)
    messages = len(session.messages) if session is not None else 0
    # What the gauge counts beyond the parts is the conversation's, once there is one (the
    # parts' sum differs from the gauge's by each part's rounding and the joins: a token or
    # so a part).
    talk = max(0, total - fixed) if messages else 0
    rows.append(Row("conversation", "messages so far", str(messages), 0, talk))
    return ContextReport(rows, total, budget, threshold, dict(loop.context.skipped))


_GROUPS = {"prompt": "system prompt", "tools": "tools", "conversation": "conversation"}


def report_text(report: ContextReport) -> str:
    """The report as aligned plain text (the caller makes it terminal-safe)."""
    width = max((len(r.name) for r in report.rows), default=10) + 2
    lines = [
        f"The next call: ~{report.total:,} tokens of a {report.budget:,} budget "
        f"({100 * report.total // max(1, report.budget)} %; compacts at {report.threshold:,})."
    ]
    for group, title in _GROUPS.items():
        rows = [r for r in report.rows if r.group == group]
        if not rows:
            continue
        subtotal = sum(r.tokens for r in rows)
        count = f" ({len(rows)})" if group == "tools" else ""
        lines.append(f"{title}{count}: ~{subtotal:,} tokens")
        for r in rows:
            size = f"{r.size:,} B" if r.size else ""
            name, source = r.name, r.source
            if group == "conversation":
                name, source = f"{r.source} message{'s' if r.source != '1' else ''}", ""
            tokens = f"~{r.tokens:,}"
            lines.append(f"  {name:<{width}} {tokens:>8}  {size:>9}  {source}".rstrip())
    for name, why in report.skipped.items():
        lines.append(f"left out: {name}: it {why}")
    return "\n".join(lines)
