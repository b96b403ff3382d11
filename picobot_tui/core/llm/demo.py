"""The built-in offline `demo` model: no key, no network, clearly labelled.

It streams a short Markdown reply, makes one real `list_dir` call on the workspace, then
summarises what the tool returned, so every pane of the app can be seen working. A message
`run CMD` makes it call `exec` instead, so the approval prompt can be tried too.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator

from picobot_tui.core.budget import estimate_messages, estimate_text
from picobot_tui.core.llm.model import Chunk, ModelRequest, TextChunk, ToolCallChunk, UsageChunk
from picobot_tui.core.time_line import without_time_line

DEMO_MODEL = "demo"


def is_demo(model: str) -> bool:
    """True when `model` names the built-in offline demo model: exactly `demo`. The one rule
    for both the runtime (which model client runs) and the credentials check; `demo/x` is no
    demo model (LiteLLM would get it as an unknown provider)."""
    return model == DEMO_MODEL


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
        """Seconds before each word (`demo.wordsPerSecond`; 0: no pause at all)."""

    @classmethod
    def paced(cls, words_per_second: float) -> DemoModel:
        """The demo typing `words_per_second` words a second (0: at once)."""
        return cls(1 / words_per_second if words_per_second > 0 else 0.0)

    def context_window(self, model: str) -> int | None:
        return 128_000

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        messages = list(request.messages)
        last = messages[-1] if messages else {}
        tools = {t["function"]["name"] for t in request.tools}
        if last.get("role") == "tool":
            reply = self._summary(str(last.get("name", "")), str(last.get("content", "")))
            async for chunk in self._text(reply):
                yield chunk
        else:
            question = without_time_line(str(last.get("content", ""))).strip()
            command = question[4:].strip() if question.lower().startswith("run ") else ""
            intro = (
                "**[demo model]** This is picobot's offline demo — no API key, no network.\n\n"
                f"You said: _{question[:200]}_\n\n"
            )
            if command and "exec" in tools:
                intro += f"I'll run `{command}` in the workspace; picobot asks you first.\n"
                call = ("exec", {"command": command})
            elif "list_dir" in tools:
                intro += "Let me look at the workspace with a real tool call.\n"
                call = ("list_dir", {"path": "."})
            else:
                call = None
            async for chunk in self._text(intro):
                yield chunk
            if call is not None:
                yield ToolCallChunk(0, f"call_demo_{uuid.uuid4().hex[:8]}", call[0], "")
                yield ToolCallChunk(0, None, None, json.dumps(call[1]))
        yield UsageChunk(
            estimate_messages(messages), estimate_text(str(last.get("content", ""))) or 1, None
        )

    async def _text(self, text: str) -> AsyncIterator[Chunk]:
        for word in _words(text):
            await asyncio.sleep(self.delay)  # at 0 still a point where Esc can cancel
            yield TextChunk(word)

    @staticmethod
    def _summary(tool: str, result: str) -> str:
        lines = [line for line in result.splitlines() if line.strip()]
        if tool == "exec":
            head = "The command ran (or was refused) — here is what came back:"
        else:
            # list_dir's first line is its header, `./ (6 entries)`: the count is there.
            counted = re.match(r".*\((\d+) entr(?:y|ies)\)$", lines[0]) if lines else None
            if counted:
                lines = lines[1:]
            count = int(counted.group(1)) if counted else 0
            noun = "entry" if count == 1 else "entries"
            head = f"The workspace listing came back with **{count}** {noun}:"
        shown = "\n".join(lines[:10]) or "(empty)"
        return (
            f"{head}\n\n```text\n{shown}\n```\n\n"
            "| what | how |\n|---|---|\n"
            "| see an approval | send `run ls -la` (any command after `run`) |\n"
            "| use a real model | set its key, then `/model openai/gpt-4o-mini` |\n"
            "| keys | `OPENAI_API_KEY` or `providers.openai.apiKey` |\n\n"
            "That is the whole demo: streaming text, a tool call, and a final answer."
        )
