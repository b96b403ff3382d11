"""`picobot agent -m`: one message, events rendered as text on stdout/stderr.

The answer goes to stdout; progress, tools, notices and logs go to stderr, so
`picobot agent -m ... > out.txt` captures just the answer. Tokens are streamed only to a
terminal: a pipe or file gets the final answer once, at the end, so a retry after a partial
answer (or text the model wrote before a tool call) never lands in the output.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from picobot_tui.config.settings import Settings
from picobot_tui.core.approval import ApprovalRequest, Decision
from picobot_tui.core.events import (
    ApprovalRequested,
    ErrorEvent,
    Event,
    HistoryCompressed,
    Notice,
    Retrying,
    StuckDetected,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from picobot_tui.core.sessions.listing import short_key
from picobot_tui.core.textsafe import terminal_safe
from picobot_tui.core.visible import label, visible
from picobot_tui.headless.protocol import output_line
from picobot_tui.headless.result import ResultCollector, write_line
from picobot_tui.run.config_warnings import print_warnings
from picobot_tui.run.context import RunOptions, open_run
from picobot_tui.run.exit_codes import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK
from picobot_tui.run.runtime import mcp_running
from picobot_tui.run.signals import install_signal_handlers, signal_exit

if TYPE_CHECKING:
    from picobot_tui.config.remember import Scope
    from picobot_tui.core.sessions import Session
    from picobot_tui.core.tools.base import ToolContext
    from picobot_tui.headless.output_schema import OutputSchema

OUTCOME_EXIT = {"final": EXIT_OK, "cancelled": EXIT_INTERRUPTED}


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return label(text, limit)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-like stand-in
        return False


@dataclass
class HeadlessFlags:
    stream: bool = True
    show_tools: bool = True
    markdown: bool = False
    yes: bool = False
    output_format: str = "text"
    """text (the answer), json (the result object) or stream-json (events, then it)."""
    output_schema: Path | None = None


class TextRenderer:
    """Renders the event stream as plain text (stdout) and notices (stderr)."""

    def __init__(self, flags: HeadlessFlags, out: IO[str], err: IO[str]) -> None:
        self.flags = flags
        self.out = out
        self.err = err
        self.streamed = False
        self.at_line_start = True
        # Live tokens only where a person reads them: written text cannot be taken back, and
        # a captured stdout must hold exactly the final answer whatever retries happened.
        self.live = flags.stream and not flags.markdown and _isatty(out)
        # --markdown on a terminal: each message is rendered once complete, so the text
        # written before a tool call shows too (a pipe still gets only the final answer).
        self.markdown_messages = flags.markdown and _isatty(out)
        self.message: list[str] = []  # the text of the model call in progress

    def _note(self, text: str) -> None:
        # A tool line or notice starts on a line of its own, never after streamed narration
        # ("…the workspace.→ list_dir"), wherever stderr goes: the text streams only to a
        # terminal, where ending its line is harmless.
        if self.streamed and not self.at_line_start:
            self.out.write("\n")
            self.out.flush()
            self.at_line_start = True
        self.err.write(text + "\n")
        self.err.flush()

    def _markdown(self, text: str) -> None:
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=self.out, highlight=False).print(Markdown(text))
        self.out.flush()

    def _flush_message(self) -> None:
        """Render the finished message's text (--markdown on a terminal)."""
        text = "".join(self.message)
        self.message.clear()
        if self.markdown_messages and text.strip():
            self._markdown(terminal_safe(text))

    def handle(self, event: Event) -> None:
        f = self.flags
        if isinstance(event, TextDelta):
            self.message.append(event.text)
            if self.live:
                text = terminal_safe(event.text)
                self.out.write(text)
                self.out.flush()
                self.streamed = True
                self.at_line_start = text.endswith("\n")
        elif isinstance(event, ToolCallStarted):
            self._flush_message()
            if f.show_tools:
                self._note(f"→ {event.name} {_short(event.arguments)}")
        elif isinstance(event, ToolCallFinished) and f.show_tools:
            mark = {"ok": "✓", "denied": "⊘", "cancelled": "⊘"}.get(event.status, "✗")
            self._note(
                f"{mark} {event.name} {event.status} ({event.duration_ms:.0f} ms): "
                f"{_short(event.result)}"
            )
        elif isinstance(event, Retrying):
            self.message.clear()  # the call starts again
            self._note(
                f"… {event.kind}: {_short(event.message, 200)} — retrying in "
                f"{event.delay_s:.1f} s (attempt {event.attempt} of {event.max_retries})"
            )
            if self.streamed and not self.at_line_start:
                self.out.write("\n")
                self.at_line_start = True
        elif isinstance(event, StuckDetected):
            self._note(f"! stuck: {event.message}")
        elif isinstance(event, HistoryCompressed):
            self._note(f"… history compressed: {event.note}")
        elif isinstance(event, Notice):
            self._note(f"warning: {terminal_safe(event.message)}")
        elif isinstance(event, ErrorEvent):
            self._note(f"error: {terminal_safe(event.message)}")
            if event.hint:
                self._note(f"hint: {terminal_safe(event.hint)}")
        elif isinstance(event, TurnFinished):
            self._finish(event)

    def _finish(self, event: TurnFinished) -> None:
        f = self.flags
        if event.outcome in ("max_iterations", "budget_exhausted"):
            self._note(f"stopped: {event.content}")
            return
        if event.outcome == "cancelled":
            self._flush_message()  # what came before the interruption stays on screen
            if self.streamed and not self.at_line_start:
                self.out.write("\n")
            self._note("interrupted.")
            return
        if event.outcome != "final":
            return
        if f.markdown:
            self.message.clear()
            self._markdown(event.content)
        elif not self.streamed:
            text = terminal_safe(event.content)
            self.out.write(text if text.endswith("\n") else text + "\n")  # as a stream ends
        elif not self.at_line_start:
            self.out.write("\n")
        self.out.flush()


def _prompt_text(req: ApprovalRequest) -> tuple[str, str]:
    """(what the request shows, the question) for the terminal prompt."""
    if req.scope == "host" and req.host:
        host = visible(req.host)
        head = f"\n{req.name} wants to reach {host}:\n"
        question = (
            f"Allow? [y]es once / [s]ession: {host} until exit / "
            f"[a]lways: {host} in this workspace / [e]verywhere / [n]o"
        )
    else:
        head = f"\n{req.name} wants to run:\n"
        always = f"[a]lways: every {req.name} call in this workspace / [e]verywhere"
        if req.name == "exec":  # "always" is a rule (a prefix or the exact command), or none
            if req.prefix:
                always = (
                    f"[a]lways: commands starting with {visible(req.prefix)} in this "
                    "workspace / [e]verywhere"
                )
            elif req.rule:
                always = "[a]lways: exactly this command in this workspace / [e]verywhere"
            else:
                always = "[a] this once (no rule could match this command)"
        question = f"Allow? [y]es / [n]o / [s]ession (allow this tool until exit) / {always}"
    if req.hidden:
        question += f" / [v]iew all, {req.hidden} not shown"
    note = f"note: {req.note}\n" if req.note else ""
    return head + visible(req.preview) + "\n" + note, question + ": "


async def _page(text: str, err: IO[str]) -> None:
    """Show the whole preview: through `less` on a terminal, else written out in full."""
    import shutil
    import subprocess

    pager = shutil.which("less") if err.isatty() else None
    if pager:
        await asyncio.to_thread(
            subprocess.run, [pager], input=text, text=True, stdout=err, check=False
        )
    else:
        err.write(text + "\n")
        err.flush()


def tty_confirm(
    flags: HeadlessFlags,
    err: IO[str],
    loaded: Callable[[], tuple[Settings, ToolContext] | None] = lambda: None,
) -> Callable[[ApprovalRequest], Any]:
    """The headless approval policy: --yes, else a prompt on a terminal, else refuse.

    The prompt shows the preview with escapes made visible; when it leaves something out it
    says how much and `v` shows everything (then asks again). "a" (always) saves the tool,
    exec rule or web_fetch host for this workspace, "e" everywhere (config.json), to the
    run's settings and tool context (`loaded()`, once the run is open).
    """

    async def confirm(req: ApprovalRequest) -> Decision:
        if flags.yes:
            return "allow"
        if not sys.stdin.isatty():
            if req.scope == "host" and req.host:
                err.write(
                    f"⊘ {req.name} refused: no terminal to ask whether it may reach "
                    f"{visible(req.host)}. Pass --yes, or add the host to tools.web.allowHosts.\n"
                )
            else:
                err.write(
                    f"⊘ {req.name} refused: no terminal to ask for approval. "
                    "Pass --yes to allow commands and file changes, or set tools.approval.\n"
                )
                if req.note:  # why a saved rule did not cover it
                    err.write("  " + req.note.replace("\n", "\n  ") + "\n")
            return "deny"
        head, question = _prompt_text(req)
        err.write(head)
        while True:
            err.write(question)
            err.flush()
            answer = (await asyncio.to_thread(sys.stdin.readline)).strip().lower()
            if answer in ("v", "view") and req.hidden:
                await _page(visible(req.whole), err)
                continue
            break
        scope: Scope | None = None
        if answer in ("a", "always"):
            scope = "workspace"
        elif answer in ("e", "everywhere"):
            scope = "everywhere"
        run = loaded()
        if scope is not None and run is not None:
            from picobot_tui.config.remember import remember_always

            try:
                saved = remember_always(*run, req, scope)
            except (OSError, ValueError) as e:
                err.write(f"could not save the rule: {e} (allowed this once)\n")
            else:
                if saved is None:
                    err.write("nothing saved: no rule could match this command\n")
                else:
                    err.write(f"{saved[0]} is now always allowed (saved to {saved[1]})\n")
        if scope is not None:
            return "always"  # the loop allows this call
        if answer in ("s", "session"):
            return "allow_session"
        return "allow" if answer in ("y", "yes") else "deny"

    return confirm


async def _run(
    opts: RunOptions, flags: HeadlessFlags, message: str, schema: OutputSchema | None
) -> int:
    collector = ResultCollector()
    # stdout is the answer's (text), or the protocol's: then the renderer writes only its
    # stderr lines; under --output-schema the answer is printed once it validates.
    plain = flags.output_format == "text" and schema is None
    renderer = TextRenderer(flags, sys.stdout if plain else io.StringIO(), sys.stderr)
    events_out = flags.output_format == "stream-json"
    received: list[int] = []
    loaded: list[tuple[Settings, ToolContext]] = []  # the run's, for "always" answers
    confirm = tty_confirm(flags, sys.stderr, lambda: loaded[0] if loaded else None)
    with open_run(opts, confirm=confirm) as run:
        loaded.append((run.settings, run.runtime.tools.ctx))
        loop = run.runtime.loop
        loop.single_turn = schema is None  # no turn follows: core/cache_plan.py
        if schema is not None:
            loop.response_format = schema.response_format()
        print_warnings(run.warnings, sys.stderr)
        for note in run.notes:
            sys.stderr.write(f"picobot: {terminal_safe(note)}\n")

        async def turn(text: str) -> None:
            async with aclosing(loop.run_turn(run.session, text)) as events:
                async for event in events:
                    collector.add(event)
                    if events_out:
                        write_line(output_line(event))
                    if not isinstance(event, ApprovalRequested):
                        renderer.handle(event)

        structured: Any = None
        invalid: str | None = None
        task = asyncio.current_task()
        assert task is not None
        install_signal_handlers(task, received)
        try:
            async with mcp_running(run.runtime):
                await turn(message if schema is None else message + schema.instruction())
                if schema is not None and collector.outcome == "final":
                    structured, invalid = schema.check(collector.answer)
                    if invalid is not None:
                        sys.stderr.write(f"picobot: asking again: {invalid}\n")
                        await turn(schema.correction(invalid))
                        if collector.outcome == "final":
                            structured, invalid = schema.check(collector.answer)
        except asyncio.CancelledError:
            collector.outcome = "cancelled"
        if collector.outcome != "final" and not opts.ephemeral:
            kept_note(run.session, sys.stderr)
        elif opts.plan and collector.outcome == "final" and not opts.ephemeral:
            sys.stderr.write(
                "picobot: plan mode: nothing was changed. To carry the plan out: "
                f'picobot agent -s {short_key(run.session.key)} -m "go ahead"\n'
            )
        if received:
            code = signal_exit(received)
        elif invalid is not None:
            code = EXIT_ERROR
            sys.stderr.write(
                f"picobot: the answer does not match {schema_name(schema)}: {invalid}\n"
            )
        else:
            code = OUTCOME_EXIT.get(collector.outcome, EXIT_ERROR)
        if flags.output_format == "text":
            if schema is not None and code == EXIT_OK:  # validated: the answer, as JSON
                write_line(json.dumps(structured, ensure_ascii=False))
        else:
            result = collector.result(
                code, ephemeral=opts.ephemeral, structured=structured, invalid=invalid
            )
            write_line(output_line(result))
        return code


def schema_name(schema: OutputSchema | None) -> str:
    return f"--output-schema {schema.path}" if schema is not None else "the schema"


def kept_note(session: Session, err: IO[str]) -> None:
    """Where the user's message went when the model never answered: it stays in its
    session file, which `sessions list` and `latest` skip until it gets an answer."""
    info = session.info
    if info.answered or not info.message_count:
        return
    short = short_key(info.key)
    err.write(
        f"picobot: your message is kept in session {short}, unlisted until it has an answer "
        f"(`picobot sessions list --all` shows it); resume it with "
        f"`picobot agent --session {short}`\n"
    )
    err.flush()


def run_message(opts: RunOptions, flags: HeadlessFlags, message: str) -> int:
    """One `-m` turn; `-m -` reads the message from stdin, piped stdin is attached to it
    (headless/piped_input.py). RunError (exit 2) for an empty or binary stdin."""
    from picobot_tui.headless.piped_input import with_stdin

    schema = None
    if flags.output_schema is not None:
        from picobot_tui.headless import output_schema

        schema = output_schema.load(flags.output_schema)
    return asyncio.run(_run(opts, flags, with_stdin(message, sys.stdin.buffer), schema))
