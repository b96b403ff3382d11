"""Every `picobot agent` flag works in each mode or is refused there with one line (exit 2),
and headless stdout holds exactly the final answer whatever retries happened (issue 9,
points 6 and 12). Through the real console script."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.headless.conftest import cli_env, picobot_exe, run_cli, run_on_pty, session_files
from tests.support.openai_server import (
    OpenAITestServer,
    cut_mid_stream,
    text_reply,
    tool_call_reply,
)

pytestmark = pytest.mark.e2e

# (mode's arguments, flag, what the refusal says)
REFUSED = [
    ([], "--no-stream", "always streams"),
    ([], "--no-show-tools", "always shows tool calls"),
    ([], "--no-markdown", "always renders Markdown"),
    ([], "--logs", "owns the terminal"),
    ([], "--yes", "approval dialog"),
    ([], "-y", "approval dialog"),
    (["--json"], "--no-stream", "text_delta"),
    (["--json"], "--no-show-tools", "tool events"),
    (["--json"], "--markdown", "raw text"),
]


@pytest.mark.parametrize(("mode", "flag", "why"), REFUSED)
def test_a_flag_the_mode_would_ignore_is_refused_in_one_line(
    picobot_home: Path, mode: list[str], flag: str, why: str
) -> None:
    # The refusal comes before the TUI opens (it would wait for a terminal: the timeout).
    res = run_cli(picobot_home, "agent", "--model", "demo", *mode, flag, timeout=60)
    assert res.returncode == 2, res.stderr
    where = "--json" if mode else "the TUI"
    shown = "--yes" if flag == "-y" else flag
    assert res.stderr.splitlines() == [res.stderr.strip()], res.stderr  # exactly one line
    assert res.stderr.startswith(f"picobot: {shown} does not apply to {where}: "), res.stderr
    assert why in res.stderr
    assert "Traceback" not in res.stderr
    assert res.stdout == ""
    assert session_files(picobot_home) == []


def test_the_tui_refusal_of_logs_names_the_log_file(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "agent", "--model", "demo", "--logs", timeout=60)
    assert res.returncode == 2
    assert str(picobot_home / "data" / "logs" / "picobot.log") in res.stderr


@pytest.mark.parametrize(
    "flags",
    [
        ["--stream", "--show-tools", "--markdown", "--no-logs"],
        ["--model", "demo", "--max-tokens", "50", "--workspace", "WS"],
    ],
)
def test_the_tui_takes_the_flags_it_honours(
    picobot_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str]
) -> None:
    """What the TUI does anyway (stream, tools, Markdown, no stderr logs) is no refusal."""
    import picobot_tui.tui.launch as tui
    from picobot_tui.cli import app

    monkeypatch.setenv("PICOBOT_HOME", str(picobot_home))
    seen = []
    monkeypatch.setattr(tui, "run_app", lambda opts, **kw: seen.append(opts) or 0)
    args = [str(tmp_path / "ws") if a == "WS" else a for a in flags]
    res = CliRunner().invoke(app, ["agent", *args])
    assert res.exit_code == 0, res.output
    assert len(seen) == 1
    if "--max-tokens" in flags:
        assert seen[0].max_tokens == 50 and seen[0].model == "demo"
        assert seen[0].workspace == tmp_path / "ws"


def test_json_honours_logs_and_yes(configured_home: Path, llm_server: OpenAITestServer) -> None:
    """--logs puts log lines on stderr (stdout stays JSON); --yes runs exec without asking."""
    llm_server.script([tool_call_reply("exec", {"command": "echo hi-from-exec"}), text_reply("ok")])
    line = json.dumps({"type": "message", "content": "run it"}) + "\n"
    res = run_cli(
        configured_home, "agent", "--json", "--logs", "--yes", "--no-markdown", input=line
    )
    assert res.returncode == 0, res.stderr
    events = [json.loads(x) for x in res.stdout.splitlines()]
    [done] = [e for e in events if e["type"] == "tool_call_finished"]
    assert done["status"] == "ok" and "hi-from-exec" in done["result"]
    assert " INFO picobot." in res.stderr  # a log line, on stderr only


def test_message_honours_every_output_flag(picobot_home: Path) -> None:
    # The offline demo model calls list_dir, then answers in Markdown ("came back with **0**
    # entries"): output flags need no provider, and the demo skips LiteLLM's import (~5 s).
    demo = ("agent", "--model", "demo", "-m", "go")
    res = run_cli(picobot_home, *demo, "--no-show-tools", "--markdown", "--logs", "--yes")
    assert res.returncode == 0, res.stderr
    assert "→ list_dir" not in res.stderr  # --no-show-tools
    assert " INFO picobot." in res.stderr  # --logs
    assert "**0**" not in res.stdout and "came back with 0" in res.stdout  # rendered by Rich
    res = run_cli(picobot_home, *demo, "--no-logs")
    assert "→ list_dir" in res.stderr and " INFO picobot." not in res.stderr
    assert "came back with **0** entries" in res.stdout  # without --markdown: as written


@pytest.mark.parametrize("mode", [["-m", "hi"], ["--json"], []])
def test_an_unknown_session_prints_its_hint_once(picobot_home: Path, mode: list[str]) -> None:
    res = run_cli(picobot_home, "agent", "--model", "demo", *mode, "-s", "nope", timeout=60)
    assert res.returncode == 2
    assert res.stderr.count("picobot sessions list") == 1, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


# -- point 6: stdout is the final answer -----------------------------------------------------


def test_stdout_is_exactly_the_answer_after_a_mid_stream_failure_and_retry(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script(
        [
            cut_mid_stream(3, text_reply("Partial answer that never ends", chunk_size=4)),
            text_reply("The real answer."),
        ]
    )
    res = run_cli(configured_home, "agent", "-m", "question")
    assert res.returncode == 0, res.stderr
    assert len(llm_server.completions) == 2  # the cut call, then its retry
    assert "retrying" in res.stderr
    assert res.stdout == "The real answer.\n"


def test_stdout_to_a_file_is_exactly_the_answer(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    """Text before a tool call, then a cut and a retry: the file holds the last answer."""
    llm_server.script(
        [
            tool_call_reply("list_dir", {"path": "."}, text="Let me look first. "),
            cut_mid_stream(2, text_reply("Half of it", chunk_size=3)),
            text_reply("All done.\n"),
        ]
    )
    out = tmp_path / "out.txt"
    with out.open("w") as f:
        proc = subprocess.run(
            [*picobot_exe(), "agent", "-m", "go", "--yes"],
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(configured_home),
            timeout=90,
        )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == "All done.\n"


def test_a_failed_turn_leaves_stdout_empty(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([cut_mid_stream(3, text_reply("Partial answer that never ends"))] * 2)
    res = run_cli(configured_home, "agent", "-m", "question")
    assert res.returncode == 1
    assert res.stdout == ""
    assert "error:" in res.stderr


def test_a_terminal_still_gets_the_tokens_as_they_arrive(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    """On a pty the text streams (the retried text too), and the answer ends with a newline."""
    llm_server.script(
        [
            cut_mid_stream(3, text_reply("Partial answer that never ends", chunk_size=4)),
            text_reply("The real answer.", chunk_size=4),
        ]
    )
    code, text, _ = run_on_pty(configured_home, "agent", "-m", "question")
    assert code == 0
    assert text.startswith("Part")  # streamed before the cut
    assert text.endswith("The real answer.\n")
