"""`picobot context`: what the next call of a session (or a new one) would send, and why.

The same report as the TUI's `/context` (core/context_report.py): the system prompt part by
part with each file's path and size, the tools offered (the MCP servers are connected
first, as a turn would, so their tools are counted), and the conversation, each with its
tokens against the budget. Headless runs trust their workspace, so its files are read as
`-m` would read them. Everything printed is scrubbed and terminal-safe.
"""

from __future__ import annotations

import json
import sys
from typing import IO

from picobot_tui.core.context_report import context_report, report_text
from picobot_tui.core.textsafe import terminal_safe
from picobot_tui.headless.mcp_commands import _run, _runtime
from picobot_tui.run.context import open_session
from picobot_tui.run.exit_codes import EXIT_OK
from picobot_tui.run.options import RunOptions
from picobot_tui.run.runtime import mcp_running


def run_context(
    opts: RunOptions, *, as_json: bool, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr
) -> int:
    """0 with the report on stdout; 2 for an unknown session (RunError from open_session)."""
    runtime = _runtime(opts, err)
    model = opts.model or runtime.settings.agents.defaults.model
    session = open_session(runtime, opts.session, model) if opts.session else None

    async def main() -> int:
        async with mcp_running(runtime):
            if runtime.mcp is not None:
                await runtime.mcp.wait_ready()
            report = context_report(runtime.loop, session)
        if as_json:
            out.write(runtime.scrub(json.dumps(report.to_json(), ensure_ascii=False)) + "\n")
        else:
            out.write(terminal_safe(runtime.scrub(report_text(report))) + "\n")
        out.flush()
        return EXIT_OK

    try:
        return _run(main)
    finally:
        if session is not None:
            session.close()
