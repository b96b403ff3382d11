"""The `picobot mcp` Typer group. Light on purpose: `picobot_tui.cli` imports it to register
the group, so it imports typer only; each command loads `mcp_commands` (and through it the
core's MCP code) when it runs, never for `--help` or `sessions list`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer

mcp_app = typer.Typer(
    help="The configured MCP servers (tools.mcpServers): list them, call a tool.",
    no_args_is_help=True,
)

_WORKSPACE = "The workspace: a stdio server's working directory unless its `cwd` is set."
_LOGS = "Show runtime logs and the servers' stderr on stderr."


def run_or_fail(run: Callable[[], int]) -> NoReturn:
    """Exit with `run`'s code, or print a RunError's message and exit with its code."""
    from picobot_tui.run.options import RunError

    try:
        code = run()
    except RunError as e:
        typer.echo(f"picobot: {e.message}", err=True)
        raise typer.Exit(e.code) from None
    raise typer.Exit(code)


@mcp_app.command("list")
def mcp_list(
    workspace: Annotated[Path | None, typer.Option(help=_WORKSPACE)] = None,
    logs: Annotated[bool, typer.Option(help=_LOGS)] = False,
) -> None:
    """Connect to every server: its transport, state, tools, connect time (exit 1 if one failed)."""
    from picobot_tui.headless.mcp_commands import run_list
    from picobot_tui.run.options import RunOptions

    run_or_fail(lambda: run_list(RunOptions(workspace=workspace, logs=logs)))


@mcp_app.command("call")
def mcp_call(
    server: Annotated[str, typer.Argument(help="The server's name in tools.mcpServers.")],
    tool: Annotated[str, typer.Argument(help="The tool's name (or its mcp_<server>_<tool>).")],
    args: Annotated[
        str, typer.Option("--args", help="The arguments, one JSON object: '{\"a\": 1}'.")
    ] = "{}",
    workspace: Annotated[Path | None, typer.Option(help=_WORKSPACE)] = None,
    logs: Annotated[bool, typer.Option(help=_LOGS)] = False,
) -> None:
    """Call one tool without a model; print what the model would read (exit 1 for an error)."""
    from picobot_tui.headless.mcp_commands import run_call
    from picobot_tui.run.options import RunOptions

    opts = RunOptions(workspace=workspace, logs=logs)
    run_or_fail(lambda: run_call(opts, server, tool, args))
