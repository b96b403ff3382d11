"""The `picobot` command. Only typer is imported at start-up so `--help` stays instant;
every command imports what it needs when it runs."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from picobot_tui import __version__
from picobot_tui.agent_command import agent
from picobot_tui.cli_common import fail
from picobot_tui.headless.mcp_app import mcp_app
from picobot_tui.run import exit_codes, inherited
from picobot_tui.run.exit_codes import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
)

if TYPE_CHECKING:
    from picobot_tui.core.sessions import SessionStore

app = typer.Typer(
    name="picobot",
    help="picobot — an LLM agent for your terminal (TUI, headless, JSON lines).",
    no_args_is_help=True,
    # Typer's own --install-completion / --show-completion (bash, zsh, fish, PowerShell);
    # typer imports its completion code anyway, so --help costs the same.
    add_completion=True,
    pretty_exceptions_enable=False,
    epilog=exit_codes.help_table(),
)
sessions_app = typer.Typer(
    help="List, show, search, export and prune saved sessions.", no_args_is_help=True
)
app.add_typer(sessions_app, name="sessions")
app.add_typer(mcp_app, name="mcp")  # typer only: its commands load MCP when they run
server_app = typer.Typer(
    help="The warm start server that answers `agent -m`, `--json` and `acp` at once "
    "(docs/server.md).",
    no_args_is_help=True,
)
app.add_typer(server_app, name="server")
app.command()(agent)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"picobot {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """picobot — an LLM agent for your terminal."""


def _store(*, here: bool = False) -> SessionStore:
    # The sessions commands need only the directory, not the settings: loading them would
    # import pydantic-settings (~0.1 s of CPU, a third of `sessions list`), and a typo in
    # config.json should not stop anyone from listing or exporting their sessions. Only
    # `--here` and `latest` need the workspace, so only they pay for it.
    from picobot_tui.core.paths import sessions_dir
    from picobot_tui.run.session_stores import session_store

    if not here:
        return session_store(sessions_dir())
    from picobot_tui.run.workspace import current_workspace

    return session_store(sessions_dir(), workspace=current_workspace())


def _resolve(store: SessionStore, raw: str) -> str:
    from picobot_tui.core.sessions import SessionError

    try:
        if raw.strip().lower() != "latest":
            return store.resolve(raw)
        key, note = _store(here=True).resolve_with_note(raw)  # this workspace's first
    except SessionError as e:
        fail(str(e), EXIT_USAGE)
    if note:
        from picobot_tui.core.textsafe import terminal_safe

        typer.echo(terminal_safe(f"picobot: {note}"), err=True)
    return key


def _check_source(source: str | None) -> None:
    from picobot_tui.core.sessions.files import SOURCE_FILTERS

    if source is not None and source not in SOURCE_FILTERS:
        fail(f"--source: unknown source {source!r}; use {' or '.join(SOURCE_FILTERS)}", EXIT_USAGE)


def _short_path(path: str | None, width: int = 40) -> str:
    """A workspace as a column shows it: ~ for the home, the end kept when it is long."""
    if not path:
        return "unknown"  # started by a picobot that did not record it
    home = str(Path.home())
    if path == home or path.startswith(home + "/"):
        path = "~" + path[len(home) :]
    return path if len(path) <= width else "…" + path[-(width - 1) :]


@sessions_app.command("list")
def sessions_list(
    limit: Annotated[int, typer.Option(min=1, help="How many to show.")] = 50,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    source: Annotated[
        str | None,
        typer.Option(help="Only sessions started by this front end: tui or headless."),
    ] = None,
    here: Annotated[bool, typer.Option("--here", help="Only sessions of this workspace.")] = False,
    show_all: Annotated[
        bool,
        typer.Option("--all", help="Also sessions without an answer (a run that failed first)."),
    ] = False,
) -> None:
    """List sessions, newest first."""
    import json
    from dataclasses import asdict

    _check_source(source)
    store = _store(here=here)
    infos, hidden = store.list_counted(
        limit=limit, source=source, workspace=store.workspace, unanswered=show_all
    )
    if hidden:
        # On stderr: stdout stays the listing (or the JSON lines) a script reads.
        noun = "session" if hidden == 1 else "sessions"
        typer.echo(
            f"picobot: {hidden} {noun} with no answer yet not shown (a run that failed "
            "before the model answered): `picobot sessions list --all` lists them",
            err=True,
        )
    if json_out:
        for info in infos:
            typer.echo(json.dumps(asdict(info)))
        return
    if not infos:
        where = f" in {store.workspace}" if store.workspace else ""
        typer.echo(
            f"No {source} sessions{where}."
            if source
            else f"No sessions{where} yet. Start one with `picobot agent`."
        )
        return
    from picobot_tui.core.textsafe import terminal_safe
    from picobot_tui.core.visible import label

    places = [_short_path(i.workspace) for i in infos]
    wide = max(len("WORKSPACE"), *map(len, places))
    typer.echo(f"{'ID':<34} {'UPDATED':<19} {'MSGS':>5}  {'MODEL':<22} {'WORKSPACE':<{wide}} TITLE")
    for i, place in zip(infos, places, strict=True):
        updated = i.updated[:19].replace("T", " ")
        mark = "" if i.answered else "[no answer] "
        # Titles come from messages (a model's or a --json client's text): no raw escapes.
        line = (
            f"{i.key:<34} {updated:<19} {i.message_count:>5}  {(i.model or '-'):<22.22} "
            f"{label(place):<{wide}} {mark}{label(i.title)}"
        )
        typer.echo(terminal_safe(line))


@sessions_app.command("search")
def sessions_search(query: str, limit: Annotated[int, typer.Option(min=1)] = 20) -> None:
    """Find sessions whose title or messages contain QUERY."""
    from picobot_tui.core.textsafe import terminal_safe
    from picobot_tui.core.visible import label

    found = False
    for info in _store().search(query, limit=limit):
        found = True
        mark = "" if info.answered else "[no answer] "
        line = f"{info.key:<34} {info.updated[:19].replace('T', ' ')}  {mark}{label(info.title)}"
        typer.echo(terminal_safe(line))
    if not found:
        typer.echo(f"No session mentions {query!r}.")


@sessions_app.command("show")
def sessions_show(
    session_id: Annotated[str, typer.Argument(help="Session id or `latest`.")],
) -> None:
    """Print a session's transcript."""
    store = _store()
    typer.echo(store.export_markdown(_resolve(store, session_id)))


@sessions_app.command("export")
def sessions_export(
    session_id: Annotated[str, typer.Argument(help="Session id or `latest`.")],
    fmt: Annotated[str, typer.Option("--format", help="Export format (md).")] = "md",
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            "--out",
            help="Write to this file, or into this directory as picobot-<id>.md "
            "(the TUI's name), instead of stdout.",
        ),
    ] = None,
) -> None:
    """Export a session (Markdown)."""
    if fmt not in ("md", "markdown"):
        fail(f"unknown format {fmt!r}; supported: md", EXIT_USAGE)
    store = _store()
    key = _resolve(store, session_id)
    text = store.export_markdown(key)
    if output is None:
        typer.echo(text)
        return
    try:
        if output.is_dir():
            from picobot_tui.core.sessions.export import write_export

            output = write_export(output, key, text)
        else:
            output.write_text(text, encoding="utf-8")
    except OSError as e:
        fail(f"cannot write {output}: {e.strerror or e}", EXIT_USAGE)
    typer.echo(f"wrote {output}", err=True)


@sessions_app.command("rename")
def sessions_rename(session_id: str, title: str) -> None:
    """Give a session a new title."""
    from picobot_tui.core.sessions import SessionError

    store = _store()
    try:
        store.rename(_resolve(store, session_id), title)
    except SessionError as e:  # e.g. open in another picobot process
        fail(str(e), EXIT_ERROR)


@sessions_app.command("delete")
def sessions_delete(
    session_id: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Don't ask.")] = False,
) -> None:
    """Delete a session file."""
    store = _store()
    key = _resolve(store, session_id)
    if not yes and not typer.confirm(f"Delete {key}?", err=True):
        raise typer.Exit(EXIT_ERROR)
    from picobot_tui.core.sessions import SessionError

    try:
        store.delete(key)
    except SessionError as e:  # e.g. open in another picobot process
        fail(str(e), EXIT_ERROR)


@sessions_app.command("prune")
def sessions_prune(
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than", help="Delete sessions with no message for this long: 30d, 12h, 2w."
        ),
    ],
    source: Annotated[
        str | None,
        typer.Option(help="Only sessions started by this front end: tui or headless."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would go; delete nothing.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Don't ask.")] = False,
) -> None:
    """Delete old sessions (never one open in a running picobot)."""
    from picobot_tui.core.sessions.prune import older_than as find_old
    from picobot_tui.core.sessions.prune import parse_duration, prune
    from picobot_tui.core.textsafe import terminal_safe

    try:
        age = parse_duration(older_than)
    except ValueError as e:
        fail(f"--older-than: {e}", EXIT_USAGE)
    _check_source(source)
    store = _store()
    old = find_old(store, age, source=source)
    if not old:
        typer.echo(f"No session is older than {older_than}.")
        return
    for info in old:
        busy = "  (in use: kept)" if store.in_use(info.key) else ""
        line = f"{info.key:<34} {info.updated[:19].replace('T', ' ')}  {info.title}{busy}"
        typer.echo(terminal_safe(line))
    n = len(old)
    noun = f"{n} session{'s' if n != 1 else ''}"
    if dry_run:
        typer.echo(f"{noun} older than {older_than} (dry run: nothing deleted).")
        return
    if not yes and not typer.confirm(f"Delete {noun}?", err=True):
        raise typer.Exit(EXIT_ERROR)
    result = prune(store, old)
    for info, why in result.failed:
        typer.echo(terminal_safe(f"picobot: could not delete {info.key}: {why}"), err=True)
    kept = f"; {len(result.in_use)} in use, kept" if result.in_use else ""
    typer.echo(f"Deleted {len(result.deleted)} of {noun}{kept}.")
    if result.failed:
        raise typer.Exit(EXIT_ERROR)


@sessions_app.command("rewind")
def sessions_rewind(
    session_id: Annotated[str, typer.Argument(help="Session id or `latest`.")],
    to: Annotated[int, typer.Option("--to", help="The turn to go back to (1: the first).")],
    code: Annotated[bool, typer.Option("--code", help="Restore the files.")] = False,
    conversation: Annotated[
        bool, typer.Option("--conversation", help="Continue the conversation as a branch.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files changed since the agent's change.")
    ] = False,
) -> None:
    """Go back to just before a turn: files and conversation (or one of them with --code or
    --conversation). The original session stays complete."""
    from picobot_tui.headless.rewind_commands import run_rewind

    raise typer.Exit(run_rewind(session_id, to, code=code, conversation=conversation, force=force))


@sessions_app.command("branch")
def sessions_branch(
    session_id: Annotated[str, typer.Argument(help="Session id or `latest`.")],
    at: Annotated[int, typer.Option("--at", help="The turn the branch starts again from.")],
) -> None:
    """A new session with the conversation before a turn (prints its id); files untouched."""
    from picobot_tui.headless.rewind_commands import run_branch

    raise typer.Exit(run_branch(session_id, at))


@sessions_app.command("diff")
def sessions_diff(
    session_id: Annotated[str, typer.Argument(help="Session id or `latest`.")],
    turn: Annotated[int | None, typer.Option("--turn", help="Only this turn's changes.")] = None,
) -> None:
    """The files the agent changed, as a unified diff (plain to a pipe: `patch -p1`,
    `git apply`)."""
    from picobot_tui.headless.rewind_commands import run_diff

    raise typer.Exit(run_diff(session_id, turn))


@app.command()
def acp(
    logs: Annotated[bool, typer.Option(help="Also show runtime logs on stderr.")] = False,
) -> None:
    """Serve the Agent Client Protocol (v1) on stdio, for editors: Zed, JetBrains, Neovim."""
    # First: fd 1 becomes stderr, so nothing imported after this can write into the protocol.
    from picobot_tui.acp.stdout_guard import claim

    protocol_fd = claim()
    from picobot_tui.acp.server import run_acp

    raise typer.Exit(run_acp(protocol_fd, logs=logs))


@app.command()
def onboard(
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite existing files without asking.")
    ] = False,
) -> None:
    """Write a commented default config and your templates to ~/.picobot (asks first)."""
    from picobot_tui.config.onboard import run_onboard

    raise typer.Exit(run_onboard(force=force))


@app.command()
def schema() -> None:
    """Print the JSON Schema of the headless protocol (--json, --output-format json)."""
    from importlib import resources

    # The shipped file, not a rebuild: no pydantic to import (headless/schema.py builds it).
    schema_file = resources.files("picobot_tui.headless").joinpath("protocol.schema.json")
    typer.echo(schema_file.read_text(encoding="utf-8"), nl=False)


@app.command()
def context(
    workspace: Annotated[
        Path | None, typer.Option(help="The workspace (default: as `agent` finds it).")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="A session id or `latest`.")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """What the next call would send: prompt files, tools, conversation; tokens vs the budget."""
    from picobot_tui.headless.context_command import run_context
    from picobot_tui.headless.mcp_app import run_or_fail
    from picobot_tui.run.options import RunOptions

    opts = RunOptions(workspace=workspace, session=session)
    run_or_fail(lambda: run_context(opts, as_json=json_out))


@app.command()
def doctor() -> None:
    """Check the config, key, workspace, sandbox, permissions and terminal (exit 1 if broken)."""
    from picobot_tui.doctor import run_doctor

    raise typer.Exit(run_doctor(typer.echo))


@server_app.command("status")
def server_status() -> None:
    """Show the running server: pid, RSS, stamp, uptime (exit 1 if none)."""
    from picobot_tui.warm import control

    raise typer.Exit(control.status(typer.echo))


@server_app.command("start")
def server_start() -> None:
    """Start the server now (also under CI), and wait until it answers."""
    from picobot_tui.warm import control

    raise typer.Exit(control.start(typer.echo))


@server_app.command("stop")
def server_stop() -> None:
    """Stop the server (running calls finish first)."""
    from picobot_tui.warm import control

    raise typer.Exit(control.stop(typer.echo))


@server_app.command("relay", hidden=True)
def server_relay() -> None:
    """Answer one model call read from stdin (what the TUI hands a warm server while its
    own LiteLLM is still importing; warm/relay.py)."""
    from picobot_tui.warm.relay_child import serve_one

    raise typer.Exit(serve_one(sys.stdin.buffer, sys.stdout.buffer))


@server_app.command("run", hidden=True)
def server_run(
    socket_path: Annotated[str | None, typer.Option("--socket")] = None,
    idle_minutes: Annotated[float, typer.Option("--idle-minutes")] = 15.0,
) -> None:
    """Run the server in this process (what `start` and a cold call spawn)."""
    from picobot_tui.warm import place, server

    path = socket_path or place.socket_path()
    raise typer.Exit(server.serve(path, idle_minutes, _warm_child))


def _warm_child() -> None:
    """What a warm server's child runs: the cold entry point, with `picobot acp`'s stdout
    guard taken first, before anything of the call runs (the cold path takes it before
    the command imports anything; here the imports are done, and this is earlier still)."""
    from picobot_tui.warm.policy import is_acp_call

    if is_acp_call(sys.argv):
        from picobot_tui.acp.stdout_guard import claim

        claim()
    main()


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(EXIT_TERMINATED)


def main() -> None:
    """Console-script entry point."""
    # Until a front end installs its own, SIGTERM exits 143, not "killed by signal 15";
    # unless the caller ignores SIGTERM (run/inherited.py).
    if not inherited.is_ignored(signal.SIGTERM):
        signal.signal(signal.SIGTERM, _terminated)
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
