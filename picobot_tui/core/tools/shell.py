"""exec: run a shell command in the workspace.

exec is NOT a sandbox. The command runs as the user, with the user's environment and network,
through `/bin/sh`. What guards it:

- approval: it is a mutating tool, so it runs only after the user agrees (tools.approval);
- deny patterns for destructive commands, and the best-effort workspace guard (see
  shell_guard.py for exactly what they catch and what they cannot);
- the working directory is always the workspace;
- a timeout (tools.exec.timeout, or the call's `timeout`): the whole process group is killed;
- cancellation (Esc / Ctrl+C) kills the process group too;
- stdin is /dev/null, so nothing waits for input;
- output is capped (head + tail) and, in the registry, stripped of terminal escapes and
  scrubbed of known secrets before anyone sees it.

Background jobs (`cmd &`) do not outlive the call: after the shell exits, whatever is left in
its process group is killed once the output has drained (or after a short grace period).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from typing import Any

from picobot_tui.core.tools.base import Tool, ToolContext, ToolError, ToolResult
from picobot_tui.core.tools.paths import workspace_root
from picobot_tui.core.tools.shell_guard import check_confined, check_denied

MAX_TIMEOUT = 600.0
_DRAIN_GRACE = 1.0  # seconds to wait for output after the shell itself has exited
_CHUNK = 65536


class ExecTool(Tool):
    name = "exec"
    description = (
        "Run a shell command (/bin/sh) in the workspace directory and return its exit code "
        "and combined stdout+stderr (long output keeps its head and tail). No stdin; "
        "background jobs are killed when the command ends. Destructive commands are refused "
        "and, when the workspace is restricted, so are paths outside it."
    )
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The shell command."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT,
                "description": "Seconds before the command is killed (default from config).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    mutating = True

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str:
        timeout = _timeout(args, ctx)
        return f"$ {args['command']}\n(in {workspace_root(ctx)}, timeout {timeout:g} s)"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if "\x00" in command:
            raise ToolError("command contains a NUL byte")
        if not command.strip():
            raise ToolError("command is empty")
        workspace = workspace_root(ctx)
        check_denied(command, ctx.config.exec.deny_patterns)
        if ctx.config.restrict_to_workspace:
            check_confined(command, workspace)
        workspace.mkdir(parents=True, exist_ok=True)
        timeout = _timeout(args, ctx)
        # Keep exec's cut inside the registry's, so the tail (often the error) survives.
        limit = min(
            ctx.config.exec.max_output_chars, max(100, ctx.config.tool_result_max_chars - 200)
        )
        return await run_command(command, workspace, timeout, limit)


def _timeout(args: dict[str, Any], ctx: ToolContext) -> float:
    value = args.get("timeout")
    return float(value) if value is not None else float(ctx.config.exec.timeout)


class _Capture:
    """Keeps the head and the tail of a stream of text, and counts what falls between."""

    def __init__(self, limit: int) -> None:
        self.head_max = limit // 2
        self.tail_max = limit - self.head_max
        self.head = ""
        self.tail = ""
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        self.total += len(text)
        room = self.head_max - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-self.tail_max :] if self.tail_max else ""

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        if cut <= 0:
            return self.head + self.tail
        return f"{self.head}\n… [{cut} chars of output cut; {self.total} in all] …\n{self.tail}"


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Return once the shell has exited, even if something it started still holds its output.

    `Process.wait()` alone also waits for the pipes to close (Python 3.11), which a
    background job (`cmd &`) can keep open indefinitely, so the exit status is polled too.
    """
    waiter = asyncio.ensure_future(proc.wait())
    try:
        while not waiter.done() and proc.returncode is None:
            await asyncio.wait({waiter}, timeout=0.1)
    finally:
        waiter.cancel()


async def _pump(stream: asyncio.StreamReader, cap: _Capture) -> None:
    while chunk := await stream.read(_CHUNK):
        cap.feed(chunk)
    cap.feed(b"", final=True)


async def run_command(
    command: str, cwd: os.PathLike[str] | str, timeout: float, limit: int
) -> ToolResult:
    """Run `command` with /bin/sh in its own process group; see the module docstring."""
    env = dict(os.environ, PWD=str(cwd))
    env.pop("OLDPWD", None)
    try:
        proc = await asyncio.create_subprocess_shell(
            command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group, so the group can be killed
        )
    except OSError as e:
        raise ToolError(f"cannot start the shell: {e}") from None
    assert proc.stdout is not None
    cap = _Capture(limit)
    reader = asyncio.create_task(_pump(proc.stdout, cap))
    timed_out = lingering = False
    try:
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except TimeoutError:
            timed_out = True
            _kill_group(proc)
            await _exited(proc)
        done, _ = await asyncio.wait({reader}, timeout=_DRAIN_GRACE)
        if not done:  # background jobs still hold the pipe: end them
            lingering = True
            _kill_group(proc)
            done, _ = await asyncio.wait({reader}, timeout=_DRAIN_GRACE)
            if not done:  # something left the group (setsid) and kept the pipe
                reader.cancel()
    except asyncio.CancelledError:
        _kill_group(proc)
        reader.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(_exited(proc), 2)
        raise
    finally:
        if not reader.done():
            reader.cancel()
    _kill_group(proc)  # nothing of this call outlives it
    output = cap.text().rstrip("\n")
    if timed_out:
        raise ToolError(
            f"command timed out after {timeout:g} s and was killed (with its process group)."
            + (f"\nOutput before the timeout:\n{output}" if output else "")
        )
    code = proc.returncode
    assert code is not None
    status = f"exit code: {code}"
    if code < 0:
        with contextlib.suppress(ValueError):
            status += f" (killed by {signal.Signals(-code).name})"
    if lingering:
        status += " (background processes it left were killed)"
    body = output if output else "(no output)"
    return ToolResult(
        ok=code == 0, content=f"{status}\n{body}", status="ok" if code == 0 else "error"
    )
