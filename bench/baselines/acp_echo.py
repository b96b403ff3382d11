"""Baseline for #13: a bare ACP agent on the `agent-client-protocol` SDK, nothing else.
`python acp_echo.py` answers `initialize` (protocol 1, default capabilities), `session/new`
(a fresh id) and `session/prompt` (the prompt's text back as one `agent_message_chunk`, then
`end_turn`), on stdio through `acp.run_agent`. It imports only the SDK, so spawn →
`initialize` response is the floor any SDK-based agent can reach: Python's start, the SDK's
import and one round trip."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import acp
from acp.schema import AgentCapabilities, Implementation


class EchoAgent:
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="acp-echo", version="1"),
            auth_methods=[],
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id=uuid.uuid4().hex)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        await self.conn.session_update(session_id, acp.update_agent_message_text(text))
        return acp.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


if __name__ == "__main__":
    asyncio.run(acp.run_agent(EchoAgent()))
