"""The TUI's first answer while its own LiteLLM is importing: relayed to a warm server.

The real `picobot agent` in tmux, with a real warm server (the rig's) and the OpenAI
test server. A hook on PYTHONPATH (tests/support/hold_litellm) holds the TUI's
`import litellm` until the test lets it go, so the first call is made before it, every
time. The relayed run is compared with the same run made in the TUI's own process: the
provider sees the same requests, and the session file holds the same conversation.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from picobot_tui.core.llm.model import (
    LLMError,
    ResentChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)
from picobot_tui.warm.relay import decode_chunk, decode_error, encode_chunk, encode_error
from tests.headless.conftest import run_cli
from tests.server.support import Rig, children, normalise_all, wait_for
from tests.support.openai_server import (
    OpenAITestServer,
    keep_alive_forever,
    text_reply,
    tool_call_reply,
)
from tests.tui.test_tui_e2e import Tmux, _picobot

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

HOLD = str(Path(__file__).parents[1] / "support" / "hold_litellm")
ANSWER = "The workspace holds hello.txt and nothing else."


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    t = Tmux(f"picobot-relay-{uuid.uuid4().hex[:8]}")
    yield t
    subprocess.run([*t.argv, "kill-server"], capture_output=True)


def _home(root: Path, llm: OpenAITestServer) -> Path:
    home = root / "home"
    (home / "workspace").mkdir(parents=True)
    (home / "workspace" / "hello.txt").write_text("hi\n")
    config = {
        "agents": {"defaults": {"model": "openai/test-model", "maxRetries": 0}},
        "providers": {"openai": {"apiKey": "sk-test-dummy", "apiBase": llm.url}},
        "ui": {"bell": "never"},
    }
    (home / "config.json").write_text(json.dumps(config))
    return home


def _start_tui(tmux: Tmux, env: dict[str, str], home: Path) -> Path:
    """Start the TUI in `home`'s workspace; the file its exit code is written to."""
    exit_file = home / "exit-code"
    command = " ".join(
        [
            "env", "-i",
            *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
            *map(shlex.quote, [*_picobot(), "agent", "--workspace", str(home / "workspace")]),
            ";", f"echo $? > {shlex.quote(str(exit_file))}",
        ]
    )  # fmt: skip
    cwd = str(home / "workspace")
    tmux.run("new-session", "-d", "-s", tmux.name, "-x", "120", "-y", "36", "-c", cwd, command)
    tmux.wait_for(lambda s: "Message picobot" in s, "the first frame")
    return exit_file


def _quit(tmux: Tmux, exit_file: Path) -> None:
    tmux.keys("C-q")
    wait_for(exit_file.exists, "the TUI to exit")
    assert exit_file.read_text().strip() == "0"


def _run_tui(tmux: Tmux, env: dict[str, str], home: Path, gate: Path) -> list[dict]:
    """Start the TUI, send the message at its first frame, wait for the answer, let its
    LiteLLM import go, quit; the session file's messages."""
    exit_file = _start_tui(tmux, env, home)
    tmux.keys("-l", "what is in the workspace?")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "nothing else." in s and "idle" in s, "the answer", limit=120)
    gate.touch()
    _quit(tmux, exit_file)
    [session_file] = (home / "sessions").glob("cli_*.jsonl")
    lines = [json.loads(x) for x in session_file.read_text().splitlines() if x.strip()]
    return [m for m in lines if m.get("_type") != "meta"]


def _script(llm: OpenAITestServer) -> None:
    llm.clear()
    llm.script(
        [
            tool_call_reply("list_dir", {"path": "."}, id="call_relay"),
            text_reply(ANSWER, chunk_size=6),
        ]
    )


def test_the_tuis_first_answer_comes_from_the_warm_server_and_matches_one_made_here(
    rig: Rig, llm_server: OpenAITestServer, tmux: Tmux, tmp_path: Path
) -> None:
    warm_home = _home(tmp_path / "warm", llm_server)
    cold_home = _home(tmp_path / "cold", llm_server)
    gate = tmp_path / "gate"

    def env_extra(home: Path) -> dict[str, str]:
        return {"PYTHONPATH": HOLD, "HOLD_LITELLM_UNTIL": str(gate), "TERM": "xterm-256color"}

    def env(home: Path, **extra: str) -> dict[str, str]:
        return rig.env(home, **env_extra(home), **extra)

    # Started in the TUI's environment: a server imported under other variables would
    # (rightly) be refused by it.
    started = rig.run(warm_home, "server", "start", **env_extra(warm_home))
    assert started.returncode == 0, started.stdout + started.stderr
    before = rig.served()
    _script(llm_server)
    warm = _run_tui(tmux, env(warm_home), warm_home, gate)
    warm_requests = [r.body for r in llm_server.completions]
    # Both calls of the turn were made while the TUI's import was held: both relayed.
    assert rig.served() - before == 2
    log = (warm_home / "data" / "logs" / "picobot.log").read_text()
    assert log.count("model call relayed to the warm server") == 2

    gate.unlink()
    _script(llm_server)
    gate.touch()  # the same run, its import not held, and no server: made in the TUI
    cold = _run_tui(tmux, env(cold_home, PICOBOT_SERVER="0"), cold_home, gate)
    cold_requests = [r.body for r in llm_server.completions]
    assert "relayed" not in (cold_home / "data" / "logs" / "picobot.log").read_text()

    assert [m["role"] for m in warm] == ["user", "assistant", "tool", "assistant"]
    assert warm[-1]["content"] == ANSWER
    homes = (warm_home, cold_home)
    assert normalise_all(warm_requests, *homes) == normalise_all(cold_requests, *homes)
    assert normalise_all(warm, *homes) == normalise_all(cold, *homes)


def _held_env(rig: Rig, home: Path, gate: Path, **extra: str) -> dict[str, str]:
    held = {"PYTHONPATH": HOLD, "HOLD_LITELLM_UNTIL": str(gate), "TERM": "xterm-256color"}
    return rig.env(home, **held, **extra)


def test_esc_during_a_relayed_answer_ends_the_servers_child(
    rig: Rig, llm_server: OpenAITestServer, tmux: Tmux, tmp_path: Path
) -> None:
    home = _home(tmp_path, llm_server)
    gate = tmp_path / "gate"
    env = _held_env(rig, home, gate)
    started = rig.run(home, "server", "start", **{k: env[k] for k in ("PYTHONPATH", "TERM")})
    assert started.returncode == 0, started.stdout + started.stderr
    server_pid = int(rig.ask()["pid"])  # type: ignore[index]
    llm_server.script([keep_alive_forever(2, text_reply("Partial words then only pings."))])
    exit_file = _start_tui(tmux, env, home)
    tmux.keys("-l", "hello")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "Partial" in s, "the first relayed words", limit=120)
    assert len(children(server_pid)) == 1  # the relayed call, streaming
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "interrupted" in s and "idle" in s, "the interrupted turn")
    wait_for(lambda: not children(server_pid), "the server's child to end")
    gate.touch()
    _quit(tmux, exit_file)


def test_with_no_server_the_tui_answers_itself_and_quits_at_once(
    rig: Rig, llm_server: OpenAITestServer, tmux: Tmux, tmp_path: Path
) -> None:
    """The relay is on (no PICOBOT_SERVER=0) but no server runs: the call is made in the
    TUI once its own import is done; and a TUI quit before any message exits at once,
    its warm-up thread not left waiting for a first call."""
    home = _home(tmp_path, llm_server)
    gate = tmp_path / "gate"
    gate.touch()
    _script(llm_server)
    messages = _run_tui(tmux, _held_env(rig, home, gate), home, gate)
    assert messages[-1]["content"] == ANSWER
    log = (home / "data" / "logs" / "picobot.log").read_text()
    assert "not relayed: no server" in log and "relayed to the warm server" not in log
    # No server answered during the TUI; its exit starts one (PICOBOT_SERVER=1), which
    # `server start` below waits for rather than failing when it is still importing.
    assert not rig.sockets()

    subprocess.run([*tmux.argv, "kill-server"], capture_output=True)
    gate.unlink()  # held: the warm-up is waiting in the import or for a first call
    started = rig.run(home, "server", "start", PYTHONPATH=HOLD, TERM="xterm-256color")
    server_log = home / "data" / "logs" / "server.log"  # in the message: CI's tmp goes
    assert started.returncode == 0, (
        started.stdout
        + started.stderr
        + (server_log.read_text()[-4000:] if server_log.exists() else "(no server.log)")
    )
    (home / "exit-code").unlink()
    exit_file = _start_tui(tmux, _held_env(rig, home, gate), home)
    _quit(tmux, exit_file)


@pytest.mark.parametrize(
    "chunk",
    [
        TextChunk("héllo\n\u2028"),
        ToolCallChunk(0, "call_1", "list_dir", '{"path": "."}'),
        ToolCallChunk(None, None, None, None),
        UsageChunk(120, 7, 0.0012, 100, 10, 5, 3, 0.0004, 0.002, True),
        ResentChunk("HTTP 422"),
    ],
)
def test_each_chunk_crosses_the_pipe_unchanged(chunk: object) -> None:
    import json as json_

    line = json_.dumps(encode_chunk(chunk))  # type: ignore[arg-type]
    assert decode_chunk(json_.loads(line)) == chunk


def test_an_error_crosses_the_pipe_with_every_field() -> None:
    import json as json_

    error = LLMError("rate limited", kind="rate_limit", transient=True, status=429,
                     retry_after=2.5, hint="Wait.")  # fmt: skip
    back = decode_error(json_.loads(json_.dumps(encode_error(error))))
    fields = ("message", "kind", "transient", "status", "retry_after", "hint")
    assert [getattr(back, f) for f in fields] == [getattr(error, f) for f in fields]


@pytest.mark.parametrize("line", ["not json\n", "[" * 5000 + "\n", '{"request": {}}\n', ""])
def test_server_relay_refuses_what_is_not_a_relayed_call(configured_home: Path, line: str) -> None:
    res = run_cli(configured_home, "server", "relay", input=line, PICOBOT_SERVER="0")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "not a relayed call" in res.stderr and "Traceback" not in res.stderr
    assert res.stdout == ""
