"""Concurrency: two picobot processes on one session, the JSON channel fed faster than turns
finish, and the TUI used (typing, resizing, the session browser) while a turn streams.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import signal
from collections.abc import AsyncIterator

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.model import Chunk, ModelRequest, TextChunk, UsageChunk
from picobot_tui.headless.json_protocol import JsonChannel
from picobot_tui.run.context import Run
from picobot_tui.run.runtime import build_runtime
from tests.reliability.support import (
    Proc,
    Router,
    check_session_file,
    conversation_problems,
    provider_view,
    session_paths,
    write_config,
)
from tests.support.openai_server import OpenAITestServer, slow, text_reply
from tests.support.sent import as_stored, words

# -- two processes, one session -------------------------------------------------------------


@pytest.mark.e2e
def test_a_second_process_on_the_same_session_is_refused_and_the_file_never_interleaves(
    tmp_path,
) -> None:
    router = Router()
    # The first process streams for minutes: it holds the session until the test ends it.
    router.add("two", [slow(0.05, text_reply("streaming along " * 1000, chunk_size=4))])
    with OpenAITestServer(default=router) as server:
        write_config(tmp_path, server.url)
        first = Proc(tmp_path, ["agent", "-m", "two: long one"], tty=True)
        try:
            first.wait_until(lambda: len(first.out) >= 8)  # streaming: the session is open
            [path] = session_paths(tmp_path)
            key = check_session_file(path, lock=False).key
            # Five more at once: by id, by `latest`, in --json mode, and the housekeeping
            # commands that need the session's lock. No answer is stored yet, so `latest`
            # does not name it (issue 25, point 5): refused as a usage error instead.
            latest = Proc(tmp_path, ["agent", "-m", "two: me too", "--session", "latest"])
            others = {
                "by id": Proc(tmp_path, ["agent", "-m", "two: me too", "--session", key]),
                "rename": Proc(tmp_path, ["sessions", "rename", key, "stolen"]),
                "delete": Proc(tmp_path, ["sessions", "delete", key, "--yes"]),
            }
            js = Proc(tmp_path, ["agent", "--json", "--session", key], stdin=True)
            js.close_stdin()
            results = {name: (p.finish(timeout=120), p) for name, p in others.items()}
            js_code = js.finish(timeout=120)
            latest_code = latest.finish(timeout=120)
            assert first.popen.poll() is None, "the first process ended before the others ran"
            first.popen.send_signal(signal.SIGINT)
            assert first.finish(timeout=120) == 130, first.stderr
        finally:
            for p in (first,):
                if p.popen.poll() is None:
                    p.popen.kill()
                    p.finish()
    pid = str(first.popen.pid)
    for name, (code, p) in results.items():
        assert code == 1, (name, code, p.stderr)
        assert "in use by another picobot process" in p.stderr and pid in p.stderr, (name, p.stderr)
        assert "Traceback" not in p.stderr, (name, p.stderr)
    assert latest_code == 2 and "no sessions with an answer yet" in latest.stderr, latest.stderr
    assert js_code == 1 and "in use by another picobot process" in js.stderr
    assert "Traceback" not in js.stderr
    # Only the first process wrote, and its lines are whole.
    check = check_session_file(path)
    assert not check.warnings and not check.damaged
    assert [m["role"] for m in check.messages] == ["user", "assistant"]
    assert check.messages[1]["interrupted"] is True
    assert check.messages[1]["content"].startswith("streaming along streaming")
    assert path.exists() and "stolen" not in path.read_text()
    # Once the first is done, the session is free again.
    router.add("two", [])
    with OpenAITestServer(default=router) as server:
        write_config(tmp_path, server.url)
        after = Proc(tmp_path, ["agent", "-m", "two: now me", "--session", key])
        assert after.finish(timeout=120) == 0, after.stderr


# -- the JSON channel fed faster than turns finish --------------------------------------------


class Trickle:
    """A model double that streams `n` words with a pause between them."""

    def __init__(self, n: int = 5, pause: float = 0.002) -> None:
        self.n, self.pause = n, pause
        self.requests: list[ModelRequest] = []
        self.stop = asyncio.Event()

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        last = words(request.messages[-1])
        for i in range(self.n):
            await asyncio.sleep(self.pause)
            yield TextChunk(f"{last}#{i} ")
        yield UsageChunk(10, self.n)


async def test_json_messages_sent_all_at_once_run_in_order(tmp_path) -> None:
    s = Settings()
    s.agents.defaults.model = "scripted"
    s.agents.defaults.workspace = str(tmp_path / "ws")
    model = Trickle()
    rt = build_runtime(s, model="scripted", model_client=model)
    session = rt.store.open(rt.store.new_key())
    out = io.StringIO()
    channel = JsonChannel(out, yes=True)

    async def go() -> None:
        serving = asyncio.create_task(channel.serve(Run(s, rt, session, [])))
        for i in range(40):  # all of them before the first turn has finished
            channel.handle_line(json.dumps({"type": "message", "content": f"m{i}"}).encode())
            if i % 7 == 0:
                await asyncio.sleep(0)
        channel.handle_eof()
        await asyncio.wait_for(serving, 120)

    try:
        await go()
    finally:
        session.close()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    finished = [e for e in events if e["type"] == "turn_finished"]
    assert [f["content"].split("#")[0] for f in finished] == [f"m{i}" for i in range(40)]
    starts = [i for i, e in enumerate(events) if e["type"] == "turn_started"]
    ends = [i for i, e in enumerate(events) if e["type"] == "turn_finished"]
    assert all(s < e < n for s, e, n in zip(starts, ends, starts[1:] + [len(events)], strict=True))
    # maxHistoryMessages bounds what each call sends: the last call carries the newest
    # messages, in order; the session file keeps all forty, in order.
    users = [m["content"] for m in as_stored(model.requests[-1].messages) if m["role"] == "user"]
    numbers = [int(u[1:]) for u in users]
    assert numbers == sorted(set(numbers)) and numbers[-1] == 39, users
    stored = [
        m.get("content") for m in rt.store.load_messages(session.key) if m.get("role") == "user"
    ]
    assert stored == [f"m{i}" for i in range(40)]
    check = check_session_file(session.path)
    assert not check.warnings
    assert conversation_problems(provider_view(check.messages)) == []


# -- the TUI while a turn streams -----------------------------------------------------------


class Endless(Trickle):
    """Streams until `stop` is set (then finishes the answer)."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        if len(self.requests) > 1:  # the queued message: a short answer
            yield TextChunk("queued answer")
            yield UsageChunk(1, 1)
            return
        i = 0
        while not self.stop.is_set():
            await asyncio.sleep(self.pause)
            yield TextChunk(f"w{i} ")
            i += 1
        yield UsageChunk(10, i)


def _send_key(app, key: str) -> None:
    """A key press as the terminal driver delivers it, without Pilot's wait for an idle CPU
    (which never comes while an answer streams, so each `pilot.press` would cost ~2 s)."""
    from textual import events
    from textual.keys import _character_to_key

    name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
    event = events.Key(name, key if len(key) == 1 else None)
    event.set_sender(app)
    app._driver.send_message(event)


def _resize(app, size: tuple[int, int]) -> None:
    from textual.events import Resize
    from textual.geometry import Size

    app._driver._size = Size(*size)
    app.post_message(Resize(Size(*size), Size(*size)))


async def test_tui_stays_responsive_while_a_turn_streams(tmp_path, caplog) -> None:
    """Every action is checked to have taken effect while the answer is still streaming
    (the model streams until the test stops it): typed keys reach the prompt, resizes
    re-lay the app out, the session browser opens and closes, Enter queues the message.
    Then the turn ends, the queued message runs, nothing was logged as an error."""
    from picobot_tui.widgets.session_browser import SessionBrowserScreen

    from tests.tui.app_support import make_app, make_settings, session_lines, wait_for, wait_idle

    (tmp_path / "ws").mkdir()
    settings = make_settings(tmp_path / "ws")
    caplog.set_level(logging.WARNING)
    model = Endless(pause=0.005)
    app = make_app(settings, model)
    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt.text = "stream forever"
        app.prompt.input.focus()
        _send_key(app, "enter")
        await wait_for(pilot, lambda: app.busy and len(model.requests) == 1, "turn started")
        seen = []
        app.prompt.input.focus()
        for ch in "queued?":
            _send_key(app, ch)
        await wait_for(pilot, lambda: app.prompt.text == "queued?", "typed text")
        seen.append("typed")
        for size in ((60, 20), (140, 45), (100, 30)):
            _resize(app, size)
            await wait_for(pilot, lambda s=size: tuple(app.size) == s, f"resized to {size}")
        seen.append("resized")
        _send_key(app, "ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionBrowserScreen), "browser")
        _send_key(app, "escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionBrowserScreen), "closed")
        seen.append("browsed")
        app.prompt.input.focus()
        _send_key(app, "enter")
        await wait_for(pilot, lambda: app.queue == ["queued?"], "message queued")
        still_streaming = app.busy and len(model.requests) == 1 and not model.stop.is_set()
        streamed_chunks = len(app.conversation.transcript.children)
        model.stop.set()
        await wait_for(pilot, lambda: len(model.requests) == 2, "queued message sent")
        await wait_idle(pilot)
        lines = session_lines(app)
        errors = [n for n in app._notifications if n.severity == "error"]
    assert seen == ["typed", "resized", "browsed"] and still_streaming and streamed_chunks
    assert [m["role"] for m in lines] == ["user", "assistant", "user", "assistant"]
    assert lines[1]["content"].startswith("w0 w1 ")
    assert lines[2]["content"] == "queued?" and lines[3]["content"] == "queued answer"
    assert not errors, errors
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.records
    assert app._exception is None
