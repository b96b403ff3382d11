"""`picobot sessions prune`, `--source` and `export -o DIR` through the installed console
script, against sessions written by the real store (old ones with a clock in the past)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from picobot_tui.core.sessions import SessionStore
from tests.headless.conftest import run_cli

OLD = datetime(2020, 1, 1, 12, tzinfo=UTC)


def add(home: Path, key: str, when: datetime | None, source: str = "headless") -> str:
    clock = (lambda: when) if when is not None else None
    store = SessionStore(home / "sessions", clock=clock)
    with store.open(key, model="demo", source=source) as s:
        s.append({"role": "user", "content": f"hi from {key}"})
        s.append({"role": "assistant", "content": "hello"})  # listed: it has an answer
    return key


@pytest.fixture
def world(picobot_home: Path) -> Path:
    """Two sessions from 2020 (one TUI, one headless) and one from now."""
    add(picobot_home, "cli:old-a", OLD)
    add(picobot_home, "cli:old-b", OLD, source="tui")
    add(picobot_home, "cli:fresh", None)
    return picobot_home


def keys(home: Path) -> set[str]:
    return {i.key for i in SessionStore(home / "sessions").list()}


def test_dry_run_lists_the_old_sessions_and_deletes_nothing(world: Path) -> None:
    res = run_cli(world, "sessions", "prune", "--older-than", "30d", "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "cli:old-a" in res.stdout and "cli:old-b" in res.stdout
    assert "cli:fresh" not in res.stdout
    assert "2 sessions older than 30d (dry run: nothing deleted)" in res.stdout
    assert keys(world) == {"cli:old-a", "cli:old-b", "cli:fresh"}


def test_prune_deletes_only_the_old_ones(world: Path) -> None:
    res = run_cli(world, "sessions", "prune", "--older-than", "30d", "--yes")
    assert res.returncode == 0, res.stderr
    assert "Deleted 2 of 2 sessions." in res.stdout
    assert keys(world) == {"cli:fresh"}
    for name in ("cli_old-a", "cli_old-b"):  # the file and its lock file
        assert list((world / "sessions").glob(f"{name}.*")) == []


def test_prune_asks_first(world: Path) -> None:
    declined = run_cli(world, "sessions", "prune", "--older-than", "30d", input="n\n")
    assert declined.returncode == 1
    assert keys(world) == {"cli:old-a", "cli:old-b", "cli:fresh"}
    agreed = run_cli(world, "sessions", "prune", "--older-than", "30d", input="y\n")
    assert agreed.returncode == 0, agreed.stderr
    assert keys(world) == {"cli:fresh"}


def test_prune_by_source(world: Path) -> None:
    res = run_cli(world, "sessions", "prune", "--older-than", "1w", "--source", "tui", "-y")
    assert res.returncode == 0, res.stderr
    assert keys(world) == {"cli:old-a", "cli:fresh"}


def test_a_session_open_in_another_process_is_kept(world: Path) -> None:
    held = SessionStore(world / "sessions").open("cli:old-a", create=False)
    try:
        dry = run_cli(world, "sessions", "prune", "--older-than", "30d", "--dry-run")
        assert "cli:old-a" in dry.stdout and "(in use: kept)" in dry.stdout
        res = run_cli(world, "sessions", "prune", "--older-than", "30d", "--yes")
    finally:
        held.close()
    assert res.returncode == 0, res.stderr
    assert "Deleted 1 of 2 sessions; 1 in use, kept." in res.stdout
    assert keys(world) == {"cli:old-a", "cli:fresh"}


@pytest.mark.parametrize("bad", ["30", "soon", "0d", "-1d", "1.5h"])
def test_a_bad_duration_is_a_usage_error(world: Path, bad: str) -> None:
    res = run_cli(world, "sessions", "prune", "--older-than", bad, "--yes")
    assert res.returncode == 2
    assert "picobot: --older-than: invalid duration" in res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    assert keys(world) == {"cli:old-a", "cli:old-b", "cli:fresh"}


def test_a_bad_source_is_a_usage_error(world: Path) -> None:
    res = run_cli(world, "sessions", "list", "--source", "acp")
    assert res.returncode == 2 and "unknown source 'acp'" in res.stderr


def test_agent_m_records_its_source_and_list_filters_by_it(picobot_home: Path) -> None:
    add(picobot_home, "cli:from-tui", None, source="tui")
    ran = run_cli(picobot_home, "agent", "-m", "hi", "--model", "demo")
    assert ran.returncode == 0, ran.stderr
    listed = [json.loads(line) for line in run_cli(picobot_home, "sessions", "list", "--json")
              .stdout.splitlines()]  # fmt: skip
    by_key = {e["key"]: e["source"] for e in listed}
    [headless] = [k for k in by_key if k != "cli:from-tui"]
    assert by_key == {"cli:from-tui": "tui", headless: "headless"}
    tui = run_cli(picobot_home, "sessions", "list", "--source", "tui")
    assert "cli:from-tui" in tui.stdout and headless not in tui.stdout
    assert headless in run_cli(picobot_home, "sessions", "list", "--source", "headless").stdout


def test_export_into_a_directory_uses_the_one_file_name(world: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports"
    out.mkdir()
    res = run_cli(world, "sessions", "export", "cli:fresh", "--out", str(out))
    assert res.returncode == 0, res.stderr
    path = out / "picobot-cli_fresh.md"  # export_filename's rule, as the TUI names it
    assert "hi from cli:fresh" in path.read_text(encoding="utf-8")
    assert f"wrote {path}" in res.stderr


def test_agent_json_records_json_and_counts_as_headless(picobot_home: Path) -> None:
    line = json.dumps({"type": "message", "content": "hi"}) + "\n"
    ran = run_cli(picobot_home, "agent", "--json", "--model", "demo", input=line)
    assert ran.returncode == 0, ran.stderr
    [entry] = [json.loads(x) for x in run_cli(picobot_home, "sessions", "list", "--json")
               .stdout.splitlines()]  # fmt: skip
    assert entry["source"] == "json"
    assert entry["key"] in run_cli(picobot_home, "sessions", "list", "--source", "headless").stdout
    assert "No tui sessions." in run_cli(picobot_home, "sessions", "list", "--source", "tui").stdout
