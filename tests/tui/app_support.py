"""A deterministic PicobotApp for Pilot and snapshot tests: scripted model, fixed clock, no
cursor blink, no live timers, no stream throttling; plus helpers to drive and inspect it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.model import Chunk, ModelRequest, TextChunk
from picobot_tui.core.llm.scripted import ScriptedModel, Step
from picobot_tui.tui.app import PicobotApp

FIXED_CLOCK = 1000.0


def make_settings(workspace: Path, **ui: Any) -> Settings:
    settings = Settings()
    settings.agents.defaults.model = "scripted"
    settings.agents.defaults.workspace = str(workspace)
    settings.agents.defaults.max_retries = 0
    settings.ui.bell = "never"
    for key, value in ui.items():
        setattr(settings.ui, key, value)
    return settings


def make_app(
    settings: Settings, steps: Sequence[Step] | ScriptedModel | Any = (), **kwargs: Any
) -> PicobotApp:
    model = steps if hasattr(steps, "stream") else ScriptedModel(steps)
    return PicobotApp(
        settings, model_client=model, deterministic=True, clock=lambda: FIXED_CLOCK, **kwargs
    )


async def wait_for(pilot: Pilot, condition: Callable[[], Any], what: str = "", tries: int = 1000):
    """Let the app run until `condition()` is truthy (bounded by a number of pauses, not by
    a time budget that a test would assert on)."""
    for _ in range(tries):
        result = condition()
        if result:
            return result
        await pilot.pause(0.005)
    raise AssertionError(f"never happened: {what or condition}")


async def type_and_send(pilot: Pilot, text: str) -> None:
    app = pilot.app
    assert isinstance(app, PicobotApp)
    app.prompt.text = text
    app.prompt.input.focus()
    await pilot.press("enter")


async def wait_idle(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, PicobotApp)
    await wait_for(pilot, lambda: not app.busy and app.status.state == "idle", "app idle")
    await pilot.pause()


def session_lines(app: PicobotApp) -> list[dict[str, Any]]:
    """The session file of the app's current session, parsed (meta lines dropped)."""
    session = app.sessions.session
    assert session is not None
    lines = [json.loads(x) for x in session.path.read_text().splitlines() if x.strip()]
    return [x for x in lines if x.get("_type") != "meta"]


def transcript_text(app: PicobotApp) -> str:
    """Everything the conversation shows, as plain text (sources, not rendering)."""
    parts = []
    for block in app.conversation.blocks():
        parts.append(
            getattr(block, "source", None)
            or getattr(block, "text", None)
            or getattr(block, "tool_name", "")
        )
    return "\n".join(str(p) for p in parts)


class GatedModel:
    """A model double that streams scripted text, then waits on a gate before finishing,
    so tests can act mid-stream. Later calls fall through to a ScriptedModel."""

    def __init__(
        self, first: Sequence[str], then: Sequence[Step] = (), tail: Sequence[str] = ()
    ) -> None:
        """`first` streams, then the gate is awaited, then `tail` streams."""
        self.first = list(first)
        self.tail = list(tail)
        self.gate = asyncio.Event()
        self.streamed = asyncio.Event()
        self.after = ScriptedModel(then)
        self.calls = 0

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        if self.calls > 1:
            async for chunk in self.after.stream(request):
                yield chunk
            return
        for part in self.first:
            await asyncio.sleep(0)
            yield TextChunk(part)
        self.streamed.set()
        await self.gate.wait()
        for part in self.tail:
            await asyncio.sleep(0)
            yield TextChunk(part)
