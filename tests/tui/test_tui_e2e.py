"""End to end: the real `picobot agent` console script in tmux, against the local
OpenAI-compatible test server (through LiteLLM). Types a message, waits for the streamed
answer and the tool call on screen, quits with Ctrl+Q, and checks the session file."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import INSTANT_DEMO, NO_SERVER
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

ANSWER = "The workspace holds one file, hello.txt, and nothing else."


def _picobot() -> list[str]:
    exe = shutil.which("picobot")
    return [exe] if exe else [sys.executable, "-m", "picobot_tui"]


class Tmux:
    """One test's tmux, on a server of its own (`-L name`): on the shared default server, a
    test whose last session ended stopped the server as another worker's `new-session` was
    starting on it ("server exited unexpectedly", seen under xdist)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.argv = ["tmux", "-L", name]

    def run(self, *args: str) -> str:
        out = subprocess.run([*self.argv, *args], check=True, capture_output=True, text=True)
        return out.stdout

    def alive(self) -> bool:
        has = subprocess.run([*self.argv, "has-session", "-t", self.name], capture_output=True)
        return has.returncode == 0

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name) if self.alive() else ""

    def wait_for(self, condition: Callable[[str], bool], what: str, limit: float = 60) -> str:
        """Poll the screen until `condition` holds (a generous bound, never an assertion
        about speed)."""
        deadline = time.monotonic() + limit
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; screen was:\n{screen}")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def start_agent(
        self, home: Path, args: list[str], *, then: str, cwd: Path | None = None
    ) -> None:
        """Run `picobot agent ARGS` (120x36, PICOBOT_HOME=home, offline LiteLLM) in `cwd`
        (default: the test's), then the shell command `then` once it exits."""
        env = {
            "PICOBOT_HOME": str(home),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            INSTANT_DEMO[0]: INSTANT_DEMO[1],
            NO_SERVER[0]: NO_SERVER[1],  # tmux's shell does not get the test's environment
            "TERM": "xterm-256color",
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", str(home)),
        }
        command = " ".join(
            [
                "env",
                *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
                *map(shlex.quote, [*_picobot(), "agent", *args]),
                ";",
                then,
            ]
        )
        where = ["-c", str(cwd)] if cwd is not None else []
        self.run("new-session", "-d", "-s", self.name, "-x", "120", "-y", "36", *where, command)


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as srv:
        yield srv


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    t = Tmux(f"picobot-e2e-{uuid.uuid4().hex[:8]}")
    yield t
    subprocess.run([*t.argv, "kill-server"], capture_output=True)


def test_picobot_agent_in_tmux(server, tmux, picobot_home, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hi\n")
    config = {
        "agents": {"defaults": {"model": "openai/test-model", "maxRetries": 0}},
        "providers": {"openai": {"apiKey": "sk-test-dummy", "apiBase": server.url}},
        "ui": {"bell": "never"},
    }
    (picobot_home / "config.json").write_text(json.dumps(config))
    server.script(
        [
            tool_call_reply("list_dir", {"path": "."}, id="call_e2e"),
            text_reply(ANSWER, chunk_size=6),
        ]
    )
    exit_file = tmp_path / "exit-code"
    tmux.start_agent(
        picobot_home,
        ["--workspace", str(workspace)],
        then=f"echo $? > {shlex.quote(str(exit_file))}",
    )

    tmux.wait_for(lambda s: "Message picobot" in s, "the first frame")
    tmux.keys("-l", "what is in the workspace?")
    tmux.keys("Enter")
    screen = tmux.wait_for(
        lambda s: "nothing else." in s and "idle" in s, "the streamed answer", limit=90
    )
    assert "list_dir" in screen  # the tool call, inline and in the timeline
    assert "what is in the workspace?" in screen

    tmux.keys("C-q")
    deadline = time.monotonic() + 30
    # The shell creates the file before `echo` writes into it: wait for the line itself.
    while time.monotonic() < deadline and not (exit_file.exists() and exit_file.read_text()):
        time.sleep(0.1)
    assert exit_file.exists(), "picobot did not exit after Ctrl+Q"
    assert exit_file.read_text().strip() == "0"

    [session_file] = (picobot_home / "sessions").glob("cli_*.jsonl")
    lines = [json.loads(x) for x in session_file.read_text().splitlines() if x.strip()]
    messages = [m for m in lines if m.get("_type") != "meta"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[2]["tool_call_id"] == "call_e2e" and messages[2]["status"] == "ok"
    assert messages[-1]["content"] == ANSWER
    assert len(server.completions) == 2  # (and the one `GET /v1/models` before them)


def test_a_bad_config_found_after_the_first_frame_exits_2_with_the_message(tmux, picobot_home):
    """The TUI paints before it loads the settings; a config error still ends the run with
    the file, line and key on the restored terminal, and exit code 2."""
    (picobot_home / "config.json").write_text(
        '{\n  "agents": {"defaults": {"maxTokens": "x"}}\n}\n'
    )
    tmux.start_agent(picobot_home, [], then='echo "exit=$?"; sleep 60')
    screen = tmux.wait_for(lambda s: "exit=" in s, "picobot to exit")
    assert "exit=2" in screen
    flat = screen.replace("\n", "")  # the long path wraps at 120 columns
    assert "config.json, line 2" in flat and "maxTokens" in flat
    assert "Traceback" not in screen


def test_ctrl_c_interrupts_then_twice_quits_and_prints_how_to_resume(server, tmux, picobot_home):
    """Ctrl+C (a key in the TUI's raw terminal) stops the streaming turn; on the idle prompt
    the first Ctrl+C warns and the second quits; the restored terminal shows the resume
    command (issue 15, items 6 and 12)."""
    from tests.support.openai_server import keep_alive_forever

    config = {
        "agents": {"defaults": {"model": "openai/test-model", "maxRetries": 0}},
        "providers": {"openai": {"apiKey": "sk-test-dummy", "apiBase": server.url}},
        "ui": {"bell": "never"},
    }
    (picobot_home / "config.json").write_text(json.dumps(config))
    server.script([keep_alive_forever(2, text_reply("Partial words then only pings."))])
    workspace = picobot_home / "ws"
    workspace.mkdir()
    tmux.start_agent(picobot_home, ["--workspace", str(workspace)], then='echo "exit=$?"; sleep 60')
    tmux.wait_for(lambda s: "Message picobot" in s, "the first frame")
    tmux.keys("-l", "hello there")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "Partial" in s, "the first streamed words", limit=90)
    tmux.keys("C-c")
    tmux.wait_for(lambda s: "interrupted" in s and "idle" in s, "the interrupted turn")
    tmux.keys("C-c")
    tmux.wait_for(lambda s: "again to quit" in s, "the second-press hint")
    tmux.keys("C-c")
    screen = tmux.wait_for(lambda s: "exit=" in s, "picobot to exit")
    assert "exit=0" in screen
    [session_file] = (picobot_home / "sessions").glob("cli_*.jsonl")
    session_id = session_file.stem.removeprefix("cli_")
    assert f"picobot agent --session {session_id}" in screen.replace("\n", "")
    assert "Traceback" not in screen


def _prompt_line(screen: str) -> str:
    """The prompt's text: the last line above the footer (completions show above it)."""
    lines = [line for line in screen.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if "^q Quit" in line and i > 0:
            return lines[i - 1].strip()
    return ""


def test_the_first_run_out_of_the_box(tmux, picobot_home, tmp_path):
    """The README's first command on a machine with no key and no config, in a project
    folder: the trust question, then the offline demo with its banner, answering about the
    folder it was started in; Tab cycles the slash completions without leaving the prompt
    (issue 15, items 1, 3 and 7)."""
    project = tmp_path / "my-project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'mine'\n")
    assert not (picobot_home / "config.json").exists()
    tmux.start_agent(picobot_home, [], then='echo "exit=$?"; sleep 60', cwd=project)
    tmux.wait_for(lambda s: "Trust this folder?" in s, "the trust question")
    tmux.keys("y")
    screen = tmux.wait_for(lambda s: "demo model, offline" in s, "the demo banner")
    assert "OPENAI_API_KEY" in screen.replace("\n", " ")
    tmux.keys("-l", "list the files here")
    tmux.keys("Enter")
    # The answer's last words can be painted after the status says idle: wait for them.
    screen = tmux.wait_for(
        lambda s: (
            "pyproject.toml" in s
            and "idle" in s
            and ("That is the whole demo" in s or "entries" in s)
        ),
        "the listing and the demo's answer",
    )
    # /copy in tmux: its default set-clipboard drops OSC 52, so the answer goes to tmux's
    # own buffer too, and the toast says so (issue 25, point 8).
    tmux.keys("-l", "/copy")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "tmux's buffer" in s, "the copy toast")
    copied = tmux.run("show-buffer")
    assert "pyproject.toml" in copied and (
        "That is the whole demo" in copied or "entries" in copied
    )
    tmux.keys("-l", "/co")
    tmux.keys("Tab")
    tmux.wait_for(lambda s: _prompt_line(s).startswith("/compact"), "the first completion")
    tmux.keys("Tab")
    tmux.wait_for(lambda s: _prompt_line(s).startswith("/copy"), "Tab cycles to the next")
    tmux.keys("Tab")
    tmux.wait_for(lambda s: _prompt_line(s).startswith("/context"), "and the last")
    tmux.keys("Tab")
    tmux.wait_for(lambda s: _prompt_line(s).startswith("/compact"), "and round again")
    tmux.keys("C-u")  # still in the prompt: the line editing key works there
    tmux.wait_for(lambda s: "/compact" not in _prompt_line(s), "the prompt cleared")
    tmux.keys("C-q")
    screen = tmux.wait_for(lambda s: "exit=" in s, "picobot to exit")
    assert "exit=0" in screen and "Traceback" not in screen
    stored = json.loads((picobot_home / "trusted.json").read_text())["workspaces"]
    assert stored == {str(project.resolve()): True}
