"""The built-in offline `demo` model: no key, no network, clearly labelled.

It streams a short Markdown reply, makes one real `list_dir` call on the workspace, then
summarises what the tool returned, so every pane of the app can be seen working.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from picobot_tui.core.budget import estimate_messages, estimate_text
from picobot_tui.core.model import Chunk, ModelRequest, TextChunk, ToolCallChunk, UsageChunk

DEMO_MODEL = "demo"


def _words(text: str) -> list[str]:
    """Split into word-sized fragments, keeping whitespace, as a provider streams."""
    out, cur = [], ""
    for ch in text:
        cur += ch
        if ch in " \n":
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


class DemoModel:
    """A scripted stand-in for a real model (see module docstring)."""

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay

    def context_window(self, model: str) -> int | None:
        return 128_000

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        messages = list(request.messages)
        last = messages[-1] if messages else {}
        has_list_dir = any(t["function"]["name"] == "list_dir" for t in request.tools)
        if last.get("role") == "tool":
            reply = self._summary(str(last.get("content", "")))
            async for chunk in self._text(reply):
                yield chunk
        else:
            question = str(last.get("content", ""))[:200]
            intro = (
                "**[demo model]** This is picobot's offline demo — no API key, no network.\n\n"
                f"You said: _{question}_\n\n"
            )
            if has_list_dir:
                intro += "Let me look at the workspace with a real tool call.\n"
            async for chunk in self._text(intro, usage=False):
                yield chunk
            if has_list_dir:
                yield ToolCallChunk(0, "call_demo_1", "list_dir", "")
                yield ToolCallChunk(0, None, None, json.dumps({"path": "."}))
        yield UsageChunk(
            estimate_messages(messages), estimate_text(str(last.get("content", ""))) or 1, None
        )

    async def _text(self, text: str, usage: bool = True) -> AsyncIterator[Chunk]:
        for word in _words(text):
            await asyncio.sleep(self.delay)
            yield TextChunk(word)

    @staticmethod
    def _summary(listing: str) -> str:
        entries = [line for line in listing.splitlines() if line.strip()]
        shown = "\n".join(entries[:10]) or "(empty)"
        noun = "entry" if len(entries) == 1 else "entries"
        return (
            f"The workspace listing came back with **{len(entries)}** {noun}:\n\n"
            f"```text\n{shown}\n```\n\n"
            "| what | where |\n|---|---|\n"
            "| use a real model | `picobot onboard`, or `--model openai/gpt-4o-mini` |\n"
            "| keys | `OPENAI_API_KEY` or `providers.openai.apiKey` |\n\n"
            "That is the whole demo: streaming text, a tool call, and a final answer."
        )
