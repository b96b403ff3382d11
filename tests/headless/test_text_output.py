"""`picobot agent -m` as a person reads it on a terminal, and the environment's settings
errors (issue 15, points 18-20). Through the real console script."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.headless.conftest import run_cli, run_on_pty
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(home: Path, *args: str, stderr_too: bool = False) -> tuple[int, str, str]:
    """Run with stdout on a pty (and stderr too, or a pipe): (exit code, what the terminal
    showed without colours, stderr when piped)."""
    code, shown, err = run_on_pty(home, *args, stderr_too=stderr_too)
    return code, ANSI.sub("", shown), err


NARRATION = "I will look at **the files** in the workspace."


def _script(server: OpenAITestServer) -> None:
    server.script(
        [
            tool_call_reply("list_dir", {"path": "."}, text=NARRATION),
            text_reply("# Summary\n\nThere is *nothing* here."),
        ]
    )


# -- point 18: --markdown keeps the text written before a tool call --------------------------


def test_markdown_on_a_terminal_shows_every_message(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    _script(llm_server)
    code, shown, err = on_a_terminal(configured_home, "agent", "-m", "go", "--markdown")
    assert code == 0, err
    assert "I will look at the files in the workspace." in shown  # rendered, before the tool
    assert "**" not in shown and "# Summary" not in shown
    assert shown.index("the files") < shown.index("Summary") < shown.index("nothing here")
    assert "→ list_dir" in err


def test_markdown_to_a_pipe_is_still_only_the_answer(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    _script(llm_server)
    res = run_cli(configured_home, "agent", "-m", "go", "--markdown")
    assert res.returncode == 0, res.stderr
    assert "Summary" in res.stdout and "nothing" in res.stdout
    assert "the files" not in res.stdout


# -- point 19: a tool line starts on a line of its own ----------------------------------------


@pytest.mark.parametrize("stderr_too", [True, False], ids=["one-terminal", "stderr-piped"])
def test_narration_never_runs_into_a_tool_line(
    configured_home: Path, llm_server: OpenAITestServer, stderr_too: bool
) -> None:
    llm_server.script(
        [
            tool_call_reply("list_dir", {"path": "."}, text="Let me look at the workspace."),
            text_reply("Done."),
        ]
    )
    code, shown, err = on_a_terminal(configured_home, "agent", "-m", "go", stderr_too=stderr_too)
    assert code == 0, err
    assert "workspace.→" not in shown
    assert "Let me look at the workspace.\n" in shown  # the narration's line is ended
    assert shown.endswith("Done.\n")
    tool_lines = (shown if stderr_too else err).splitlines()
    assert any(line.startswith("→ list_dir") for line in tool_lines), shown + err


# -- point 20: the environment's errors name the variable -------------------------------------


def _config(home: Path) -> None:
    config = json.loads((home / "config.json").read_text())
    config["agents"]["defaults"]["maxTokens"] = 100
    (home / "config.json").write_text(json.dumps(config, indent=2))


def test_an_invalid_variable_is_named_not_the_config_file(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    _config(configured_home)
    res = run_cli(configured_home, "agent", "-m", "hi", PICOBOT_AGENTS__DEFAULTS__MAX_TOKENS="abc")
    assert res.returncode == 2
    assert "PICOBOT_AGENTS__DEFAULTS__MAX_TOKENS" in res.stderr
    assert "agents.defaults.maxTokens" in res.stderr
    assert "config.json" not in res.stderr
    assert "Traceback" not in res.stderr
    assert llm_server.completions == []


def test_the_file_is_still_blamed_for_its_own_mistakes(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    config = json.loads((configured_home / "config.json").read_text())
    config["agents"]["defaults"]["maxTokens"] = "abc"
    text = json.dumps(config, indent=2)
    (configured_home / "config.json").write_text(text)
    line = next(n for n, x in enumerate(text.splitlines(), 1) if '"maxTokens"' in x)
    res = run_cli(configured_home, "agent", "-m", "hi")
    assert res.returncode == 2
    assert f"config.json, line {line}: `agents.defaults.maxTokens`" in res.stderr


def test_an_unknown_variable_is_warned_about_with_the_close_name(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("fine")])
    res = run_cli(
        configured_home,
        "agent",
        "-m",
        "hi",
        PICOBOT_AGENTS__DEFAULTS__MAXTOKENS="abc",
        PICOBOT_AGENTS__DEFAULTS__TEMPERATURE="0.5",  # a known one: no warning
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout == "fine\n"
    warnings = [line for line in res.stderr.splitlines() if "warning:" in line]
    assert warnings == [
        "picobot: warning: environment variable PICOBOT_AGENTS__DEFAULTS__MAXTOKENS names no "
        "setting (ignored); did you mean PICOBOT_AGENTS__DEFAULTS__MAX_TOKENS?"
    ]
    assert "PICOBOT_HOME" not in res.stderr  # documented, no setting, no warning
