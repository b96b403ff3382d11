"""Run one hook command: the event as JSON on stdin, and what its exit says.

Exit 0 allows; its stdout, when it is a JSON object, may carry a decision (`"decision":
"block"`, `hookSpecificOutput.permissionDecision: "deny"`), a `reason` and
`hookSpecificOutput.additionalContext`; stdout that is not JSON is context. Stdout that starts
with `{` and is not a JSON object is a failure. Exit 2 blocks, with stderr as the reason. Any
other exit, a signal, a timeout or a command that cannot be launched is a failure: never a
silent allow (core/hooks/__init__.py decides what a failure does per event).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from picobot_tui.core.hooks.config import HookCommand

MAX_OUTPUT = 64 * 1024
"""Bytes of a hook's stdout and stderr kept (the rest is read and dropped)."""

Verdict = Literal["allow", "block", "failed"]


@dataclass(frozen=True)
class HookRun:
    """What one hook command said."""

    command: str
    verdict: Verdict
    reason: str = ""
    """Why it blocked (stderr, or the JSON `reason`), or how it failed."""
    context: str = ""
    """Text for the model (additionalContext, or stdout that is not JSON)."""
    exit_code: int | None = None
    ms: float = 0.0


async def _read(stream: asyncio.StreamReader | None) -> bytes:
    """Up to MAX_OUTPUT bytes; the rest is drained so the hook never blocks on a pipe."""
    kept = bytearray()
    if stream is None:
        return b""
    while chunk := await stream.read(65536):
        if len(kept) < MAX_OUTPUT:
            kept += chunk[: MAX_OUTPUT - len(kept)]
    return bytes(kept)


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def run_hook(
    hook: HookCommand, payload: dict[str, Any], *, cwd: Path, env: dict[str, str]
) -> HookRun:
    """Run `hook` with `payload` on stdin, in its own process group (killed on timeout)."""
    t0 = time.monotonic()

    def done(
        verdict: Verdict, reason: str = "", context: str = "", code: int | None = None
    ) -> HookRun:
        ms = round((time.monotonic() - t0) * 1000, 1)
        return HookRun(hook.command, verdict, reason, context, code, ms)

    data = json.dumps(payload, ensure_ascii=False).encode()
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as e:
        return done("failed", f"could not be launched: {e.strerror or e}")
    try:
        async with asyncio.timeout(hook.timeout):  # one timer for reading and the exit
            out, err, _ = await asyncio.gather(
                _read(proc.stdout), _read(proc.stderr), _feed(proc, data)
            )
            code = await proc.wait()
    except TimeoutError:
        _kill(proc)
        await proc.wait()
        return done("failed", f"timed out after {hook.timeout:g} s and was killed")
    except BaseException:
        _kill(proc)  # cancelled (Esc): the hook does not outlive the call
        raise
    stdout = out.decode("utf-8", "replace").strip()
    stderr = err.decode("utf-8", "replace").strip()
    if code == 2:
        return done("block", stderr, code=2)
    if code != 0:
        how = f"was killed by signal {-code}" if code < 0 else f"exited {code}"
        return done("failed", how + (f": {stderr}" if stderr else ""), code=code)
    if not stdout.startswith("{"):
        return done("allow", context=stdout, code=0)
    try:
        answer = json.loads(stdout)
    except ValueError as e:
        return done("failed", f"printed invalid JSON on stdout ({e})", code=0)
    if not isinstance(answer, dict):
        return done("failed", "printed JSON that is not an object on stdout", code=0)
    return _decision(answer, done)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the input and close stdin; a hook that exits without reading it is fine."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()
        await proc.stdin.wait_closed()


def _decision(answer: dict[str, Any], done: Callable[..., HookRun]) -> HookRun:
    """An exit-0 hook's JSON answer, in Claude Code's shape."""
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = specific.get("additionalContext")
    context = context if isinstance(context, str) else ""
    reason = next(
        (
            v
            for v in (
                answer.get("reason"),
                specific.get("permissionDecisionReason"),
                answer.get("stopReason"),
            )
            if isinstance(v, str) and v
        ),
        "",
    )
    blocked = (
        answer.get("decision") == "block"
        or specific.get("permissionDecision") == "deny"
        or answer.get("continue") is False
    )
    return done("block" if blocked else "allow", reason, context, 0)
