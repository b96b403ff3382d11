"""The one place that reads a private attribute of the ACP SDK (CONTRIBUTING: one adapter
module, with a test that fails if the SDK changes it; the SDK is pinned in pyproject).

`AgentSideConnection.session_update` builds a pydantic `SessionNotification` and dumps it
again for every streamed chunk (~20 µs each). The hot path of a turn, a text chunk, is sent
as the same JSON through the connection's own `send_notification` instead; everything else
goes through the SDK's typed methods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Notify = Callable[[str, Any], Awaitable[None]]


def raw_notify(conn: Any) -> Notify | None:
    """The connection's `send_notification(method, params)`, or None when this SDK has
    none there (then the caller uses the typed `session_update`)."""
    inner = getattr(conn, "_conn", None)
    send = getattr(inner, "send_notification", None)
    return send if callable(send) else None


def text_chunk_params(session_id: str, text: str) -> dict[str, Any]:
    """`session/update` params of one agent_message_chunk of text, as the SDK serialises
    them (`SessionNotification` by alias, defaults left out)."""
    return {
        "sessionId": session_id,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        },
    }
