"""The names MCP tools are offered under: `mcp_<server>_<tool>`, in `[A-Za-z0-9_-]`, ≤ 64."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME = 64
"""OpenAI's limit on a function name (Anthropic's too); longer names are refused."""
PREFIX = "mcp_"

_BAD = re.compile(r"[^A-Za-z0-9_-]+")


def sanitize(part: str) -> str:
    """`[A-Za-z0-9_-]` only: every other run of characters becomes one `_`."""
    return _BAD.sub("_", part).strip("_") or "_"


def tool_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """The model-facing name of `tool` on `server`, unique among `taken`.

    Too long or already taken (two server tools that sanitise alike): cut, and end with a
    short hash of the exact pair, so the same pair always gets the same name.
    """
    name = plain_name(server, tool)
    if len(name) <= MAX_NAME and name not in taken:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()
    for size in (6, 10, 40):
        candidate = f"{name[: MAX_NAME - size - 1]}_{digest[:size]}"
        if candidate not in taken:
            return candidate
    raise ValueError(f"no free tool name for {server}/{tool}")  # 40 hex digits collide


def plain_name(server: str, tool: str) -> str:
    """`mcp_<server>_<tool>` sanitised, before any cut or hash (put it in `taken` to have
    `tool_name` give the hashed form)."""
    return f"{PREFIX}{sanitize(server)}_{sanitize(tool)}"


def crosses(server: str, tool: str, servers: Iterable[str]) -> bool:
    """Whether `mcp_<server>_<tool>` could also be the plain name of a tool of another of
    `servers`, one whose name extends this one's: servers `a` and `a_b` both have a
    `mcp_a_b_c` when `a` offers `b_c` and `a_b` offers `c`."""
    mine, name = sanitize(server) + "_", sanitize(tool)
    for other in servers:
        theirs = sanitize(other)
        if (
            other != server
            and theirs.startswith(mine)
            and name.startswith(theirs[len(mine) :] + "_")
        ):
            return True
    return False


def server_prefix(server: str) -> str:
    return f"{PREFIX}{sanitize(server)}_"
