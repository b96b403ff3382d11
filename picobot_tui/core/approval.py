"""The approval policy: which tool call runs, is refused or is put to the user, and what
the user's answer allows for the rest of the session.

Only the user's answer (never tool output) widens what runs; a front end supplies the
`ConfirmFn` that asks them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from picobot_tui.core import command_rules
from picobot_tui.core.events import ApprovalRequested
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.textsafe import terminal_safe
from picobot_tui.core.tools.hosts import host_allowed
from picobot_tui.core.tools.registry import ToolRegistry
from picobot_tui.core.turn_state import SessionState
from picobot_tui.core.visible import visible

Decision = Literal["allow", "allow_session", "always", "deny"]
"""A user's answer: this call, this session (tool or host), always (saved), or no.

"always" covers the request's narrowest scope: its host (web_fetch), else for exec the
offered rule (`ApprovalRequested.rule`: a command prefix or the exact command; none offered:
this call only), else the tool. A front end saves it first (for this workspace, or
everywhere when the user chose so: config/remember.py) and passes "always" on."""

MAX_REASON_CHARS = 500
MAX_NOTES = 4
"""Reasons a saved rule did not cover a call, shown before "… and N more"."""


@dataclass(frozen=True)
class Denied:
    """A "deny" that carries the user's reason; the model reads it in the tool result."""

    reason: str = ""


# What a front end's `confirm` is asked about is the very event it was shown.
ApprovalRequest = ApprovalRequested

ConfirmFn = Callable[[ApprovalRequest], Awaitable[Decision | Denied]]
"""How a front end asks the user about one call."""


def denied_text(name: str, decision: Denied | str) -> str:
    """The tool result of a refused call: the reason, when the user gave one, on one line
    (control characters and escapes dropped; capped)."""
    text = f"Denied: the user did not allow this {name} call."
    reason = decision.reason if isinstance(decision, Denied) else ""
    reason = " ".join(terminal_safe(reason).split())
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[: MAX_REASON_CHARS - 1] + "…"
    return f"{text} The user's reason: {reason}" if reason else text


def approval_needed(
    settings: CoreSettings,
    tools: ToolRegistry,
    call_id: str,
    name: str,
    args: dict[str, Any],
    state: SessionState,
) -> str | ApprovalRequested:
    """ "allow", "readonly" or "untrusted" by policy, or the request to put to the user.

    A network call (web_fetch) is judged per host: a host in `tools.web.allowHosts` or allowed
    for this session runs under every policy; any other host follows the policy like a file
    change (`readonly` refuses it, `ask` asks about that host).
    """
    host = tools.approval_host(name, args)
    if tools.ctx.read_only is not None and host is None:
        return "untrusted"  # an untrusted workspace: no file change, command or todo write
    tool = tools.get(name)
    if tool is not None and tool.trusted:  # MCP `trust: "auto"`: the user's own statement
        return "allow"
    saved = tools.ctx.saved  # what the user allowed for this workspace only
    if host is not None and (
        host_allowed(host, settings.tools.web.allow_hosts)
        or host_allowed(host, saved.hosts)
        or host in state.allowed_hosts
    ):
        return "allow"
    policy = settings.tools.approval
    if policy == "auto":
        return "allow"
    if policy == "readonly":
        return "readonly"
    allowed = [*settings.tools.always_allow, *saved.tools]
    if name in allowed or name in state.allowed_tools:
        return "allow"
    offer: command_rules.Offer | None = None
    notes: list[str] = []
    if name == command_rules.COMMAND_TOOL:
        # `exec(git status:*)` rules: on the command's parsed words, and only as far as the
        # reviewed table lets a prefix cover the rest (core/command_risk).
        command = args.get("command")
        verdict = command_rules.check_command(allowed, command)
        if verdict.allowed:
            return "allow"
        why_not = [f"not covered by {why}" for why in verdict.why_not]
        if len(why_not) > MAX_NOTES:  # a command can carry any number of options
            why_not[MAX_NOTES:] = [f"… and {len(why_not) - MAX_NOTES} more"]
        notes += why_not
        offer = command_rules.offered(command)
    if saved.problem:
        notes.append(saved.problem)
    p = tools.approval_preview(name, args)
    note = visible("\n".join(notes))
    if host is not None:
        return ApprovalRequested(
            call_id, name, args, p.text, p.full, p.hidden, "host", host, note=note
        )
    return ApprovalRequested(
        call_id,
        name,
        args,
        p.text,
        p.full,
        p.hidden,
        prefix=offer.prefix if offer else None,
        rule=offer.rule if offer else None,
        note=note,
    )


async def ask(
    confirm: ConfirmFn | None, req: ApprovalRequested, state: SessionState
) -> str | Denied:
    """Put the request to the user; only their answer (never tool output) decides.

    "allow_session" covers the request's scope: its host for web_fetch, else the tool.
    "always" allows this call: the front end has saved the rule where this policy reads it
    (the workspace's saved rules or the settings: the host, exec's offered rule, or the
    tool), so removing it (`/permissions`) takes effect at once. A `Denied` is passed on (its reason becomes the tool result).
    """
    if confirm is None:
        return "deny"
    decision = await confirm(req)
    if isinstance(decision, Denied):
        return decision
    if decision == "always":
        return "allow"
    if decision == "allow_session":
        if req.scope == "host" and req.host:
            state.allowed_hosts.add(req.host)
        else:
            state.allowed_tools.add(req.name)
        return "allow"
    return "allow" if decision == "allow" else "deny"
