"""Every headless e2e call both ways: tests/headless, run once through the worker servers
and once cold, compared call by call (issue 23's differential).

The run itself is `--slow` (~3 + ~10 minutes on two cores, cold the longer); the comparer's
own tests below run always, so a comparer that cannot fail is caught at once. Other folders
compare the same way by hand: `pytest --record-calls DIR FOLDER` twice, then
scripts/compare_calls.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.compare_calls import compare, normalise

FOLDERS = ("tests/headless",)
ROOT = Path(__file__).resolve().parents[2]


def _entry(**over: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "test": "tests/headless/test_x.py::test_y",
        "n": 1,
        "route": "warm",
        "argv": ["agent", "-m", "hi"],
        "exit": 0,
        "stdout": "hello\n",
        "stderr": "",
        "home": {},
        "cwd": {},
    }
    entry.update(over)
    return entry


def _write(directory: Path, entries: list[dict[str, Any]], served: int) -> Path:
    directory.mkdir(parents=True)
    with open(directory / "gw0.jsonl", "w") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")
    (directory / "served-gw0.json").write_text(json.dumps({"served": served}))
    return directory


def test_the_comparer_names_what_differs_and_passes_what_is_the_same(tmp_path: Path) -> None:
    cold = _write(tmp_path / "cold", [_entry(route="cold")], 0)
    same = _write(tmp_path / "same", [_entry()], 1)
    assert compare(same, cold) == ([], {"calls": 1, "routed_warm": 1, "served": 1})
    other = _write(tmp_path / "other", [_entry(stderr="Traceback (most recent call last)\n")], 1)
    problems, _ = compare(other, cold)
    assert len(problems) == 1 and "+Traceback" in problems[0] and "stderr" in problems[0]
    files = _write(tmp_path / "files", [_entry(home={"out.txt": "warm"})], 1)
    [problem], _ = compare(files, cold)
    assert "out.txt" in problem


def test_the_comparer_fails_a_warm_run_no_server_ran_and_a_missing_call(
    tmp_path: Path,
) -> None:
    cold = _write(tmp_path / "cold", [_entry(route="cold"), _entry(route="cold", n=2)], 0)
    warm = _write(tmp_path / "warm", [_entry()], 0)
    problems, _ = compare(warm, cold)
    assert any("only in the cold run" in p for p in problems)
    assert any("ran no call" in p for p in problems)


def test_ids_times_and_folders_are_named_alike_and_a_forks_parent_stays_its_parent() -> None:
    def session(a: str, b: str, port: int, when: str) -> dict[str, Any]:
        index = f'{{"key":"cli:{a}-20261207-010203"}}\n{{"key":"cli:{b}-20261207-010204"}}\n'
        return _entry(
            stdout=f"forked cli:{b}-20261207-010204 from cli:{a}-20261207-010203 at {when}\n",
            home={
                "sessions/index.jsonl": index,
                f"sessions/cli_{b}-20261207-010204.jsonl": f'{{"parent":"cli:{a}-20261207-010203"}}',
                "config.json": f'{{"apiBase": "http://127.0.0.1:{port}/v1"}}',
            },
            cwd={"/tmp/pytest-of-root/pytest-12/popen-gw1/t0/x": "1"},
        )

    one = normalise(session("aaaaaaaa", "bbbbbbbb", 4000, "2026-12-07T01:02:03Z"))
    two = normalise(session("cccccccc", "dddddddd", 5000, "2026-12-08T09:08:07Z"))
    assert one == two
    # Named in the order the index made them: the fork's parent is the first session.
    assert one["home"]["sessions/cli_<ID0.2>.jsonl"] == '{"parent":"cli:<ID0.1>"}'
    assert one["cwd"] == {"<TMP>/t/x": "1"}
    assert "127.0.0.1:<PORT>" in one["home"]["config.json"]
    # What is not a time, an id, a port or a temporary folder still differs.
    assert normalise(session("aaaaaaaa", "bbbbbbbb", 4000, "later"))["stdout"] != one["stdout"]


def test_a_protocol_error_may_come_before_or_during_a_turn_but_must_come() -> None:
    bad = '{"type": "error", "message": "invalid JSON line ignored", "kind": "protocol"}\n'
    turn = '{"type": "turn_started"}\n{"type": "text_delta", "text": "one"}\n'
    early, late = normalise(_entry(stdout=bad + turn)), normalise(_entry(stdout=turn + bad))
    assert early == late
    assert normalise(_entry(stdout=turn)) != late
    assert normalise(_entry(stdout=turn + bad.replace("ignored", "dropped"))) != late


@pytest.mark.slow
def test_every_headless_e2e_call_gives_the_same_output_warm_and_cold(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PICOBOT_"))}
    runs = {}
    for name, warm in (("warm", "1"), ("cold", "0")):
        out = tmp_path / name
        res = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            + ["--hypothesis-seed=7", "--record-calls", str(out), *FOLDERS],
            cwd=ROOT,
            env={**env, "PICOBOT_TEST_WARM": warm},
            capture_output=True,
            text=True,
            timeout=3600,
        )
        assert res.returncode == 0, f"the {name} run failed:\n{res.stdout[-5000:]}"
        runs[name] = out
    problems, counts = compare(runs["warm"], runs["cold"])
    assert problems == [], "\n".join(problems)[:20000]
    assert counts["served"] > 50 and counts["calls"] > 100, counts
