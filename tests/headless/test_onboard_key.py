"""`picobot onboard` and the key, through the `picobot` script (issue 25, point 1): on a
terminal it asks for the key (not echoed) and writes it; without one it says how to set it
and leaves the model a comment, so the TUI offers the demo until there is a key; and no
message after it suggests running `picobot onboard` again."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
from pathlib import Path

import pytest

from picobot_tui.config.jsonc import strip_json_comments
from tests.headless.conftest import cli_env, drain_pty, picobot_exe, run_cli

pytestmark = pytest.mark.e2e

KEY = "sk-typed-ONBOARD-0123456789"


def _config(home: Path) -> dict:
    return json.loads(strip_json_comments((home / "config.json").read_text()))


def test_onboard_without_a_terminal_says_how_to_set_the_key(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "onboard", OPENAI_API_KEY="")
    assert res.returncode == 0, res.stderr
    assert "OPENAI_API_KEY" in res.stdout and "providers.openai.apiKey" in res.stdout
    assert "demo" in res.stdout
    data = _config(picobot_home)
    assert "model" not in data["agents"]["defaults"]  # a comment: the demo until a key
    assert data["providers"]["openai"]["apiKey"] is None
    # Headless still never falls back to the demo; the message names both ways to fix it
    # and not the command the user has just run.
    res = run_cli(picobot_home, "agent", "-m", "hi", OPENAI_API_KEY="")
    assert res.returncode == 2, res.stderr
    assert "OPENAI_API_KEY" in res.stderr and "providers.openai.apiKey" in res.stderr
    assert "picobot onboard" not in res.stderr


def _read_until(master: int, words: bytes, bound: float = 120) -> bytes:
    """What the terminal shows until `words` (a bound against a hang, not a timing)."""
    out = b""
    while words not in out:
        ready, _, _ = select.select([master], [], [], bound)
        chunk = os.read(master, 4096) if ready else b""
        if not chunk:
            raise AssertionError(f"never shown: {words!r} in {out!r}")
        out += chunk
    return out


def test_onboard_on_a_terminal_asks_for_the_key_and_does_not_echo_it(
    picobot_home: Path,
) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*picobot_exe(), "onboard"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=cli_env(picobot_home, OPENAI_API_KEY=""),
    )
    os.close(slave)
    try:
        shown = _read_until(master, b"is set): ")  # the end of the key's prompt
        os.write(master, KEY.encode() + b"\n")
        shown += drain_pty(master)
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(master)
    assert KEY.encode() not in shown  # typed, never echoed
    data = _config(picobot_home)
    assert data["providers"]["openai"]["apiKey"] == KEY
    assert data["agents"]["defaults"]["model"] == "openai/gpt-4o-mini"
    assert (picobot_home / "config.json").stat().st_mode & 0o777 == 0o600
