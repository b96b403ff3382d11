"""exec: run a shell command in the workspace.

What guards it, outermost first:

- approval: it is a mutating tool, so it runs only after the user agrees (tools.approval);
- deny patterns for destructive commands, and the workspace guard, which judges the words
  the shell will see (guard.py: what they catch and what they cannot);
- the sandbox (sandbox.py): under `tools.exec.sandbox` "auto" (when bwrap works) or "bwrap",
  the command runs in bubblewrap: the workspace read-write, the system read-only, $HOME and
  ~/.picobot hidden, no network, its own PID namespace. "bwrap" refuses to run without it;
  "auto" falls back to running unsandboxed (logged once, and said in every preview);
- its environment (env.py): credentials stripped unless `tools.exec.env` says otherwise;
- the working directory is always the workspace; stdin is /dev/null;
- a timeout (tools.exec.timeout, or the call's `timeout`), and cancellation (Esc / Ctrl+C);
- output is masked of known secrets, then capped (head + tail, output.py), and in
  the registry stripped of terminal escapes and scrubbed again before anyone sees it.

Nothing the command starts outlives the call, when it ends, times out or is cancelled,
`setsid`, `nohup` and double forks included: under bwrap the PID namespace ends with the
shell (the kernel kills the rest); unsandboxed, the shell runs under a child-subreaper helper
(reaper.py) that kills every descendant when the shell exits or picobot stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.tools.base import Tool, ToolContext, ToolError, ToolResult
from picobot_tui.core.tools.exec.env import exec_env
from picobot_tui.core.tools.exec.guard import check_confined, check_denied
from picobot_tui.core.tools.exec.output import OutputCapture
from picobot_tui.core.tools.exec.sandbox import SandboxStatus, bwrap_argv, sandbox_status
from picobot_tui.core.tools.paths import workspace_root

log = logging.getLogger("picobot.exec")

MAX_TIMEOUT = 600.0
_DRAIN_GRACE = 1.0  # seconds to wait for output once everything the command started is gone
_STOP_GRACE = 2.0  # seconds the reaper gets to kill what is left before SIGKILL of the group
_CHUNK = 65536
_REAPER = str(Path(__file__).with_name("reaper.py"))
_warned_unsandboxed = False


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

    def describe(self, ctx: ToolContext) -> str:
        # What is true on this machine, so the model neither trusts a sandbox that is not
        # there nor works around one that is (the TOOLS.md template once said "not a
        # sandbox" everywhere). sandbox_status is probed once per process.
        status = sandbox_status(ctx.config.exec)
        if status.active:
            net = "with network" if ctx.config.exec.network else "without network"
            box = (
                f"It runs in a bubblewrap sandbox, {net}: only the workspace (and a private "
                "/tmp) is writable, and the user's home and picobot's files are hidden."
            )
        elif status.mode == "bwrap":
            box = "It is refused here: the bubblewrap sandbox it requires is not available."
        else:
            box = "It runs unsandboxed here (no bubblewrap): it can reach all the user's files."
        return f"{self.description} {box}"

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str:
        timeout = _timeout(args, ctx)
        status = sandbox_status(ctx.config.exec)
        if status.active:
            box = "sandboxed" + (", with network" if ctx.config.exec.network else ", no network")
        elif status.mode == "bwrap":
            box = "refused: bwrap is not available"
        else:
            box = "unsandboxed"
        return f"$ {args['command']}\n(in {workspace_root(ctx)}, timeout {timeout:g} s, {box})"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if "\x00" in command:
            raise ToolError("command contains a NUL byte")
        if not command.strip():
            raise ToolError("command is empty")
        workspace = workspace_root(ctx)
        status = sandbox_status(ctx.config.exec)
        if status.mode == "bwrap" and not status.active:
            raise ToolError(f'command refused: tools.exec.sandbox is "bwrap" but {status.reason}')
        env = exec_env(ctx.config.exec.env, os.environ, ctx.secrets, str(workspace))
        check_denied(command, ctx.config.exec.deny_patterns)
        if ctx.config.restrict_to_workspace:
            check_confined(command, workspace, env)
        workspace.mkdir(parents=True, exist_ok=True)
        timeout = _timeout(args, ctx)
        # Keep exec's cut inside the registry's, so the tail (often the error) survives.
        limit = min(
            ctx.config.exec.max_output_chars, max(100, ctx.config.tool_result_max_chars - 200)
        )
        sandbox = _sandbox_prefix(status, workspace, ctx.config.exec.network, env)
        return await run_command(
            command, workspace, timeout, limit, env=env, sandbox=sandbox, scrub=ctx.scrub
        )


def _sandbox_prefix(
    status: SandboxStatus, workspace: Path, network: bool, env: dict[str, str]
) -> list[str] | None:
    global _warned_unsandboxed
    if not status.active or status.bwrap is None:
        if not _warned_unsandboxed and status.mode == "auto":
            _warned_unsandboxed = True
            log.warning("exec runs unsandboxed: %s", status.reason)
        return None
    if "TMPDIR" in env:
        env["TMPDIR"] = "/tmp"  # the sandbox's own /tmp; the host's TMPDIR is hidden
    return bwrap_argv(status.bwrap, workspace, network=network)


def _timeout(args: dict[str, Any], ctx: ToolContext) -> float:
    value = args.get("timeout")
    return float(value) if value is not None else float(ctx.config.exec.timeout)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Return once the process has exited, even if something it started still holds its
    output: `Process.wait()` alone also waits for the pipes to close (Python 3.11)."""
    waiter = asyncio.ensure_future(proc.wait())
    try:
        while not waiter.done() and proc.returncode is None:
            await asyncio.wait({waiter}, timeout=0.1)
    finally:
        waiter.cancel()


async def _stop(proc: asyncio.subprocess.Process, reaper: bool) -> None:
    """End the command and everything it started (see the module docstring)."""
    if reaper and proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)  # the reaper kills every descendant, then exits
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_exited(proc), _STOP_GRACE)
    _kill_group(proc)  # bwrap (its init dies with it: --die-with-parent), or a stuck reaper
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    await _exited(proc)


async def _closed(proc: asyncio.subprocess.Process, reader: asyncio.Task[None]) -> None:
    """Once the output pipe has reached its end (the reader ends when the pipe's transport
    reports it lost, having closed itself) and the process is reaped."""
    await asyncio.wait({reader})
    await proc.wait()


async def _pump(stream: asyncio.StreamReader, cap: OutputCapture) -> None:
    while chunk := await stream.read(_CHUNK):
        cap.feed(chunk)
    cap.feed(b"", final=True)


def _read_status(fd: int) -> tuple[int | None, int]:
    """The reaper's `<exit code> <killed>` line (None when it never wrote one)."""
    data = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 4096):
            data += chunk
    try:
        code, killed = data.split()
        return int(code), int(killed)
    except ValueError:
        return None, 0


async def run_command(
    command: str,
    cwd: os.PathLike[str] | str,
    timeout: float,
    limit: int,
    *,
    env: dict[str, str] | None = None,
    sandbox: list[str] | None = None,
    scrub: Scrubber | None = None,
) -> ToolResult:
    """Run `command` with /bin/sh under bwrap (`sandbox`: its argv up to `--`) or under the
    reaper; see the module docstring."""
    if env is None:
        env = dict(os.environ, PWD=str(cwd))
        env.pop("OLDPWD", None)
    shell = ["/bin/sh", "-c", command]
    status_r = status_w = -1
    if sandbox is not None:
        argv: list[str] = [*sandbox, *shell]
        fds: tuple[int, ...] = ()
    else:
        status_r, status_w = os.pipe()
        argv = [sys.executable, "-I", "-S", _REAPER, str(os.getpid()), str(status_w), "--", *shell]
        fds = (status_w,)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group and session, away from the tty
            pass_fds=fds,
        )
    except OSError as e:
        if status_r >= 0:
            os.close(status_r)
        raise ToolError(f"cannot start the shell: {e}") from None
    finally:
        if status_w >= 0:
            os.close(status_w)
    assert proc.stdout is not None
    cap = OutputCapture(limit, scrub)  # masks known secrets before it cuts
    reader = asyncio.create_task(_pump(proc.stdout, cap))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except TimeoutError:
            timed_out = True
            await _stop(proc, sandbox is None)
        # Everything the command started is gone by now, so the pipe is closing.
        done, _ = await asyncio.wait({reader}, timeout=_DRAIN_GRACE)
        if not done:  # something escaped and kept the pipe: end the group and stop reading
            _kill_group(proc)
            reader.cancel()
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await asyncio.shield(_stop(proc, sandbox is None))
            # Read on to the pipe's end and let the transport see it, so it is closed while
            # the loop runs: left open, the garbage collector closed it after asyncio.run had
            # closed the loop ("RuntimeError: Event loop is closed" on a SIGTERM under load).
            await asyncio.shield(asyncio.wait_for(_closed(proc, reader), _DRAIN_GRACE))
        reader.cancel()
        raise
    finally:
        if not reader.done():
            reader.cancel()
        _kill_group(proc)  # nothing of this call outlives it
    code = proc.returncode
    killed = 0
    if status_r >= 0:
        reported, killed = _read_status(status_r)
        os.close(status_r)
        if reported is not None:
            code = reported
    output = cap.text().rstrip("\n")
    if timed_out:
        raise ToolError(
            f"command timed out after {timeout:g} s and was killed (with everything it started)."
            + (f"\nOutput before the timeout:\n{output}" if output else "")
        )
    assert code is not None
    status = f"exit code: {code}"
    if code < 0:
        with contextlib.suppress(ValueError):
            status += f" (killed by {signal.Signals(-code).name})"
    if killed:
        status += " (background processes it left were killed)"
    body = output if output else "(no output)"
    return ToolResult(
        ok=code == 0, content=f"{status}\n{body}", status="ok" if code == 0 else "error"
    )
