"""The approval policy: which tool call runs, is refused or is put to the user, and what
the user's answer allows for the rest of the session.

Only the user's answer (never tool output) widens what runs; a front end supplies the
`ConfirmFn` that asks them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from picobot_tui.core.events import ApprovalRequested
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.tools.hosts import host_allowed
from picobot_tui.core.tools.registry import ToolRegistry
from picobot_tui.core.turn_state import SessionState

Decision = Literal["allow", "allow_session", "always", "deny"]
"""A user's answer: this call, this session (tool or host), always (saved), or no."""

# What a front end's `confirm` is asked about is the very event it was shown.
ApprovalRequest = ApprovalRequested

ConfirmFn = Callable[[ApprovalRequest], Awaitable[Decision]]
"""How a front end asks the user about one call."""


def approval_needed(
    settings: CoreSettings,
    tools: ToolRegistry,
    call_id: str,
    name: str,
    args: dict[str, Any],
    state: SessionState,
) -> str | ApprovalRequested:
    """ "allow" or "readonly" by policy, or the request to put to the user.

    A network call (web_fetch) is judged per host: a host in `tools.web.allowHosts` or allowed
    for this session runs under every policy; any other host follows the policy like a file
    change (`readonly` refuses it, `ask` asks about that host).
    """
    host = tools.approval_host(name, args)
    if host is not None and (
        host_allowed(host, settings.tools.web.allow_hosts) or host in state.allowed_hosts
    ):
        return "allow"
    policy = settings.tools.approval
    if policy == "auto":
        return "allow"
    if policy == "readonly":
        return "readonly"
    if name in settings.tools.always_allow or name in state.allowed_tools:
        return "allow"
    p = tools.approval_preview(name, args)
    if host is not None:
        return ApprovalRequested(call_id, name, args, p.text, p.full, p.hidden, "host", host)
    return ApprovalRequested(call_id, name, args, p.text, p.full, p.hidden)


async def ask(confirm: ConfirmFn | None, req: ApprovalRequested, state: SessionState) -> str:
    """Put the request to the user; only their answer (never tool output) decides.

    "allow_session" (and "always", which a front end has already saved) covers the request's
    scope: its host for web_fetch, else the tool.
    """
    if confirm is None:
        return "deny"
    decision = await confirm(req)
    if decision in ("allow_session", "always"):
        if req.scope == "host" and req.host:
            state.allowed_hosts.add(req.host)
        else:
            state.allowed_tools.add(req.name)
        return "allow"
    return "allow" if decision == "allow" else "deny"
