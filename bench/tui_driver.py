"""Runs picobot's TUI in a real terminal (the parent gives it a pseudo-terminal) and measures
one thing, driven by Textual's auto-pilot; writes the figures as JSON.

    python -m bench.tui_driver MODE OUT.json PARAMS_JSON

Modes:
  stream      send one message; wall and CPU from Enter until the answer is fully painted
  headless    the same message through `picobot agent -m --no-stream`'s code path
  latency     key-press-to-paint latencies, idle and while a turn streams, alternating
  token_cost  CPU per streamed token (optionally after resuming a long session)
  browser     open the session browser (Ctrl+S) until its list is painted; then a content
              search until its first hit is painted

Frames are observed by wrapping the app's `_display` (the call that hands a frame to the
terminal driver). Keys are injected the way Textual's input thread delivers them
(`driver.process_message(Key)` from another thread), so a busy event loop delays them
exactly as it would delay a real key press. LiteLLM is warmed first in every mode.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class Frames:
    """Timestamps of frames written to the terminal, with an optional probe that fires on
    the first frame after a condition holds."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.count = 0
        self.last = 0.0
        self._probe: tuple[Any, threading.Event, list[float]] | None = None
        original = app._display

        def _display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is None:
                return
            now = time.monotonic()
            self.count += 1
            self.last = now
            probe = self._probe
            if probe is not None:
                cond, event, out = probe
                try:
                    ok = cond()
                except Exception:
                    ok = False
                if ok:
                    self._probe = None
                    out.append(now)
                    event.set()

        app._display = _display

    def probe(self, cond: Any) -> tuple[threading.Event, list[float]]:
        event, out = threading.Event(), []
        self._probe = (cond, event, out)
        return event, out

    async def wait(self, cond: Any, timeout: float = 30.0) -> float:
        """Wait (in the app's loop) for the first frame painted while `cond()` holds."""
        event, out = self.probe(cond)
        deadline = time.monotonic() + timeout
        while not event.is_set():
            if time.monotonic() > deadline:
                raise TimeoutError("no frame matched")
            self.app.screen.refresh()  # make sure a frame comes once the condition holds
            await asyncio.sleep(0.005)
        return out[0]

    async def settle(self, quiet: float = 0.3, timeout: float = 60.0) -> float:
        """Wait until no frame has been painted for `quiet` s; return the last frame time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            if time.monotonic() - self.last >= quiet:
                return self.last
        raise TimeoutError("the screen never settled")


def _key(app: Any, key: str, char: str | None) -> float:
    """Deliver a key as the driver's input thread does; returns the injection time."""
    from textual import events

    t = time.monotonic()
    app._driver.process_message(events.Key(key, char))
    return t


async def _ready(app: Any, frames: Frames) -> None:
    from picobot_tui.core.llm import client as llm

    app.prompt.input.cursor_blink = False  # no periodic frames: "settled" means settled
    deadline = time.monotonic() + 60
    while not hasattr(app, "sessions") or llm._LITELLM is None:
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not become ready (LiteLLM warm-up)")
        await asyncio.sleep(0.05)
    for worker in list(app.workers):
        if worker.group == "warm":
            await worker.wait()
    await frames.settle(0.3)


async def _send(app: Any, text: str) -> float:
    app.prompt.text = text
    app.prompt.input.focus()
    await asyncio.sleep(0.05)
    return await asyncio.to_thread(_key, app, "enter", "\r")


async def _turn_done(app: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not (app.lifecycle.outcome is not None and not app.busy):
        if time.monotonic() > deadline:
            raise TimeoutError("the turn did not finish")
        await asyncio.sleep(0.01)


def _profiler(params: dict[str, Any]) -> Any:
    """pyinstrument over the measured part when params["profile"] names an output file."""
    if not params.get("profile"):
        return None
    if params["profile"].endswith(".prof"):
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
        return profiler
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.001, async_mode="disabled")
    profiler.start()
    return profiler


def _profile_done(profiler: Any, params: dict[str, Any]) -> None:
    if profiler is not None and params["profile"].endswith(".prof"):
        profiler.disable()
        profiler.dump_stats(params["profile"])
    elif profiler is not None:
        profiler.stop()
        with open(params["profile"], "w", encoding="utf-8") as f:
            f.write(profiler.output_text(color=False))


async def mode_stream(app: Any, frames: Frames, params: dict[str, Any]) -> dict[str, Any]:
    await _ready(app, frames)
    profiler = _profiler(params)
    cpu0 = time.process_time()
    t0 = await _send(app, params.get("message", "go"))
    await _turn_done(app)
    last = await frames.settle(0.5)
    cpu = time.process_time() - cpu0
    _profile_done(profiler, params)
    return {
        "wall": last - t0,
        "cpu": cpu,
        "frames": frames.count,
        "outcome": app.lifecycle.outcome,
    }


def mode_headless(params: dict[str, Any]) -> dict[str, Any]:
    from picobot_tui.core.llm.client import load_litellm
    from picobot_tui.headless.text import HeadlessFlags, _run
    from picobot_tui.run.context import RunOptions

    load_litellm()
    flags = HeadlessFlags(stream=False, show_tools=False, markdown=False, yes=True)
    cpu0, t0 = time.process_time(), time.monotonic()
    code = asyncio.run(_run(RunOptions(), flags, params.get("message", "go")))
    sys.stdout.flush()
    return {"wall": time.monotonic() - t0, "cpu": time.process_time() - cpu0, "code": code}


async def _probe_keys(
    app: Any, frames: Frames, count: int, interval: float, alphabet: str
) -> list[float]:
    """Type `count` characters, one at a time; the latency of each is injection → first
    frame painted after the prompt holds it."""
    latencies = []
    for i in range(count):
        char = alphabet[i % len(alphabet)]
        expected = len(app.prompt.text) + 1
        event, out = frames.probe(lambda n=expected: len(app.prompt.text) >= n)
        t = await asyncio.to_thread(_key, app, char, char)
        ok = await asyncio.to_thread(event.wait, 5.0)
        latencies.append((out[0] - t) if ok else 5.0)
        await asyncio.sleep(interval * (0.6 + 0.8 * ((i * 7919) % 11) / 10))  # 0.6-1.4 ×
    return latencies


async def mode_latency(app: Any, frames: Frames, params: dict[str, Any]) -> dict[str, Any]:
    await _ready(app, frames)
    rounds, keys, interval = params["rounds"], params["keys"], params["interval"]
    idle: list[list[float]] = []
    streaming: list[list[float]] = []
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    for r in range(rounds):
        for phase in ("idle", "stream") if r % 2 == 0 else ("stream", "idle"):
            app.prompt.text = ""
            app.prompt.input.focus()
            await frames.settle(0.2)
            if phase == "idle":
                idle.append(await _probe_keys(app, frames, keys, interval, alphabet))
                continue
            await _send(app, "stream please")
            deadline = time.monotonic() + 30
            while not app.conversation.streaming:  # text is arriving
                if time.monotonic() > deadline:
                    raise TimeoutError("no streamed text")
                await asyncio.sleep(0.01)
            app.prompt.input.focus()
            streaming.append(await _probe_keys(app, frames, keys, interval, alphabet))
            still = app.busy
            app.action_interrupt()
            await _turn_done(app)
            if not still:
                raise RuntimeError("the answer ended before the probes did: make it longer")
    return {"idle": idle, "stream": streaming}


async def mode_token_cost(app: Any, frames: Frames, params: dict[str, Any]) -> dict[str, Any]:
    await _ready(app, frames)
    shown = len(app.conversation.blocks())
    profiler = _profiler(params)
    cpu0 = time.process_time()
    t0 = await _send(app, "go")
    await _turn_done(app)
    last = await frames.settle(0.5)
    cpu = time.process_time() - cpu0
    _profile_done(profiler, params)
    return {"cpu": cpu, "wall": last - t0, "blocks_before": shown, "frames": frames.count}


async def mode_browser(app: Any, frames: Frames, params: dict[str, Any]) -> dict[str, Any]:
    from picobot_tui.widgets.session_browser import SessionBrowserScreen

    await _ready(app, frames)

    def browser() -> Any:
        screen = app.screen
        return screen if isinstance(screen, SessionBrowserScreen) else None

    t0 = await asyncio.to_thread(_key, app, "ctrl+s", None)
    t_list = await frames.wait(lambda: browser() is not None and browser().table.row_count > 0)
    screen = browser()
    rows = screen.table.row_count
    if not params.get("needle"):
        return {"open": t_list - t0, "rows": rows}
    await frames.settle(0.3)
    needle = params["needle"]
    screen.filter_input.focus()
    await asyncio.sleep(0.05)
    t_typed = 0.0
    for char in needle:
        t_typed = await asyncio.to_thread(_key, app, char, char)
        await asyncio.sleep(0.03)
    t_hit = await frames.wait(
        lambda: screen._query == needle and not screen._search_fresh and screen.table.row_count > 0
    )
    hits = screen.table.row_count
    return {
        "open": t_list - t0,
        "rows": rows,
        "search_first": t_hit - t_typed,
        "first_hits": hits,
    }


MODES = {
    "stream": mode_stream,
    "latency": mode_latency,
    "token_cost": mode_token_cost,
    "browser": mode_browser,
}


SLOW: list[tuple[float, str]] = []


def _watch_slow_callbacks(threshold: float) -> None:
    """Diagnostics: record every event-loop callback that runs longer than `threshold` s."""
    import asyncio.events

    original = asyncio.events.Handle._run

    def _run(self: Any) -> None:
        t = time.perf_counter()
        original(self)
        dt = time.perf_counter() - t
        if dt > threshold:
            owner = getattr(self._callback, "__self__", None)
            coro = getattr(owner, "get_coro", lambda: None)()
            what = getattr(coro, "__qualname__", None) or repr(self)[:200]
            SLOW.append((dt, what))

    asyncio.events.Handle._run = _run  # type: ignore[method-assign]


def _die_with_the_bench(parent: int) -> None:
    """SIGKILL this driver when the bench that runs it dies. Its pty closes then, and the
    app went on alone: one orphaned `browser` driver spent 25 min at 85 % of a core beside
    a CI run (2026-12-07), slowing the suite it was meant only to load."""
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the bench died before the line above (or our imports)
        os._exit(1)


def main() -> int:
    mode, out, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if sys.platform == "linux" and "parent" in params:
        _die_with_the_bench(int(params["parent"]))
    if params.get("slow_callbacks"):
        _watch_slow_callbacks(params["slow_callbacks"])
    if params.get("patch"):  # experiments: "path/to/file.py" whose apply() patches the app
        import runpy

        runpy.run_path(params["patch"])["apply"]()
    if mode == "headless":
        result = mode_headless(params)
        with open(out, "w", encoding="utf-8") as f:
            json.dump(result, f)
        return 0

    from picobot_tui.config.settings import load_settings
    from picobot_tui.tui.app import PicobotApp

    settings, _ = load_settings()
    app = PicobotApp(settings, session=params.get("session"))
    result: dict[str, Any] = {}

    async def pilot(_pilot: Any) -> None:
        frames = Frames(app)
        try:
            result.update(await MODES[mode](app, frames, params))
        except Exception as e:  # reported to the parent
            import traceback

            result["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
        if SLOW:
            result["slow_callbacks"] = sorted(SLOW, reverse=True)[:15]
        with open(out, "w", encoding="utf-8") as f:
            json.dump(result, f)
        app.exit(0)

    try:
        app.run(auto_pilot=pilot)
    finally:
        app.sessions_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
