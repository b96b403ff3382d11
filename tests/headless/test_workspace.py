"""The workspace through the `picobot` console script: the directory it runs in unless one is
named; a named one must exist (nothing is created); $HOME and / are never taken implicitly.
Headless runs are trusted (the invocation is explicit), so their tools may write."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.headless.conftest import (
    cli_env,
    drain_pty,
    picobot_exe,
    read_messages,
    session_files,
)


def picobot(home: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*picobot_exe(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
        env=cli_env(home, **env),
        stdin=subprocess.DEVNULL,
    )


def tool_results(home: Path) -> list[str]:
    [path] = session_files(home)
    return [m["content"] for m in read_messages(path) if m.get("role") == "tool"]


def test_headless_lists_the_directory_it_runs_in(picobot_home: Path, tmp_path: Path) -> None:
    here = tmp_path / "my-project"
    here.mkdir()
    (here / "only-here-4411.txt").write_text("x")
    done = picobot(picobot_home, here, "agent", "--model", "demo", "-m", "list the files here")
    assert done.returncode == 0, done.stderr
    [listing] = tool_results(picobot_home)
    assert "only-here-4411.txt" in listing
    assert not (picobot_home / "workspace" / "only-here-4411.txt").exists()


@pytest.mark.parametrize("mode", ["-m", "--json"])
def test_a_workspace_that_does_not_exist_exits_2_and_creates_nothing(
    picobot_home: Path, tmp_path: Path, mode: str
) -> None:
    missing = tmp_path / "nonexistent" / "dir"
    args = ["agent", "--model", "demo", "--workspace", str(missing)]
    if mode == "-m":
        done = picobot(picobot_home, tmp_path, *args, "-m", "hi")
    else:
        done = subprocess.run(
            [*picobot_exe(), *args, "--json"],
            cwd=tmp_path,
            input=json.dumps({"type": "message", "content": "hi"}) + "\n",
            capture_output=True,
            text=True,
            timeout=90,
            env=cli_env(picobot_home),
        )
    assert done.returncode == 2, done.stderr
    assert f"the workspace {missing} does not exist" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "nonexistent").exists()
    assert session_files(picobot_home) == []


@pytest.mark.parametrize("where", ["home", "root"])
def test_home_or_root_is_never_the_implicit_workspace(
    picobot_home: Path, tmp_path: Path, where: str
) -> None:
    fake_home = tmp_path / "user"
    fake_home.mkdir()
    cwd = fake_home if where == "home" else Path("/")
    done = picobot(picobot_home, cwd, "agent", "--model", "demo", "-m", "hi", HOME=str(fake_home))
    assert done.returncode == 2, done.stderr
    assert "--workspace" in done.stderr and "Traceback" not in done.stderr
    assert ("home directory" if where == "home" else "filesystem root") in done.stderr
    assert session_files(picobot_home) == []


def test_home_named_explicitly_is_used(picobot_home: Path, tmp_path: Path) -> None:
    fake_home = tmp_path / "user"
    fake_home.mkdir()
    (fake_home / "in-home-9982.txt").write_text("x")
    done = picobot(
        picobot_home,
        fake_home,
        *["agent", "--model", "demo", "--workspace", ".", "-m", "list the files here"],
        HOME=str(fake_home),
    )
    assert done.returncode == 0, done.stderr
    assert "in-home-9982.txt" in tool_results(picobot_home)[0]


def test_headless_in_an_untrusted_looking_directory_still_writes(
    picobot_home: Path, tmp_path: Path
) -> None:
    """Headless use is trusted: no question, no read-only (trusted.json is not consulted)."""
    here = tmp_path / "p"
    here.mkdir()
    (picobot_home / "trusted.json").write_text(
        json.dumps({"version": 1, "workspaces": {str(here.resolve()): False}})
    )
    done = picobot(
        picobot_home, here, "agent", "--model", "demo", "-m", "run touch made.txt", "--yes"
    )
    assert done.returncode == 0, done.stderr
    assert "not trusted" not in " ".join(tool_results(picobot_home))
    assert (here / "made.txt").exists()


def test_onboard_asks_before_it_overwrites_and_pins_no_workspace(picobot_home: Path) -> None:
    import pty

    def onboard(answer: bytes) -> str:
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [*picobot_exe(), "onboard"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=cli_env(picobot_home),
        )
        os.close(slave)
        os.write(master, answer)
        out = drain_pty(master)
        proc.wait(timeout=60)
        os.close(master)
        return out.decode(errors="replace")

    first = onboard(b"\n")  # Enter: no key (the prompt for it is tested in test_onboard_key.py)
    cfg = picobot_home / "config.json"
    assert "wrote" in first and "Overwrite?" not in first
    text = cfg.read_text()
    assert '"apiKey": ""' not in text and '"apiKey": null' in text
    assert '"workspace": null' in text
    assert (picobot_home / "SOUL.md").exists() and (picobot_home / "skills").is_dir()
    assert not (picobot_home / "workspace" / "SOUL.md").exists()
    cfg.write_text("{}")
    kept = onboard(b"n\n" * 5)
    assert "Overwrite? [y/N]" in kept and cfg.read_text() == "{}"
    replaced = onboard(b"y\n\n" + b"y\n" * 4)  # overwrite, no key, overwrite the templates
    assert "wrote" in replaced and cfg.read_text() != "{}"
