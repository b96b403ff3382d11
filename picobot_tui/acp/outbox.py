"""What the agent sends the client, in one place: `session/update`s (the text chunk by its
fast path, sdk_compat), and `session/request_permission`. Once the client is gone, nothing
more is sent and a permission request answers None (the caller denies)."""

from __future__ import annotations

import logging
from typing import Any

from acp import RequestError
from acp import schema as s

from picobot_tui.acp.sdk_compat import Notify, raw_notify, text_chunk_params
from picobot_tui.acp.updates import agent_text

log = logging.getLogger("picobot.acp")


class Outbox:
    def __init__(self) -> None:
        self.client: Any = None
        self.disconnected = False
        self._notify: Notify | None = None

    def connect(self, client: Any) -> None:
        self.client = client
        self._notify = raw_notify(client)

    async def update(self, session_id: str, update: Any) -> None:
        if self.disconnected or self.client is None:
            return
        try:
            await self.client.session_update(session_id=session_id, update=update)
        except ConnectionError:
            self.disconnected = True

    async def text(self, session_id: str, text: str) -> None:
        if self._notify is None:
            await self.update(session_id, agent_text(text))
            return
        if self.disconnected:
            return
        try:
            await self._notify("session/update", text_chunk_params(session_id, text))
        except ConnectionError:
            self.disconnected = True

    async def permission(
        self, session_id: str, tool_call: s.ToolCallUpdate, options: list[s.PermissionOption]
    ) -> s.RequestPermissionResponse | None:
        if self.disconnected or self.client is None:
            return None
        try:
            response: s.RequestPermissionResponse = await self.client.request_permission(
                session_id=session_id, tool_call=tool_call, options=options
            )
        except ConnectionError:
            self.disconnected = True
            return None
        except RequestError as e:
            log.warning(
                "the client failed the permission request for %s: %s", tool_call.tool_call_id, e
            )
            return None
        return response
