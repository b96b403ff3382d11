"""Fixtures for driving the installed `picobot` console script against the local server."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import INSTANT_DEMO, NO_SERVER
from tests.support import call_record, worker_server
from tests.support.openai_server import MODELS, OpenAITestServer

SECRET = "sk-test-SECRETVALUE-1234567890"


def picobot_exe() -> list[str]:
    exe = shutil.which("picobot")
    return [exe] if exe else [sys.executable, "-m", "picobot_tui"]


@pytest.fixture(scope="session")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as srv:
        yield srv


@pytest.fixture
def llm_server(server: OpenAITestServer) -> Iterator[OpenAITestServer]:
    """The shared server, with an empty script and request log for this test."""
    server.script([])
    server.clear()
    server.models = list(MODELS)
    yield server
    server.script([])
    server.models = list(MODELS)


@pytest.fixture
def configured_home(picobot_home: Path, llm_server: OpenAITestServer) -> Path:
    """A ~/.picobot whose config points openai/ models at the local test server."""
    config = {
        "agents": {"defaults": {"model": "openai/test-model", "retryBackoff": 0.05}},
        "providers": {"openai": {"apiKey": SECRET, "apiBase": llm_server.url}},
    }
    (picobot_home / "config.json").write_text(json.dumps(config))
    return picobot_home


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PICOBOT_") and not k.endswith("_API_KEY")
    }
    env.update(
        PICOBOT_HOME=str(home),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        **dict([INSTANT_DEMO]),
    )
    # The worker's warm server, or cold (tests/support/worker_server.py); a test that
    # routes its own call (tests/server) gets the old default, cold, under its extras.
    # What imports in this process put into its environment (LiteLLM's TIKTOKEN_CACHE_DIR,
    # once a test imported it) is not the user's shell's: every call of a worker differed
    # from its server in it and ran cold (365 calls in the CI run on 0b03e33).
    for name in worker_server.SET_BY_IMPORTS:
        if name not in worker_server.session_env():
            env.pop(name, None)
    routed = "PICOBOT_SERVER" in extra or "XDG_RUNTIME_DIR" in extra
    env.update(dict([NO_SERVER]) if routed else worker_server.call_env(env, extra))
    env.update(extra)  # after the defaults: a server test sets PICOBOT_SERVER itself
    return env


def home_workspace(home: Path) -> Path | None:
    """Where a test's picobot starts (its current directory, so its default workspace):
    `<home>/workspace` when the test made one (the tests' own home always has it), else the
    test's current directory (tests/conftest.py puts it in the tests' own home)."""
    ws = home / "workspace"
    return ws if ws.is_dir() else None


def run_cli(
    home: Path, *args: str, input: str | None = None, timeout: float = 90, **env: str
) -> subprocess.CompletedProcess[str]:
    return run_cli_env(home, args, cli_env(home, **env), input=input, timeout=timeout)


def run_cli_env(
    home: Path,
    args: tuple[str, ...] | list[str],
    env: dict[str, str],
    *,
    input: str | None = None,
    timeout: float = 90,
) -> subprocess.CompletedProcess[str]:
    """`picobot ARGS` in `home`'s workspace with exactly `env` (run_cli's, or a variant)."""
    cwd = home_workspace(home)
    res = subprocess.run(
        [*picobot_exe(), *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    call_record.record(home, cwd or Path.cwd(), args, env, res.returncode, res.stdout, res.stderr)
    return res


def session_files(home: Path) -> list[Path]:
    return sorted(p for p in (home / "sessions").glob("*_*.jsonl"))


def read_messages(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        data = json.loads(line)
        if data.get("_type") != "meta":
            out.append(data)
    return out


def run_on_pty(home: Path, *args: str, stderr_too: bool = False) -> tuple[int, str, str]:
    """Run `picobot ARGS` with stdout on a pseudo-terminal (and stderr too, or a pipe), as a
    person runs it: (exit code, what the terminal showed with CRLF as LF, stderr)."""
    master, slave = pty.openpty()
    env = cli_env(home)
    proc = subprocess.Popen(
        [*picobot_exe(), *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave if stderr_too else subprocess.PIPE,
        env=env,
    )
    os.close(slave)
    try:
        shown = drain_pty(master)
        _, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
    out, err_text = shown.decode().replace("\r\n", "\n"), (err or b"").decode()
    call_record.record(home, Path.cwd(), args, env, proc.returncode, out, err_text)
    return proc.returncode, out, err_text


def drain_pty(master: int) -> bytes:
    """Everything the terminal shows from now until the child closes it (EIO or EOF)."""
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            return shown
        if not chunk:
            return shown
        shown += chunk
