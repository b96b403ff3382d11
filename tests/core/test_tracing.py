"""Per-turn traces: one JSON line per turn, private files, scrubbed, never raising."""

from __future__ import annotations

import json
import logging
import os
import stat
from dataclasses import fields
from pathlib import Path

import pytest

from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.tracing import ToolTrace, Tracer, TurnTrace

KEY = "sk-test-0123456789abcdefghij"


def turn(n: int = 1, **kw) -> TurnTrace:
    base = dict(
        session="cli:abcd1234-20250101-120000",
        turn=n,
        model="openai/gpt-4o-mini",
        started="2025-01-01T12:00:00.000000Z",
        ended="2025-01-01T12:00:02.500000Z",
        duration_ms=2500.0,
        prompt_tokens=1200,
        completion_tokens=80,
        total_tokens=1280,
        cost=0.00023,
        tool_calls=[
            ToolTrace("call_1", "read_file", 12.5, True, "ok"),
            ToolTrace("call_2", "exec", 3.0, False, "denied"),
        ],
        retries=1,
        outcome="final",
        llm_calls=2,
    )
    base.update(kw)
    return TurnTrace(**base)


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_record_writes_one_line_per_turn_with_all_fields(tmp_path: Path) -> None:
    path = tmp_path / "data" / "traces" / "traces.jsonl"
    tracer = Tracer(path)
    tracer.record(turn(1))
    tracer.record(turn(2, outcome="error", error="provider said no", cost=None, tool_calls=[]))
    first, second = read_lines(path)
    assert set(first) == {f.name for f in fields(TurnTrace)}
    assert first["session"] == "cli:abcd1234-20250101-120000" and first["turn"] == 1
    assert first["model"] == "openai/gpt-4o-mini"
    assert (first["prompt_tokens"], first["completion_tokens"], first["total_tokens"]) == (
        1200,
        80,
        1280,
    )
    assert first["cost"] == 0.00023 and first["retries"] == 1 and first["llm_calls"] == 2
    assert first["duration_ms"] == 2500.0 and first["started"] < first["ended"]
    assert first["outcome"] == "final" and first["error"] is None
    assert first["tool_calls"] == [
        {"id": "call_1", "name": "read_file", "duration_ms": 12.5, "ok": True, "status": "ok"},
        {"id": "call_2", "name": "exec", "duration_ms": 3.0, "ok": False, "status": "denied"},
    ]
    assert second["turn"] == 2 and second["outcome"] == "error"
    assert second["cost"] is None and second["error"] == "provider said no"
    assert second["tool_calls"] == []


def test_file_and_dir_modes(tmp_path: Path) -> None:
    path = tmp_path / "home" / "data" / "traces" / "traces.jsonl"
    old = os.umask(0o022)
    try:
        Tracer(path).record(turn())
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for d in (path.parent, path.parent.parent, path.parent.parent.parent):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d


def test_existing_loose_file_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text("")
    os.chmod(path, 0o644)
    Tracer(path).record(turn())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(read_lines(path)) == 1


def test_scrub_is_applied_to_the_line(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    tracer = Tracer(path, scrub=Scrubber([KEY], include_env=False))
    tracer.record(turn(error=f"401: invalid api key {KEY}", model=f"x-{KEY}"))
    text = path.read_text()
    assert KEY not in text
    line = json.loads(text)
    assert line["error"] == "401: invalid api key [REDACTED]"
    assert line["model"] == "x-[REDACTED]"


def test_unicode_and_surrogates(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    Tracer(path).record(turn(error="Grüße ✓ \udc80"))
    assert json.loads(path.read_text())["error"].startswith("Grüße ✓")


def test_disk_errors_are_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the directory should be")
    with caplog.at_level(logging.WARNING, logger="picobot"):
        Tracer(blocker / "traces" / "traces.jsonl").record(turn())
        Tracer(tmp_path).record(turn())  # the path is a directory
    assert len([r for r in caplog.records if "could not write the trace" in r.message]) == 2


def test_bad_scrubber_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(_: str) -> str:
        raise RuntimeError("boom")

    with caplog.at_level(logging.WARNING, logger="picobot"):
        Tracer(tmp_path / "t.jsonl", scrub=broken).record(turn())
    assert any("could not serialise" in r.message for r in caplog.records)
    assert not (tmp_path / "t.jsonl").exists()
