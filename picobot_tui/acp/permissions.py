"""An approval as `session/request_permission`, and the client's answer as picobot's.

The options, one per picobot answer (ACP allows several options of one kind, the kind is a
hint for the client's icons and shortcuts):

  optionId            kind           picobot
  allow               allow_once     "allow": this call
  always              allow_always   "always", for this workspace (the session's cwd):
                                     saved to permissions.json (the tool, exec's offered
                                     rule, or the web_fetch host); not offered for exec
                                     when no rule could match the command
  always_everywhere   allow_always   "always", in every workspace: saved to config.json
                                     (tools.alwaysAllow or tools.web.allowHosts)
  allow_session       allow_always   "allow_session": the tool (or web_fetch's host) until
                                     the session ends (the agent process), never saved
  deny                reject_once    "deny": this call

The tool call the client shows carries the same preview the TUI's modal shows (the whole
text: a command, a diff, the MCP call's arguments), and the note of a saved rule that did not
cover the call. A "cancelled" outcome (the client answers so after `session/cancel`) and any
option id it did not offer are a "deny".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from acp import schema as s

from picobot_tui.acp.updates import kind_of, text_content, title_of
from picobot_tui.core.visible import label, visible_value

if TYPE_CHECKING:
    from picobot_tui.acp.outbox import Outbox
    from picobot_tui.acp.sessions import AcpSession
    from picobot_tui.config.remember import Scope
    from picobot_tui.core.approval import ApprovalRequest, Decision

log = logging.getLogger("picobot.acp")

ALLOW, ALLOW_SESSION, ALWAYS, EVERYWHERE, DENY = (
    "allow",
    "allow_session",
    "always",
    "always_everywhere",
    "deny",
)


def options_for(req: ApprovalRequest) -> list[s.PermissionOption]:
    """The options, labelled with `label` (a host, tool name or prefix shown as it is)."""
    if req.scope == "host" and req.host:
        session_label = label(f"Allow {req.host} for this session")
        what: str | None = req.host
    else:
        session_label = label(f"Allow {req.name} for this session")
        what = req.name
        if req.name == "exec":
            what = f"`{req.prefix} …`" if req.prefix else "this exact command" if req.rule else None
    # "always" first of the allow_always kind: a client that picks by kind gets picobot's
    # narrowest "always" (this workspace), as the protocol means it ("remember this choice").
    options = [s.PermissionOption(option_id=ALLOW, name="Allow once", kind="allow_once")]
    if what is not None:
        options.append(
            s.PermissionOption(
                option_id=ALWAYS,
                name=label(f"Always allow {what} in this workspace"),
                kind="allow_always",
            )
        )
        options.append(
            s.PermissionOption(
                option_id=EVERYWHERE,
                name=label(f"Always allow {what} everywhere"),
                kind="allow_always",
            )
        )
    options.append(
        s.PermissionOption(option_id=ALLOW_SESSION, name=session_label, kind="allow_always")
    )
    options.append(s.PermissionOption(option_id=DENY, name="Reject", kind="reject_once"))
    return options


def tool_call_for(req: ApprovalRequest, extra: list[Any] | None = None) -> s.ToolCallUpdate:
    """The call the permission is about, with the modal's preview as its content."""
    content: list[Any] = list(extra or [])
    content.append(text_content(req.whole + (f"\n\nnote: {req.note}" if req.note else "")))
    return s.ToolCallUpdate(
        tool_call_id=req.id,
        title=title_of(req.name, req.arguments),
        kind=kind_of(req.name),
        status="pending",
        content=content,
        raw_input=visible_value(req.arguments),
    )


def decision_of(
    response: s.RequestPermissionResponse, offered: list[s.PermissionOption]
) -> tuple[Decision, Scope]:
    """picobot's decision, and the scope of an "always"."""
    outcome = response.outcome
    if not isinstance(outcome, s.AllowedOutcome):
        return "deny", "workspace"  # cancelled
    ids = {o.option_id for o in offered}
    chosen = outcome.option_id
    if chosen not in ids:
        log.warning("the client chose option %r, which was not offered: denied", chosen)
        return "deny", "workspace"
    if chosen == ALLOW:
        return "allow", "workspace"
    if chosen == ALLOW_SESSION:
        return "allow_session", "workspace"
    if chosen == ALWAYS:
        return "always", "workspace"
    if chosen == EVERYWHERE:
        return "always", "everywhere"
    return "deny", "workspace"


async def ask_client(out: Outbox, acp_s: AcpSession, req: ApprovalRequest) -> Decision:
    """The session's ConfirmFn: the request goes to the client, its answer comes back as
    picobot's decision ("always" saved first, for the session's workspace or everywhere, as
    the TUI does)."""
    options = options_for(req)
    diff = acp_s.calls.diff(req.id)
    response = await out.permission(acp_s.id, tool_call_for(req, [diff] if diff else None), options)
    if response is None:  # the client is gone, or failed the request
        return "deny"
    decision, scope = decision_of(response, options)
    if decision == "allow_session":  # the loop's own state does the same (approval.ask)
        if req.scope == "host" and req.host:
            acp_s.allowed.allowed_hosts.add(req.host)
        else:
            acp_s.allowed.allowed_tools.add(req.name)
    if decision == "always":
        _remember(acp_s, req, scope)
    if decision != "deny":
        await out.update(acp_s.id, acp_s.calls.in_progress(req.id))
    return decision


def _remember(acp_s: AcpSession, req: ApprovalRequest, scope: Scope) -> None:
    from picobot_tui.config.remember import remember_always

    try:
        remember_always(acp_s.settings, acp_s.runtime.tools.ctx, req, scope)
    except (OSError, ValueError) as e:
        log.warning("could not save the rule: %s (allowed this once)", e)
