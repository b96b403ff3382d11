"""JSON with `//` line comments (the config file `picobot onboard` writes). Stdlib only, so
the TUI can peek at its UI settings before pydantic-settings is imported."""

from __future__ import annotations

import re

_COMMENT_RE = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*')


def strip_json_comments(text: str) -> str:
    """Blank out `//` comments outside strings, keeping every line where it was."""

    def repl(m: re.Match[str]) -> str:
        s = m.group(0)
        return s if s.startswith('"') else " " * len(s)

    return _COMMENT_RE.sub(repl, text)
