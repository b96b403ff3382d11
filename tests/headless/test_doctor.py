"""`picobot doctor` through the installed console script: each check can fail, secrets never
show, and the exit code says whether something is broken."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import run_cli

KEY = "sk-doctor-SECRET-7a6b5c4d3e2f1a0b"
HEADER = "hdr-doctor-SECRET-99887766"
pytestmark = pytest.mark.e2e


def _config(home: Path, tools: dict[str, Any] | None = None, **defaults: Any) -> Path:
    config = {
        "agents": {"defaults": {"model": "openai/gpt-4o-mini", **defaults}},
        "providers": {"openai": {"apiKey": KEY, "extraHeaders": {"X-Org": HEADER}}},
        "tools": tools or {},
    }
    path = home / "config.json"
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    home.chmod(0o700)
    return path


def _lines(out: str, mark: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(f"[{mark}")]


def test_healthy_setup_exits_0_and_masks_every_secret(picobot_home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _config(picobot_home, workspace=str(ws))
    r = run_cli(picobot_home, "doctor")
    assert r.returncode == 0, r.stdout + r.stderr
    assert KEY not in r.stdout + r.stderr and HEADER not in r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert not _lines(r.stdout, "FAIL")
    assert f"workspace: {ws} is writable" in r.stdout
    assert "provider key: openai/gpt-4o-mini has what it needs" in r.stdout
    assert "versions: picobot" in r.stdout and "Textual" in r.stdout and "LiteLLM" in r.stdout
    # The changed settings are listed, masked.
    assert 'providers.openai.extraHeaders.X-Org = "********"' in r.stdout
    assert not list(ws.iterdir()), "the writability probe must leave nothing behind"


def test_missing_key_fails(picobot_home: Path) -> None:
    picobot_home.chmod(0o700)
    r = run_cli(picobot_home, "doctor")
    assert r.returncode == 1
    assert any("provider key: missing" in line for line in _lines(r.stdout, "FAIL"))
    assert "OPENAI_API_KEY" in r.stdout


def test_broken_config_fails_without_traceback(picobot_home: Path) -> None:
    (picobot_home / "config.json").write_text('{"agents": {')
    r = run_cli(picobot_home, "doctor")
    assert r.returncode == 1
    assert "invalid JSON" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_config_readable_by_others_fails(picobot_home: Path) -> None:
    path = _config(picobot_home)
    path.chmod(0o644)
    r = run_cli(picobot_home, "doctor")
    assert r.returncode == 1
    fails = _lines(r.stdout, "FAIL")
    assert any("config file is readable by others" in line for line in fails), r.stdout
    assert f"chmod 600 {path}" in r.stdout


def test_open_directory_only_warns(picobot_home: Path) -> None:
    _config(picobot_home)
    picobot_home.chmod(0o755)
    r = run_cli(picobot_home, "doctor")
    assert any("directories under" in line for line in _lines(r.stdout, "warn")), r.stdout
    assert f"chmod 700 {picobot_home}" in r.stdout


def test_workspace_that_is_a_file_fails(picobot_home: Path, tmp_path: Path) -> None:
    not_dir = tmp_path / "a-file"
    not_dir.write_text("x")
    _config(picobot_home, workspace=str(not_dir))
    r = run_cli(picobot_home, "doctor")
    assert r.returncode == 1
    assert any("is not a directory" in line for line in _lines(r.stdout, "FAIL"))


def test_required_sandbox_without_bwrap_fails(picobot_home: Path, tmp_path: Path) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    _config(picobot_home, tools={"exec": {"sandbox": "bwrap"}})
    r = run_cli(picobot_home, "doctor", PATH=str(empty_bin))
    assert r.returncode == 1
    fails = _lines(r.stdout, "FAIL")
    assert any("sandbox" in line and "bwrap" in line for line in fails), r.stdout
    assert "apt-get install bubblewrap" in r.stdout


def test_auto_sandbox_without_bwrap_warns_unsandboxed(picobot_home: Path, tmp_path: Path) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    _config(picobot_home)
    r = run_cli(picobot_home, "doctor", PATH=str(empty_bin))
    assert r.returncode == 0, r.stdout
    assert any("unsandboxed" in line for line in _lines(r.stdout, "warn")), r.stdout


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_working_bwrap_is_reported_active(picobot_home: Path) -> None:
    _config(picobot_home)
    r = run_cli(picobot_home, "doctor", PATH=os.environ["PATH"])
    assert "[ok  ] sandbox: exec runs under bubblewrap (auto, no network)" in r.stdout, r.stdout
