"""A model's tool call whose arguments nest past every parser's limit (issue 21 point 5).

The turn copes (the call fails, the model is told why), and the session stays readable:
`picobot sessions show`, `sessions export` (to stdout, and to a directory) print the
transcript with those arguments as the raw text the model sent and exit 0. Before, the
stored arguments raised RecursionError in the exporter's `json.loads` (a traceback, exit 1);
`picobot acp`'s session/load (tests/acp/test_acp_hostile_input.py) and the TUI's resume and
session browser (tests/tui/test_deep_arguments.py) had the same fault.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.support import Proc, write_config
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

DEEP_ARGS = '{"path": ' + "[" * 5_000 + "]" * 5_000 + "}"
"""JSON, nested 5,001 deep: past CPython's recursion limit (~1,000) and picobot's cap (128)."""
MIDDLE_ARGS = '{"path": ' + "[" * 600 + "]" * 600 + "}"
"""Nested 601 deep: `json.loads` reads it, its indenting encoder cannot write it back."""


@pytest.mark.e2e
def test_sessions_show_and_export_print_deep_arguments_as_raw_text(tmp_path: Path) -> None:
    steps = [
        tool_call_reply("read_file", DEEP_ARGS, id="deep", parts=4),
        tool_call_reply("read_file", MIDDLE_ARGS, id="middle", parts=4),
        text_reply("both calls failed"),
    ]
    with OpenAITestServer(steps) as server:
        write_config(tmp_path, server.url)
        turn = Proc(tmp_path, ["agent", "-m", "read them", "--yes"])
        assert turn.finish(timeout=120) == 0, turn.stderr
        sent = server.completions
    # The turn coped: the model was told, for each call, what was wrong.
    results = [m for m in sent[-1].body["messages"] if m["role"] == "tool"]
    assert [("nested" in m["content"]) for m in results] == [True, True]

    out_dir = tmp_path / "exports"
    out_dir.mkdir()
    runs = {
        "show": ["sessions", "show", "latest"],
        "export": ["sessions", "export", "latest"],
        "export --format md": ["sessions", "export", "latest", "--format", "md"],
        "export -o dir": ["sessions", "export", "latest", "-o", str(out_dir)],
    }
    printed: dict[str, str] = {}
    for name, args in runs.items():
        run = Proc(tmp_path, args)
        code = run.finish(timeout=60)
        assert code == 0, (name, run.stderr)
        assert "Traceback" not in run.stderr and "RecursionError" not in run.stderr, name
        printed[name] = run.out.decode()
    [written] = out_dir.iterdir()
    printed["export -o dir"] = written.read_text()
    for name, text in printed.items():
        assert DEEP_ARGS in text and MIDDLE_ARGS in text, name
        assert "both calls failed" in text, name
