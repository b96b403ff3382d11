"""`picobot agent`: the TUI, one message with `-m`, or the `--json` protocol. Only typer is
imported here (its options are what `--help` shows); each mode imports what it needs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from picobot_tui.cli_common import fail
from picobot_tui.run.exit_codes import EXIT_INTERRUPTED, EXIT_USAGE

if TYPE_CHECKING:
    from picobot_tui.config.settings import Settings
    from picobot_tui.core.llm.model import ModelClient
    from picobot_tui.run.options import RunOptions

OUTPUT_FORMATS = ("text", "json", "stream-json")

# What a mode always does, per flag: a flag asking for anything else there is refused (exit 2)
# instead of being silently ignored. `-m` honours every flag; flags not listed work everywhere
# (--model, --workspace, -s, --max-tokens; --logs, --yes and --ephemeral in --json).
_FIXED: dict[str, dict[str, tuple[object, str]]] = {
    "the TUI": {
        "stream": (True, "it always streams the answer"),
        "show_tools": (True, "it always shows tool calls"),
        "markdown": (True, "it always renders Markdown"),
        "logs": (False, "its screen owns the terminal; every log line goes to {log}"),
        "yes": (False, "answer the approval dialog, or set tools.approval to auto"),
        "ephemeral": (False, "the TUI keeps its sessions; use -m or --json"),
        "output_format": ("text", "it is a screen, not a stream: use -m"),
        "output_schema": (None, "it applies to one -m answer"),
    },
    "--json": {
        "stream": (True, "it always sends text_delta events"),
        "show_tools": (True, "it always sends the tool events"),
        "markdown": (False, "it sends the answer's raw text"),
        "output_format": (
            "text",
            "it is the event stream already (-m --output-format "
            "stream-json is the same for one message)",
        ),
        "output_schema": (None, "it applies to one -m answer"),
    },
}


def _flag(name: str, value: object) -> str:
    if name == "yes":
        return "--yes"
    option = name.replace("_", "-")
    if isinstance(value, bool):
        return f"--{'' if value else 'no-'}{option}"
    return f"--{option}"


def _refuse_ignored_flags(ctx: typer.Context, mode: str) -> None:
    """Exit 2 with one line when a flag given on the command line would be ignored in `mode`
    (Typer cannot tell a bool flag's default from the same value given: click can)."""
    for name, (fixed, why) in _FIXED[mode].items():
        source = ctx.get_parameter_source(name)
        # By name: Typer may hand out its own vendored click's enum, not click.core's.
        if source is None or source.name == "DEFAULT":
            continue
        value = ctx.params[name]
        if value == fixed:
            continue  # what the mode does anyway
        if "{log}" in why:
            from picobot_tui.core.paths import picobot_home

            why = why.format(log=picobot_home() / "data" / "logs" / "picobot.log")
        fail(f"{_flag(name, value)} does not apply to {mode}: {why}.", EXIT_USAGE)


def agent(
    ctx: typer.Context,
    message: Annotated[
        str | None, typer.Option("-m", "--message", help="Send one message; - reads stdin.")
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("-s", "--session", help="Resume a session by id, or `latest`."),
    ] = None,
    stream: Annotated[
        bool, typer.Option(help="-m: print tokens as they arrive (to a terminal).")
    ] = True,
    show_tools: Annotated[bool, typer.Option(help="-m: show tool calls on stderr.")] = True,
    markdown: Annotated[bool, typer.Option(help="-m: render the answer as Markdown.")] = False,
    logs: Annotated[bool, typer.Option(help="-m, --json: show runtime logs on stderr.")] = False,
    max_tokens: Annotated[
        int | None, typer.Option(help="Max tokens per model response (overrides config).")
    ] = None,
    json_mode: Annotated[
        bool, typer.Option("--json", help="JSON-lines protocol on stdin/stdout.")
    ] = False,
    model: Annotated[
        str | None, typer.Option(help="LiteLLM model, e.g. openai/gpt-4o-mini, or `demo`.")
    ] = None,
    workspace: Annotated[
        Path | None, typer.Option(help="Workspace directory for the tools.")
    ] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="-m, --json: approve commands and file changes without asking."
        ),
    ] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--output-format",
            help="-m: text (the answer), json (one result object) or stream-json (the "
            "--json events, then the result).",
        ),
    ] = "text",
    output_schema: Annotated[
        Path | None,
        typer.Option(
            "--output-schema",
            help="-m: the answer must be JSON matching this JSON Schema file (exit 1 if not).",
        ),
    ] = None,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Plan mode: only reading tools run; the agent answers with a plan (docs/plan.md).",
        ),
    ] = False,
    ephemeral: Annotated[
        bool,
        typer.Option(
            "--ephemeral",
            help="-m, --json: keep nothing under the picobot home (no session, trace, log).",
        ),
    ] = False,
) -> None:
    """Chat with the agent: the TUI, or one message with -m, or --json."""
    from picobot_tui.run.options import RunError, RunOptions

    opts = RunOptions(
        model=model,
        session=session,
        workspace=workspace,
        max_tokens=max_tokens,
        logs=logs,
        plan=plan,
        ephemeral=ephemeral,
    )
    if json_mode and message is not None:
        fail("--json reads messages from stdin; don't combine it with -m.", EXIT_USAGE)
    if message is None:
        _refuse_ignored_flags(ctx, "--json" if json_mode else "the TUI")
    if output_format not in OUTPUT_FORMATS:
        fail(
            f"--output-format: unknown format {output_format!r}; use {', '.join(OUTPUT_FORMATS)}.",
            EXIT_USAGE,
        )
    if ephemeral and session is not None:
        fail(
            "--ephemeral starts a new session and keeps none: don't combine it with --session.",
            EXIT_USAGE,
        )
    try:
        if json_mode:
            from picobot_tui.headless.json_protocol import run_json

            code = run_json(opts, yes=yes)
        elif message is not None:
            if not message.strip():
                fail("the message is empty.", EXIT_USAGE)
            from picobot_tui.headless.text import HeadlessFlags, run_message

            flags = HeadlessFlags(
                stream=stream,
                show_tools=show_tools,
                markdown=markdown,
                yes=yes,
                output_format=output_format,
                output_schema=output_schema,
            )
            code = run_message(opts, flags, message)
        else:
            code = _run_tui(opts)
    except RunError as e:
        if message is not None and output_format != "text":
            from picobot_tui.headless.result import print_not_started

            print_not_started(e.message, e.code)
        fail(e.message, e.code)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    raise typer.Exit(code)


def _run_tui(opts: RunOptions) -> int:
    from picobot_tui.tui import startup_gc

    startup_gc.pause()  # the app resumes it once its first frame is out
    try:
        from picobot_tui.tui.launch import run_app

        environ = dict(os.environ)  # as the call got it: the import changes it
        code = run_app(opts, wrap_model=_relayed_model)
        _start_server_for_next(environ)
    finally:
        startup_gc.resume()
    return code


def _relayed_model(inner: ModelClient, settings: Settings) -> ModelClient:
    """The TUI's model client: its first calls answered by a running warm server while
    LiteLLM is still importing in the TUI's process (warm/relay.py)."""
    from picobot_tui.warm.relay import for_tui

    return for_tui(inner, settings)


def _start_server_for_next(environ: dict[str, str]) -> None:
    """As a cold `-m` call does at its exit: start a warm server when none is running, so
    the next TUI's first answer (and the next headless call) need not wait for LiteLLM."""
    from picobot_tui.warm.launch import start_if_absent

    start_if_absent(environ)
