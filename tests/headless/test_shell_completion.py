"""Shell completion through the installed `picobot` console script (Typer's own
`--show-completion` / `--install-completion`), used the way a bash user would."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.headless.conftest import cli_env, run_cli

pytestmark = [
    pytest.mark.skipif(shutil.which("picobot") is None, reason="the console script is needed"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed"),
]


def in_bash(home: Path, script: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `script` in bash (picobot is a child of bash, so Typer detects the shell)."""
    return subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env(home, **env),
        stdin=subprocess.DEVNULL,
    )


def test_help_offers_the_completion_options(picobot_home):
    res = run_cli(picobot_home, "--help")
    assert res.returncode == 0
    assert "--install-completion" in res.stdout and "--show-completion" in res.stdout


def test_the_shown_bash_script_completes_commands_and_options(picobot_home):
    script = (
        'eval "$(picobot --show-completion)"\n'
        "COMP_WORDS=(picobot sess); COMP_CWORD=1; _picobot_completion picobot\n"
        'printf "first:%s\\n" "${COMPREPLY[@]}"\n'
        "COMP_WORDS=(picobot sessions li); COMP_CWORD=2; _picobot_completion picobot\n"
        'printf "second:%s\\n" "${COMPREPLY[@]}"\n'
        "COMP_WORDS=(picobot agent --wor); COMP_CWORD=2; _picobot_completion picobot\n"
        'printf "third:%s\\n" "${COMPREPLY[@]}"\n'
    )
    res = in_bash(picobot_home, script, SHELL="/bin/bash")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "first:sessions" in lines
    assert "second:list" in lines
    assert "third:--workspace" in lines
    assert "Traceback" not in res.stderr


def test_install_completion_writes_the_script_and_sources_it(picobot_home, tmp_path):
    home = tmp_path / "user-home"
    home.mkdir()
    res = in_bash(picobot_home, "picobot --install-completion; echo rc=$?", HOME=str(home))
    assert "rc=0" in res.stdout, res.stderr
    installed = home / ".bash_completions" / "picobot.sh"
    assert "_PICOBOT_COMPLETE=complete_bash" in installed.read_text()
    assert str(installed.relative_to(home)) in (home / ".bashrc").read_text()
