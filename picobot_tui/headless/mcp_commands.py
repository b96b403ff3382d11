"""`picobot mcp list` and `picobot mcp call`: the configured MCP servers without a model.

`list` connects to every server (as a turn would, bounded by tools.mcpConnectTimeout) and
prints what the TUI's `/mcp` pane shows: transport, state (with the error), tools, connect
time. `call` connects to one server and runs one tool through the registry, so it prints
exactly the text the model would read (sanitised, secrets scrubbed, truncated).

Everything printed passes through the run's scrubber (a server's error or result may echo
an `env` or `headers` value) and shows escapes and bidi controls as stand-ins
(core/visible.py): a server names its own tools. The servers' stderr goes to the log file
(`--logs`: stderr too).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import IO, Any

from picobot_tui.core import json_input
from picobot_tui.core.mcp.manager import McpManager, ServerStatus
from picobot_tui.core.tools.base import ToolError
from picobot_tui.core.visible import label, visible
from picobot_tui.run.config_warnings import print_warnings
from picobot_tui.run.context import load_checked_settings
from picobot_tui.run.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from picobot_tui.run.logs import setup_logging
from picobot_tui.run.options import RunError, RunOptions
from picobot_tui.run.runtime import Runtime, build_runtime
from picobot_tui.run.signals import install_signal_handlers, signal_exit

NO_SERVERS = (
    "No MCP servers are configured. Add them under tools.mcpServers in {path}, e.g. "
    '"time": {{"command": "uvx", "args": ["mcp-server-time"]}}.'
)


def _runtime(opts: RunOptions, err: IO[str]) -> Runtime:
    settings, warnings = load_checked_settings(opts)
    print_warnings(warnings, err)
    runtime = build_runtime(settings)
    setup_logging(settings.log_path, runtime.scrub, to_stderr=opts.logs)
    return runtime


def _run(main: Callable[[], Awaitable[int]]) -> int:
    """Run `main` with Ctrl+C / SIGTERM cancelling it (the servers are closed on the way
    out), then exit with the signal's code."""

    async def guarded() -> int:
        received: list[int] = []
        task = asyncio.current_task()
        assert task is not None
        install_signal_handlers(task, received)
        try:
            code = await main()
        except asyncio.CancelledError:
            if not received:
                raise
        return signal_exit(received) if received else code

    return asyncio.run(guarded())


# -- list ------------------------------------------------------------------------------------
def _still_connecting(timeout: float) -> str:
    return f"still connecting after {timeout:g} s (tools.mcpConnectTimeout)"


def status_lines(
    statuses: list[ServerStatus], tool_names: Callable[[str], list[str]], timeout: float
) -> list[str]:
    """The text of `picobot mcp list`: one block per server. A server names its tools and
    words its errors: each is a `label` (one line, controls as stand-ins), so a name holding
    a newline cannot print a line of its own (a forged "connected" status)."""
    width = max(len(label(s.name)) for s in statuses)
    lines: list[str] = []
    for s in statuses:
        if s.state == "connected":
            ms = f" in {s.connect_ms:,.0f} ms" if s.connect_ms is not None else ""
            count = f"{len(s.tools)} tool{'s' if len(s.tools) != 1 else ''}"
            era = f", protocol {label(s.protocol)}" if s.protocol else ""
            state = f"connected{ms}, {count}{era}"
        elif s.state == "failed":
            state = f"failed: {label(s.error or 'unknown error')}"
        elif s.state == "connecting":
            state = _still_connecting(timeout)
        else:
            state = s.state + (f": {label(s.error)}" if s.error else "")
        name = label(s.name)
        lines.append(f"{name:<{width}}  {s.transport:<5}  trust {s.trust:<4}  {state}")
        names = tool_names(s.name) if s.state == "connected" else []
        tools = [label(t) for t in s.tools]
        tool_width = max((len(t) for t in tools), default=0)
        for tool, offered in zip(tools, names, strict=False):
            lines.append(f"  {tool:<{tool_width}}  as {offered}")
        if s.unknown_enabled:
            missing = ", ".join(label(t) for t in s.unknown_enabled)
            lines.append(f"  enabledTools names tools the server does not offer: {missing}")
    return lines


async def _list(runtime: Runtime, out: IO[str]) -> int:
    mcp = runtime.mcp
    assert mcp is not None
    try:
        mcp.start()
        await mcp.wait_ready()
        statuses = mcp.statuses()
        text = "\n".join(status_lines(statuses, mcp.tool_names, mcp.connect_timeout))
    finally:
        await mcp.close()
    up = sum(1 for s in statuses if s.state == "connected")
    text += f"\n{up} of {len(statuses)} MCP server{'s' if len(statuses) != 1 else ''} connected."
    out.write(runtime.scrub(visible(text)) + "\n")
    out.flush()
    return EXIT_OK if up == len(statuses) else EXIT_ERROR


def run_list(opts: RunOptions, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr) -> int:
    """`picobot mcp list`: 0 when every server connected, 1 when one did not."""
    runtime = _runtime(opts, err)
    if runtime.mcp is None:
        from picobot_tui.core.paths import config_path

        out.write(NO_SERVERS.format(path=config_path()) + "\n")
        return EXIT_OK
    return _run(lambda: _list(runtime, out))


# -- call ------------------------------------------------------------------------------------
def parse_args(raw: str) -> dict[str, Any]:
    """`--args JSON`: one JSON object (RunError, exit 2, otherwise)."""
    if not raw.strip():
        return {}
    try:
        value = json_input.loads(raw)
    except json_input.JsonInputError as e:
        raise RunError(
            f"--args is not valid JSON: {e}. "
            'Give one JSON object, e.g. --args \'{"timezone": "UTC"}\'.',
            EXIT_USAGE,
        ) from None
    if not isinstance(value, dict):
        raise RunError(
            f"--args must be a JSON object {{...}}, got {type(value).__name__}: {raw.strip()}",
            EXIT_USAGE,
        )
    return value


def _one_server(runtime: Runtime, server: str) -> McpManager:
    """A manager of only `server` (the others are not started), on the run's registry."""
    servers = runtime.settings.tools.mcp_servers
    if not servers:
        from picobot_tui.core.paths import config_path

        raise RunError(NO_SERVERS.format(path=config_path()), EXIT_USAGE)
    if server not in servers:
        known = ", ".join(f"`{n}`" for n in servers)
        raise RunError(
            f"no MCP server is named `{server}` in tools.mcpServers; configured: {known}",
            EXIT_USAGE,
        )
    return McpManager(
        {server: servers[server]},
        workspace=runtime.tools.ctx.workspace,
        registry=runtime.tools,
        connect_timeout=runtime.settings.tools.mcp_connect_timeout,
        scrub=runtime.scrub,
        log_path=runtime.settings.log_path,
    )


def _model_name(manager: McpManager, server: str, tool: str) -> str:
    """The registry's name for `tool` (the server's name for it, or `mcp_<server>_<tool>`);
    RunError (exit 2) naming the tools there are."""
    found = manager.find(server)
    assert found is not None
    names = dict(zip((t.name for t in found.tools), manager.tool_names(server), strict=False))
    if tool in names:
        return names[tool]
    if tool in names.values():
        return tool
    offered = ", ".join(f"`{label(n)}`" for n in names) or "none"
    limited = " (enabledTools limits them)" if found.config.enabled_tools is not None else ""
    raise RunError(
        f"MCP server `{server}` has no tool `{tool}`; its tools{limited}: {offered}", EXIT_USAGE
    )


async def _call(
    runtime: Runtime,
    manager: McpManager,
    server: str,
    tool: str,
    args: dict[str, Any],
    out: IO[str],
    err: IO[str],
) -> int:
    scrub = runtime.scrub
    try:
        manager.start()
        await manager.wait_ready()
        status = manager.statuses()[0]
        if status.state != "connected":
            why = status.error if status.state in ("failed", "off") else None
            why = why or _still_connecting(manager.connect_timeout)
            err.write(scrub(label(f"picobot: MCP server `{server}`: {why}")) + "\n")
            return EXIT_ERROR
        name = _model_name(manager, server, tool)
        registry = runtime.tools
        try:
            valid = registry.validate(name, args)
        except ToolError as e:  # what the model would be told, as a usage error here
            raise RunError(str(e), EXIT_USAGE) from None
        result = await registry.execute(name, valid)
    finally:
        await manager.close()
    text = result.content
    out.write(text if text.endswith("\n") else text + "\n")
    out.flush()
    return EXIT_OK if result.ok else EXIT_ERROR


def run_call(
    opts: RunOptions,
    server: str,
    tool: str,
    raw_args: str,
    out: IO[str] = sys.stdout,
    err: IO[str] = sys.stderr,
) -> int:
    """`picobot mcp call`: 0 for a result, 1 for an error result (`isError`, a timeout, a
    server that did not connect), 2 for an unknown server or tool or bad `--args`."""
    args = parse_args(raw_args)
    runtime = _runtime(opts, err)
    manager = _one_server(runtime, server)
    return _run(lambda: _call(runtime, manager, server, tool, args, out, err))
