"""#12 MCP (issue 12): what three stdio MCP servers cost picobot.

12a  TUI cold start, spawn → first frame, with three stdio servers configured
     (`sys.executable -m mcp_server_time`) against the same start with none. Same harness as
     #1 (`bench/launch.py` in a 120×40 pseudo-terminal); the time until the loaded app is
     painted ("ready") is reported for both.
12b  Time until the three servers' tools are ready: picobot's `McpManager` (`start()` →
     `wait_ready()`, the SDK import in a thread, three connections, tools in the registry;
     `bench/mcp_ready.py`) against a bare SDK script (`bench/baselines/mcp_bare.py`: three
     `mcp.Client(StdioServerParameters(...))` concurrently, `list_tools`). Both are fresh
     subprocesses, and both intervals start in the event loop before the SDK is imported
     (a user and the bare script both pay the import) and end when all three have listed.
12c  Per-call overhead of an MCP tool call through the agent loop against the SDK's raw
     `client.call_tool` on the same server program. In one process and one event loop:
     turns of `AgentLoop.run_turn` with a model double that asks for
     `mcp_time_get_current_time` once and then answers (two model calls, four session
     appends, one MCP call); the same turns asking for an in-process no-op tool with the same
     arguments and a result of the same length; and raw `call_tool`s on a bare SDK client to
     a second copy of the server. The loop's own cost per turn (model double, events,
     appends, trace) is the no-op turn, so the MCP call through the loop is
     `mcp turn − no-op turn`: McpTool and the registry (validation, approval check),
     `McpServer.call`, the connection watcher's relay, the SDK round trip and the server's
     work, the result's conversion and scrubbing. Target: that ≤ 1.2 × raw + 2 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bench.bench_01_cold_start import first_frame
from bench.common import (
    ROOT,
    Result,
    alternate,
    bench_env,
    median,
    ratios,
    report,
    temp_dir,
    timed_run,
    write_config,
)

SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
SERVERS = 3
TOOL = "get_current_time"
ARGS = {"timezone": "UTC"}
CALLS = 20  # timed calls (turns) per arm and repetition in #12c


def servers(trust: str | None = None) -> dict[str, dict[str, Any]]:
    entry = dict(SERVER, **({"trust": trust} if trust else {}))
    names = ["time", "clock", "zone"][:SERVERS]
    return {name: dict(entry) for name in names}


# ---------------------------------------------------------------- 12a cold start


def _processes_in(directory: Path) -> list[int]:
    """The processes whose working directory is `directory`: picobot starts a stdio server
    in the workspace (its `cwd` unless the config names one)."""
    target = os.path.realpath(directory)
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/cwd") == target:
                    found.append(int(entry))
            except OSError:  # gone, or not ours
                continue
    return found


def wait_servers_gone(workspace: Path, timeout: float = 15.0) -> int:
    """Wait until no server started in `workspace` is left (returns how many were seen).

    The measured process is terminated at its first frame; a stdio server it had started
    sees end-of-file on its stdin and exits only once its own imports are done (~1-2 s of
    CPU). Without this wait, those processes would run during the next, unrelated
    measurement. Ones still there after `timeout` are ended (by pid: this run started them).
    """
    seen = set(_processes_in(workspace))
    deadline = time.monotonic() + timeout
    while (left := _processes_in(workspace)) and time.monotonic() < deadline:
        seen.update(left)
        time.sleep(0.02)
    for pid in _processes_in(workspace):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    return len(seen)


def cold_start(reps: int) -> Result:
    started = time.perf_counter()
    ready: dict[str, list[float]] = {"mcp": [], "none": []}
    left: dict[str, list[float]] = {"mcp": [], "none": []}
    cpu: dict[str, list[float]] = {"mcp": [], "none": []}
    with temp_dir() as tmp:
        envs = {}
        for label, mcp in (("mcp", servers()), ("none", None)):
            home = tmp / label
            write_config(home, "http://127.0.0.1:9/v1", mcp_servers=mcp)  # never called
            envs[label] = bench_env(home)

        def start(label: str) -> float:
            recs = first_frame(["--", "agent"], envs[label], tmp, ready=True)
            ready[label].append(recs["ready"]["t"])
            cpu[label].append(recs["first_frame"]["cpu"])
            left[label].append(wait_servers_gone(tmp / label / "workspace"))
            return recs["first_frame"]["t"]

        # A tight target (5 %): more pairs than #1, a longer budget.
        a, b = alternate(lambda: start("mcp"), lambda: start("none"), reps, budget=120)
    r = ratios(a, b)
    ratio = median(r)
    for label in cpu:  # without the warm-up round
        cpu[label] = cpu[label][-len(a) :]
    return report(
        Result(
            "12a",
            f"TUI cold start to first frame, {SERVERS} stdio MCP servers vs none",
            median(a),
            median(b),
            "s",
            ratio,
            "≤ 1.05×",
            ratio <= 1.05,
            detail=(
                f"CPU time to the first frame {median(cpu['mcp']) * 1000:.0f} ms vs "
                f"{median(cpu['none']) * 1000:.0f} ms (median ratio "
                f"{median(ratios(cpu['mcp'], cpu['none'])):.2f}×); "
                f"loaded app painted (ready) at {median(ready['mcp']) * 1000:.0f} ms with the "
                f"servers, {median(ready['none']) * 1000:.0f} ms without; server processes "
                f"left running at the kill (waited for before the next run): "
                f"{median(left['mcp']):.0f} per start"
            ),
            samples={"A s": a, "B s": b, "ratio": r, "A cpu s": cpu["mcp"], "B cpu s": cpu["none"]},
            seconds=time.perf_counter() - started,
        )
    )


# ---------------------------------------------------------------- 12b tools ready


def tools_ready(reps: int) -> Result:
    started = time.perf_counter()
    spawn: dict[str, list[float]] = {"picobot": [], "bare": []}
    with temp_dir() as tmp:
        home = tmp / "home"
        config = write_config(home, "http://127.0.0.1:9/v1", mcp_servers=servers())
        env = bench_env(home)
        commands = {
            "picobot": [sys.executable, "-m", "bench.mcp_ready", str(config)],
            "bare": [
                sys.executable,
                str(ROOT / "bench" / "baselines" / "mcp_bare.py"),
                str(SERVERS),
                SERVER["command"],
                *SERVER["args"],
            ],
        }

        def measure(label: str) -> float:
            t0 = time.monotonic()
            _, _, proc = timed_run(commands[label], env)
            out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
            if label == "picobot" and out["states"] != ["connected"] * SERVERS:
                raise RuntimeError(f"picobot's servers did not all connect: {out}")
            if out["tools"] != 2 * SERVERS:  # mcp_server_time lists two tools
                raise RuntimeError(f"{label}: {out['tools']} tools listed, not {2 * SERVERS}")
            spawn[label].append(out["ready"] - t0)
            return out["ready"] - out["start"]

        a, b = alternate(lambda: measure("picobot"), lambda: measure("bare"), reps, budget=90)
    r = ratios(a, b)
    ratio = median(r)
    return report(
        Result(
            "12b",
            f"{SERVERS} stdio MCP servers' tools ready, McpManager vs a bare SDK script",
            median(a),
            median(b),
            "s",
            ratio,
            "≤ 1.2×",
            ratio <= 1.2,
            detail=(
                "from the SDK import to every tool listed; from the spawn: "
                f"{median(spawn['picobot']) * 1000:.0f} ms vs {median(spawn['bare']) * 1000:.0f} ms"
            ),
            samples={"A s": a, "B s": b, "ratio": r},
            seconds=time.perf_counter() - started,
        )
    )


# ---------------------------------------------------------------- 12c per-call overhead


class ToolThenTextModel:
    """A model double: asks for `tool` (with ARGS) when the last message is the user's, and
    answers "ok" once the tool's result is in; usage is reported as a provider's is."""

    def __init__(self) -> None:
        self.tool = ""
        self._n = 0

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request) -> AsyncIterator:  # type: ignore[no-untyped-def]
        from picobot_tui.core.llm.model import TextChunk, ToolCallChunk, UsageChunk

        if request.messages[-1].get("role") == "tool":
            yield TextChunk("ok")
        else:
            self._n += 1
            yield ToolCallChunk(0, f"call_{self._n}", self.tool, json.dumps(ARGS))
        yield UsageChunk(len(request.messages) * 50, 1)


def _bench_tool(name: str, run):  # type: ignore[no-untyped-def]
    """An in-process tool with the MCP tool's arguments (no approval, like `trust: auto`)."""
    from picobot_tui.core.tools.base import Tool

    class BenchTool(Tool):
        description = "A benchmark tool."
        parameters = {
            "type": "object",
            "properties": {"timezone": {"type": "string"}},
            "required": ["timezone"],
        }

        async def run(self, args: dict[str, Any], ctx: Any) -> str:
            return await run(args)

    tool = BenchTool()
    tool.name = name
    return tool


async def _turns(loop, session, model, tool: str, n: int) -> tuple[list[float], list[float]]:  # type: ignore[no-untyped-def]
    """n turns asking for `tool`; (seconds per turn, the loop's own tool duration in ms)."""
    from picobot_tui.core.events import ToolCallFinished

    model.tool = tool
    times, durations = [], []
    for i in range(n):
        t0 = time.perf_counter()
        async for event in loop.run_turn(session, f"question {i}"):
            if isinstance(event, ToolCallFinished):
                if not event.ok:
                    raise RuntimeError(f"{tool} failed in the loop: {event.result}")
                durations.append(event.duration_ms)
        times.append(time.perf_counter() - t0)
    return times, durations


async def _raw(client, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        result = await client.call_tool(TOOL, ARGS)
        times.append(time.perf_counter() - t0)
        if result.is_error:
            raise RuntimeError(f"raw call_tool failed: {result}")
    return times


def call_overhead(reps: int) -> Result:
    started = time.perf_counter()
    with temp_dir() as tmp:
        home = tmp / "home"
        config = write_config(home, mcp_servers={"time": dict(SERVER, trust="auto")})
        os.environ["PICOBOT_HOME"] = str(home)
        try:
            return asyncio.run(_call_overhead(config, reps, started))
        finally:
            os.environ.pop("PICOBOT_HOME", None)


async def _call_overhead(config: Path, reps: int, started: float) -> Result:
    from mcp import Client, StdioServerParameters

    from picobot_tui.config.settings import load_settings
    from picobot_tui.run.runtime import build_runtime, mcp_running

    settings, _ = load_settings(config)
    model = ToolThenTextModel()
    rt = build_runtime(settings, model_client=model)
    assert rt.mcp is not None
    params = StdioServerParameters(command=SERVER["command"], args=SERVER["args"])
    async with mcp_running(rt), Client(params) as client:
        if await rt.mcp.wait_ready(60):
            raise RuntimeError("picobot's MCP server did not connect")
        tools = {"mcp": f"mcp_time_{TOOL}", "sdk": "bench_sdk_call", "noop": "bench_noop"}
        if tools["mcp"] not in rt.tools.names():
            raise RuntimeError(f"{tools['mcp']} is not offered: {rt.mcp.statuses()}")
        sample = await client.call_tool(TOOL, ARGS)
        text = "".join(getattr(c, "text", "") for c in sample.content)
        in_tool: list[float] = []

        async def sdk_call(args: dict[str, Any]) -> str:
            t0 = time.perf_counter()
            result = await client.call_tool(TOOL, args)
            in_tool.append((time.perf_counter() - t0) * 1000)
            if result.is_error:
                raise RuntimeError(f"raw call_tool failed: {result}")
            return "".join(getattr(c, "text", "") for c in result.content)

        async def noop(args: dict[str, Any]) -> str:
            return text

        rt.tools.add(_bench_tool(tools["sdk"], sdk_call))
        rt.tools.add(_bench_tool(tools["noop"], noop))
        sessions = {arm: rt.store.open(rt.store.new_key("cli"), create=True) for arm in tools}
        warm = rt.store.open(rt.store.new_key("cli"), create=True)
        for tool in tools.values():  # warm-up, unrecorded
            await _turns(rt.loop, warm, model, tool, 5)
        await _raw(client, 5)
        in_tool.clear()
        per: dict[str, list[float]] = {"mcp": [], "sdk": [], "noop": [], "raw": []}
        durations: dict[str, list[float]] = {"mcp": [], "sdk": [], "noop": []}
        sdk_in_tool: list[float] = []
        budget_start = time.monotonic()
        for i in range(reps):
            if i >= 3 and time.monotonic() - budget_start > 60:
                print(f"    (time budget reached: {i} repetitions instead of {reps})")
                break
            # The three kinds of turn interleaved call by call (rotated), so a change of
            # load hits all of them alike; then the raw calls back to back.
            times: dict[str, list[float]] = {arm: [] for arm in tools}
            took: dict[str, list[float]] = {arm: [] for arm in tools}
            arms = list(tools)
            for j in range(CALLS):
                k = (i + j) % len(arms)
                for arm in arms[k:] + arms[:k]:
                    t, d = await _turns(rt.loop, sessions[arm], model, tools[arm], 1)
                    times[arm] += t
                    took[arm] += d
            for arm in tools:
                per[arm].append(median(times[arm]) * 1000)
                durations[arm].append(median(took[arm]))
            sdk_in_tool.append(median(in_tool))
            in_tool.clear()
            per["raw"].append(median(await _raw(client, CALLS)) * 1000)
        for session in [*sessions.values(), warm]:
            session.close()
    through = [m - n for m, n in zip(per["mcp"], per["noop"], strict=True)]
    raw = [m - n for m, n in zip(per["sdk"], per["noop"], strict=True)]
    value, base = median(through), median(raw)
    r = ratios(through, raw)
    over = [t - w for t, w in zip(through, raw, strict=True)]
    met = value <= 1.2 * base + 2.0
    return report(
        Result(
            "12c",
            "MCP tool call through the loop vs the SDK's raw call_tool, per call",
            value,
            base,
            "ms",
            median(r),
            "≤ 1.2× + 2 ms",
            met,
            detail=(
                f"overhead per call {median(over):+.2f} ms (loop − raw; the target allows "
                f"{0.2 * base + 2.0:+.2f} ms at this raw time). Whole turns: "
                f"{median(per['mcp']):.2f} ms with the MCP tool, {median(per['sdk']):.2f} ms "
                f"with a raw SDK call in a tool, {median(per['noop']):.2f} ms with the no-op. "
                "The loop's own tool duration (ToolCallFinished): "
                f"{median(durations['mcp']):.2f} ms MCP, {median(durations['sdk']):.2f} ms "
                f"raw SDK call (timed inside: {median(sdk_in_tool):.2f} ms), "
                f"{median(durations['noop']):.3f} ms no-op. Raw calls back to back: "
                f"{median(per['raw']):.2f} ms. {CALLS} calls per arm and repetition"
            ),
            samples={
                "A ms (mcp turn − no-op turn)": through,
                "B ms (sdk-call turn − no-op turn)": raw,
                "mcp turn ms": per["mcp"],
                "sdk-call turn ms": per["sdk"],
                "no-op turn ms": per["noop"],
                "raw back-to-back ms": per["raw"],
            },
            seconds=time.perf_counter() - started,
        )
    )


def run(reps: int | None = None, parts: str = "abc") -> list[Result]:
    figures = {"a": (cold_start, 11), "b": (tools_ready, 9), "c": (call_overhead, 9)}
    return [figures[p][0](reps or figures[p][1]) for p in parts]


if __name__ == "__main__":  # python -m bench.bench_12_mcp [REPS] [PARTS, e.g. ac]
    run(
        int(sys.argv[1]) if len(sys.argv) > 1 else None, sys.argv[2] if len(sys.argv) > 2 else "abc"
    )
