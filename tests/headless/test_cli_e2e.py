"""End to end: the installed `picobot` script, LiteLLM over real HTTP, the local server."""

from __future__ import annotations

import json
import os
import pty
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.headless.conftest import (
    SECRET,
    cli_env,
    picobot_exe,
    read_messages,
    run_cli,
    session_files,
)
from tests.support.openai_server import (
    OpenAITestServer,
    error,
    rate_limited,
    slow,
    text_reply,
    tool_call_reply,
)
from tests.support.sent import as_stored

pytestmark = pytest.mark.e2e


def test_message_prints_answer_on_stdout_only(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("The answer is 42.", usage=(31, 6))])
    res = run_cli(configured_home, "agent", "-m", "what is it?", "--no-stream")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "The answer is 42.\n"
    assert "Traceback" not in res.stderr
    body = llm_server.last_body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 8192 and body["model"] == "test-model"
    assert as_stored(body["messages"])[-1] == {"role": "user", "content": "what is it?"}
    [path] = session_files(configured_home)
    msgs = read_messages(path)
    assert [(m["role"], m["content"]) for m in msgs] == [
        ("user", "what is it?"),
        ("assistant", "The answer is 42."),
    ]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    trace = json.loads((configured_home / "data/traces/traces.jsonl").read_text().splitlines()[-1])
    assert trace["outcome"] == "final" and trace["prompt_tokens"] == 31
    assert trace["completion_tokens"] == 6 and trace["session"].startswith("cli:")


def test_stream_and_tools_with_yes(configured_home: Path, llm_server: OpenAITestServer) -> None:
    ws = configured_home / "workspace"  # the directory it runs in (tests/conftest.py)
    (ws / "notes.txt").write_text("hello")
    llm_server.script(
        [
            tool_call_reply("read_file", {"path": "notes.txt"}, id="call_r"),
            tool_call_reply("exec", {"command": "echo ran-it"}, id="call_x"),
            text_reply("Read it and ran it.", chunk_size=3),
        ]
    )
    res = run_cli(configured_home, "agent", "-m", "go", "--stream", "--show-tools", "--yes")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Read it and ran it.\n"
    assert "→ read_file" in res.stderr and "✓ read_file" in res.stderr
    assert "✓ exec" in res.stderr
    bodies = [r.body for r in llm_server.completions]
    assert bodies[1]["messages"][-1]["role"] == "tool"
    assert "hello" in bodies[1]["messages"][-1]["content"]
    assert "ran-it" in bodies[2]["messages"][-1]["content"]
    assert [t["function"]["name"] for t in bodies[0]["tools"]]


def test_commands_refused_without_tty_or_yes(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script(
        [
            tool_call_reply("exec", {"command": "touch made"}, id="c1"),
            text_reply("ok"),
        ]
    )
    res = run_cli(configured_home, "agent", "-m", "make it")
    assert res.returncode == 0
    assert "--yes" in res.stderr
    assert not (configured_home / "workspace" / "made").exists()
    assert "Denied" in llm_server.completions[1].body["messages"][-1]["content"]


def test_max_tokens_flag_reaches_provider(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    run_cli(configured_home, "agent", "-m", "hi", "--max-tokens", "77")
    assert llm_server.last_body["max_tokens"] == 77


def test_session_latest_resumes(configured_home: Path, llm_server: OpenAITestServer) -> None:
    llm_server.script([text_reply("first answer"), text_reply("second answer")])
    assert run_cli(configured_home, "agent", "-m", "first").returncode == 0
    res = run_cli(configured_home, "agent", "-m", "second", "--session", "latest")
    assert res.returncode == 0, res.stderr
    sent = [(m["role"], m["content"]) for m in as_stored(llm_server.last_body["messages"][1:])]
    assert sent == [
        ("user", "first"),
        ("assistant", "first answer"),
        ("user", "second"),
    ]
    assert len(session_files(configured_home)) == 1


def test_unknown_session_is_a_usage_error(configured_home: Path) -> None:
    res = run_cli(configured_home, "agent", "-m", "hi", "--session", "nope")
    assert res.returncode == 2
    assert "cli:nope" in res.stderr and "Traceback" not in res.stderr


def test_rate_limit_retried_then_succeeds(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([rate_limited("0"), text_reply("after retry")])
    res = run_cli(configured_home, "agent", "-m", "hi")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "after retry\n"
    assert "retrying" in res.stderr
    assert len(llm_server.completions) == 2
    trace = json.loads((configured_home / "data/traces/traces.jsonl").read_text().splitlines()[-1])
    assert trace["retries"] == 1


def test_503_twice_gives_clear_error(configured_home: Path, llm_server: OpenAITestServer) -> None:
    llm_server.script([error(503), error(503)])
    res = run_cli(configured_home, "agent", "-m", "hi")
    assert res.returncode == 1
    assert "error:" in res.stderr and "Traceback" not in res.stderr
    assert len(llm_server.completions) == 2


def test_auth_error_names_fix_and_hides_key(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([error(401)])
    res = run_cli(configured_home, "agent", "-m", "hi", "--logs")
    assert res.returncode == 1
    assert "hint:" in res.stderr
    assert SECRET not in res.stderr + res.stdout
    assert len(llm_server.completions) == 1  # not retried


def test_no_key_names_the_variable_and_the_config_key(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "openai/gpt-4o-mini")
    assert res.returncode == 2
    assert "OPENAI_API_KEY" in res.stderr and "providers.openai.apiKey" in res.stderr
    assert "--model demo" in res.stderr and "picobot onboard" not in res.stderr
    assert "Traceback" not in res.stderr


def test_bad_config_exit_2(picobot_home: Path) -> None:
    (picobot_home / "config.json").write_text('{"agents": {"defaults": {"maxTokens": "x"}}}')
    res = run_cli(picobot_home, "agent", "-m", "hi")
    assert res.returncode == 2
    assert "maxTokens" in res.stderr and "config.json" in res.stderr
    assert "Traceback" not in res.stderr


def test_demo_model_works_offline(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "agent", "-m", "show me", "--model", "demo")
    assert res.returncode == 0, res.stderr
    assert "demo" in res.stdout
    assert "list_dir" in res.stderr


def test_json_protocol_two_messages_and_bad_line(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("one"), text_reply("two")])
    stdin = "\n".join(
        [
            json.dumps({"type": "message", "content": "first"}),
            "this is not json",
            json.dumps({"type": "message", "content": "second"}),
        ]
    )
    res = run_cli(configured_home, "agent", "--json", input=stdin + "\n")
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.count("turn_started") == 2 and kinds.count("turn_finished") == 2
    for needed in ("text_delta", "usage", "budget"):
        assert needed in kinds
    errors = [e for e in events if e["type"] == "error"]
    assert errors and errors[0]["kind"] == "protocol"
    finished = [e for e in events if e["type"] == "turn_finished"]
    assert [f["content"] for f in finished] == ["one", "two"]
    assert finished[0]["session"] == finished[1]["session"]
    sent = as_stored(llm_server.last_body["messages"])
    assert [m["content"] for m in sent[1:]] == ["first", "one", "second"]


def test_json_protocol_approval_round_trip(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script(
        [
            tool_call_reply("write_file", {"path": "a.txt", "content": "hi"}, id="w1"),
            text_reply("written"),
        ]
    )
    proc = subprocess.Popen(
        [*picobot_exe(), "agent", "--json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(configured_home),
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"type": "message", "content": "write it"}) + "\n")
    proc.stdin.flush()
    seen = []
    for line in proc.stdout:
        event = json.loads(line)
        seen.append(event)
        if event["type"] == "approval_requested":
            assert event["id"] == "w1" and "a.txt" in event["preview"]
            proc.stdin.write(json.dumps({"type": "approval", "id": "w1", "decision": "allow"}))
            proc.stdin.write("\n")
            proc.stdin.flush()
        if event["type"] == "turn_finished":
            break
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert (configured_home / "workspace" / "a.txt").read_text() == "hi"
    assert seen[-1]["outcome"] == "final"


def _signal_mid_stream(home: Path, server: OpenAITestServer, sig: int) -> tuple[int, str]:
    """Start a slow streamed answer, send `sig` once output has begun; (exit code, stderr).
    stdout is a terminal (a pty): only a terminal gets the tokens as they arrive."""
    server.script([slow(0.05, text_reply("word " * 400, chunk_size=5))])
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*picobot_exe(), "agent", "-m", "talk"],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(home),
    )
    os.close(slave)
    try:
        seen = b""
        while len(seen) < 10:  # streaming has started
            seen += os.read(master, 1024)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        os.close(master)
    return proc.returncode, err


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_mid_stream_exits_cleanly_with_consistent_session(
    configured_home: Path, llm_server: OpenAITestServer, sig: int, code: int
) -> None:
    returncode, err = _signal_mid_stream(configured_home, llm_server, sig)
    assert returncode == code, err
    assert "Traceback" not in err
    [path] = session_files(configured_home)
    msgs = read_messages(path)
    assert msgs[-1]["role"] == "assistant" and msgs[-1]["interrupted"] is True
    assert msgs[-1]["content"].startswith("word")


def test_secret_never_written(configured_home: Path, llm_server: OpenAITestServer) -> None:
    # exec inherits the key here, so the scrubber is what keeps it out (the default "clean"
    # environment would strip it: tests/reliability/test_sandbox.py).
    config = json.loads((configured_home / "config.json").read_text())
    config["tools"] = {"exec": {"env": "inherit"}}
    (configured_home / "config.json").write_text(json.dumps(config))
    llm_server.script(
        [
            tool_call_reply("exec", {"command": "echo $OPENAI_API_KEY"}, id="e1"),
            text_reply("done"),
        ]
    )
    res = run_cli(
        configured_home, "agent", "-m", "leak it", "--yes", "--logs", OPENAI_API_KEY=SECRET
    )
    assert res.returncode == 0, res.stderr
    assert SECRET not in res.stdout + res.stderr
    for path in configured_home.rglob("*"):
        if path.is_file() and path.name != "config.json":
            assert SECRET not in path.read_text(errors="replace"), path
    # The exec output really contained the key before it was scrubbed.
    assert "REDACTED" in llm_server.last_body["messages"][-1]["content"]


DEMO_ANSWER = "That is the whole demo: streaming text, a tool call, and a final answer."
"""The last line of the demo model's answer: words only the answer holds."""


def test_sessions_commands(configured_home: Path) -> None:
    # The session comes from the offline demo model: these commands read what was stored,
    # whichever model answered, and the demo skips LiteLLM's import (~5 s of CPU).
    made = run_cli(configured_home, "agent", "--model", "demo", "-m", "tell me about fruit")
    assert made.returncode == 0 and DEMO_ANSWER in made.stdout, made.stderr
    listing = run_cli(configured_home, "sessions", "list")
    assert listing.returncode == 0 and "tell me about fruit" in listing.stdout
    shown = run_cli(configured_home, "sessions", "show", "latest")
    assert DEMO_ANSWER in shown.stdout
    out = configured_home / "export.md"
    exported = run_cli(
        configured_home, "sessions", "export", "latest", "--format", "md", "-o", str(out)
    )
    assert exported.returncode == 0 and DEMO_ANSWER in out.read_text()
    found = run_cli(configured_home, "sessions", "search", "streaming")
    assert "tell me about fruit" in found.stdout
    bad = run_cli(configured_home, "sessions", "export", "latest", "--format", "pdf")
    assert bad.returncode == 2


def test_help_and_usage_errors(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "--help")
    assert res.returncode == 0 and "agent" in res.stdout and "sessions" in res.stdout
    res = run_cli(picobot_home, "agent", "--max-tokens", "lots")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    res = run_cli(picobot_home, "agent", "--json", "-m", "x")
    assert res.returncode == 2


def test_help_does_not_import_heavy_modules(picobot_home: Path) -> None:
    code = (
        "import sys, runpy; sys.argv=['picobot','--help']\n"
        "from picobot_tui import cli\n"
        "try:\n    cli.app()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('litellm', 'textual', 'pydantic_settings') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(picobot_home)
    )
    assert "HEAVY []" in res.stdout, res.stdout + res.stderr


def test_onboard_never_overwrites_without_asking(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "onboard")
    assert res.returncode == 0
    cfg = picobot_home / "config.json"
    assert "//" in cfg.read_text()
    assert (picobot_home / "AGENTS.md").exists() and (picobot_home / "skills").is_dir()
    cfg.write_text("{}")
    res = run_cli(picobot_home, "onboard")
    assert cfg.read_text() == "{}" and "kept" in res.stdout


def test_unknown_config_key_warns_but_runs(picobot_home: Path) -> None:
    (picobot_home / "config.json").write_text('{"tools": {"restrictToWorkspac": false}}')
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "demo")
    assert res.returncode == 0
    assert "unknown config key `tools.restrictToWorkspac`" in res.stderr
    assert "did you mean `tools.restrictToWorkspace`?" in res.stderr


def test_a_mistyped_key_is_named_beside_the_error_it_causes(picobot_home: Path) -> None:
    # `modle` leaves the default model, which has no key here: the error alone would not
    # say why (issue 25, point 9: a typo'd config key got no "did you mean").
    (picobot_home / "config.json").write_text('{"agents": {"defaults": {"modle": "demo"}}}')
    res = run_cli(picobot_home, "agent", "-m", "hi")
    assert res.returncode == 2
    assert "No API key" in res.stderr
    assert "unknown config key `agents.defaults.modle` (ignored)" in res.stderr
    assert "did you mean `agents.defaults.model`?" in res.stderr
    assert "Traceback" not in res.stderr


def test_logs_flag_shows_runtime_logs(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "demo", "--logs")
    assert "picobot.loop" in res.stderr and "ended: final" in res.stderr
    quiet = run_cli(picobot_home, "agent", "-m", "hi", "--model", "demo")
    assert "picobot.loop" not in quiet.stderr
    log_file = picobot_home / "data" / "logs" / "picobot.log"
    assert "ended: final" in log_file.read_text()
