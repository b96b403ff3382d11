"""`--ephemeral` through the console script: a run that calls a tool which writes a file
(a checkpoint), traces a turn and logs, leaves the picobot home exactly as it found it (a
tree listing before and after), `-m` and `--json` alike, while `--logs` still shows the log
on stderr and the private scratch folder is gone afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.headless.conftest import run_cli
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e


def tree(root: Path) -> list[tuple[str, int, int]]:
    """Every path under `root` with its size and modification time."""
    return sorted(
        (str(p.relative_to(root)), p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in root.rglob("*")
    )


def script(llm: OpenAITestServer) -> None:
    llm.script(
        [
            tool_call_reply("write_file", {"path": "out.txt", "content": "written\n"}),
            text_reply("done"),
        ]
    )


@pytest.mark.parametrize("mode", ["-m", "--json"])
def test_an_ephemeral_run_leaves_the_home_as_it_found_it(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path, mode: str
) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    args = ["agent", "--workspace", str(ws), "--yes", "--logs"]

    def run(*extra: str) -> str:
        if mode == "-m":
            res = run_cli(configured_home, *args, "-m", "write it", *extra, TMPDIR=str(scratch))
            assert (res.returncode, res.stdout) == (0, "done\n"), res.stderr
        else:
            line = json.dumps({"type": "message", "content": "write it"}) + "\n"
            res = run_cli(configured_home, *args, "--json", *extra, input=line, TMPDIR=str(scratch))
            assert res.returncode == 0, res.stderr
            assert json.loads(res.stdout.splitlines()[-1])["outcome"] == "final"
        return res.stderr

    before = tree(configured_home)
    script(llm_server)
    stderr = run("--ephemeral")
    assert (ws / "out.txt").read_text() == "written\n"  # the tool did run
    assert tree(configured_home) == before
    assert "INFO picobot.loop: turn 1" in stderr  # --logs: the log, on stderr only
    assert list(scratch.iterdir()) == []  # the scratch folder went with the run

    # The same run without --ephemeral keeps its session, trace, log and checkpoint.
    (ws / "out.txt").unlink()
    script(llm_server)
    run()
    made = {path for path, _, _ in tree(configured_home)} - {path for path, _, _ in before}
    assert {
        "data/traces/traces.jsonl",
        "data/logs/picobot.log",
        "sessions/index.jsonl",
    } <= made
    assert any(p.startswith("data/checkpoints/") for p in made)


def test_ephemeral_with_a_session_or_in_the_tui_is_refused(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    res = run_cli(configured_home, "agent", "-m", "hi", "--ephemeral", "-s", "latest")
    assert res.returncode == 2 and "don't combine it with --session" in res.stderr
    res = run_cli(configured_home, "agent", "--ephemeral")
    assert res.returncode == 2 and "--ephemeral does not apply to the TUI" in res.stderr
    assert not llm_server.completions


def test_an_ephemeral_json_result_names_no_session(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("gone")])
    res = run_cli(configured_home, "agent", "-m", "hi", "--ephemeral", "--output-format", "json")
    [result] = [json.loads(x) for x in res.stdout.splitlines()]
    assert (res.returncode, result["answer"], result["session"]) == (0, "gone", None)
    assert not (configured_home / "sessions").exists()
