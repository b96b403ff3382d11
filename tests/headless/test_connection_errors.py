"""A provider that cannot be reached, through the `picobot` script (issue 25, point 3): one
line naming the URL and the cause, a hint only when it adds something, no library class
names, reprs or LiteLLM tips; a refused loopback port is not retried, and picobot's retries
are the only ones (one connection per attempt: LiteLLM's and the OpenAI SDK's are off)."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.headless.conftest import run_cli

pytestmark = pytest.mark.e2e

LEAKS = ("object at 0x", "<ssl.", "Handle with", "litellm.", "InternalServerError", "Exception")


def _free_port() -> int:
    """A port on 127.0.0.1 with nothing listening (bound, read, released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ResetListener:
    """Reads each request's first line, then resets the connection; keeps the lines."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.lines: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(30)  # a bound against a client that sends nothing
            try:
                self.lines.append(conn.recv(4096).split(b"\r\n", 1)[0].decode())
            except OSError:
                self.lines.append("")
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    @property
    def calls(self) -> int:
        """Connections that carried a chat completion (not the `GET /models` question)."""
        return sum(1 for line in self.lines if line.startswith("POST"))


@pytest.fixture
def reset_listener() -> Iterator[ResetListener]:
    listener = ResetListener()
    yield listener
    listener.sock.close()


def _config(home: Path, model: str, provider: str, base: str, retries: int = 1) -> None:
    config = {
        "agents": {"defaults": {"model": model, "maxRetries": retries, "retryBackoff": 0.05}},
        "providers": {provider: {"apiBase": base, "apiKey": "local"}},
    }
    (home / "config.json").write_text(json.dumps(config))


def _lines(stderr: str, start: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(start)]


@pytest.mark.parametrize(
    ("model", "provider", "path"),
    [("openai/my-model", "openai", "/v1"), ("anthropic/claude-sonnet-4-5", "anthropic", "")],
)
def test_nothing_listening_is_one_line_with_the_url(
    picobot_home: Path, model: str, provider: str, path: str
) -> None:
    url = f"http://127.0.0.1:{_free_port()}{path}"
    _config(picobot_home, model, provider, url)
    res = run_cli(picobot_home, "agent", "-m", "hi")
    assert res.returncode == 1, res.stderr
    errors, hints = _lines(res.stderr, "error:"), _lines(res.stderr, "hint:")
    assert len(errors) == 1 and f"nothing listening on {url}" in errors[0], res.stderr
    assert len(hints) == 1 and f"providers.{provider}.apiBase" in hints[0], res.stderr
    assert hints[0].removeprefix("hint: ") not in errors[0]  # the hint adds something
    assert "retrying" not in res.stderr  # nothing listens here: a retry would find the same
    assert not [leak for leak in LEAKS if leak in res.stderr], res.stderr
    assert res.stdout == ""


def test_picobot_retries_are_the_only_ones(
    picobot_home: Path, reset_listener: ResetListener
) -> None:
    """A server that resets every connection: maxRetries 2 means 3 attempts, one connection
    each (the OpenAI SDK alone would add 2 per attempt, LiteLLM its own)."""
    url = f"http://127.0.0.1:{reset_listener.port}/v1"
    _config(picobot_home, "openai/my-model", "openai", url, retries=2)
    res = run_cli(picobot_home, "agent", "-m", "hi")
    assert res.returncode == 1, res.stderr
    assert res.stderr.count("retrying in") == 2, res.stderr
    assert reset_listener.calls == 3, reset_listener.lines
    assert len(reset_listener.lines) == 4  # and the one question for its models, first
    assert reset_listener.lines[0].startswith("GET /v1/models")
    assert f"{url} closed the connection" in res.stderr
    assert not [leak for leak in LEAKS if leak in res.stderr], res.stderr
