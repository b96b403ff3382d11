"""Text helpers the transcript blocks and the tool timeline share: icons, status styles,
one-line tool arguments, durations and the fenced code blocks of a markdown answer."""

from __future__ import annotations

import json
import re
from typing import Any

from picobot_tui.core.visible import label

_FENCE_RE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)

NOTICE_ICONS = {
    "error": "✗",
    "retry": "↻",
    "stuck": "⚠",
    "compress": "⇣",
    "interrupted": "⏹",
}

STATUS_ICONS = {
    "running": "⋯",
    "ok": "✓",
    "error": "✗",
    "denied": "⊘",
    "plan": "◇",
    "cancelled": "■",
}


def code_blocks(markdown: str) -> list[str]:
    """The contents of the fenced code blocks in a markdown source, in order."""
    return [m.group(2).rstrip("\n") for m in _FENCE_RE.finditer(markdown)]


def one_line_args(arguments: dict[str, Any] | str, limit: int = 60) -> str:
    """A compact single-line rendering of tool arguments."""
    if isinstance(arguments, dict):
        if len(arguments) == 1:
            value = next(iter(arguments.values()))
            raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        else:
            raw = " ".join(
                f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                for k, v in arguments.items()
            )
    else:
        raw = arguments
    return label(raw, limit)


def format_duration(ms: float) -> str:
    if ms < 1000:
        return f"{ms:.0f}ms"
    s = ms / 1000
    if s < 10:
        return f"{s:.1f}s"
    if s < 60:
        return f"{s:.0f}s"
    return f"{int(s // 60)}m{int(s % 60):02d}s"


def status_style(status: str) -> str:
    """A theme-aware style for a tool status."""
    return {
        "running": "$text-warning",
        "ok": "$text-success",
        "error": "$text-error",
        "denied": "$text-accent",
        "plan": "$text-accent",
        "cancelled": "$text-muted",
    }.get(status, "")
