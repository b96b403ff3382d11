"""Plan mode through the console script, `-m --plan` and `--json --plan`: a scripted model
tries 300 calls per front end that would change something (files, commands, the todo list,
a fetch, a mutating tool of a real MCP server), mixed with calls that only read. Under
`--yes` (nothing asks) none of the changing calls runs, every reading one does, and the
workspace, the todo list and the checkpoints' shadow git are byte-identical afterwards.
The rest of the 1,000 changing calls: 300 through ACP (tests/acp/test_acp_plan.py), 100
through the TUI (tests/tui/test_plan_mode_tui.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core import plan_mode
from tests.headless.conftest import read_messages, run_cli, session_files
from tests.mcp.conftest import test_server_entry, write_mcp_config
from tests.support import plan_fuzz
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e

MUTATING = 300


def _home(home: Path, marker: Path) -> None:
    write_mcp_config(home, {"t": test_server_entry(marker)})
    config = json.loads((home / "config.json").read_text())
    config["agents"]["defaults"]["maxToolIterations"] = 100
    (home / "config.json").write_text(json.dumps(config))


def _finished(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in lines if e.get("type") == "tool_call_finished"}


@pytest.mark.parametrize("mode", ["-m", "--json"])
def test_no_call_that_changes_anything_runs_in_plan_mode(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path, mode: str
) -> None:
    marker = tmp_path / "mcp"
    _home(configured_home, marker)
    ws = plan_fuzz.workspace(configured_home / "workspace")
    checkpoints = configured_home / "data" / "checkpoints"
    # A change made before, so the shadow git exists and holds a checkpoint to compare.
    llm_server.script(
        [tool_call_reply("write_file", {"path": "before.txt", "content": "x\n"}), text_reply("ok")]
    )
    assert run_cli(configured_home, "agent", "--yes", "-m", "write").returncode == 0
    assert any(p.is_file() for p in checkpoints.rglob("*"))
    planned = plan_fuzz.calls(7 if mode == "-m" else 8, MUTATING, mcp=True)
    llm_server.script(plan_fuzz.script(planned))
    before = plan_fuzz.state(ws, checkpoints)
    args = ["agent", "--plan", "--yes"]
    if mode == "-m":
        res = run_cli(configured_home, *args, "-m", "plan it", "--output-format", "stream-json")
    else:
        line = json.dumps({"type": "message", "content": "plan it"}) + "\n"
        res = run_cli(configured_home, *args, "--json", input=line)
    assert res.returncode == 0, res.stderr
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    finished = _finished(lines)
    assert len(finished) == len(planned)
    assert sum(not plan_fuzz.is_read(c) for c in planned) == MUTATING
    ran = [c for c in planned if finished[c.id]["status"] != "denied"]
    assert ran == [c for c in planned if plan_fuzz.is_read(c)]  # every read, nothing else
    assert all(finished[c.id]["status"] == "ok" for c in ran)
    refused = [finished[c.id]["result"] for c in planned if not plan_fuzz.is_read(c)]
    assert refused and all(plan_mode.is_refusal(r) for r in refused)
    assert plan_fuzz.state(ws, checkpoints) == before
    assert not (marker / "call-echo").exists()  # the mutating MCP tool never ran
    assert (marker / "call-peek").exists()  # its readOnlyHint tool did
    last = [e for e in lines if e.get("type") == "turn_finished"][-1]
    assert (last["outcome"], last["content"]) == ("final", plan_fuzz.PLAN)
    key = last["session"]
    path = next(p for p in session_files(configured_home) if read_messages(p)[-1].get("plan"))
    assert key and path.exists()
    messages = read_messages(path)
    plans = [m for m in messages if m.get("plan")]
    assert [m["content"] for m in plans] == [plan_fuzz.PLAN]  # saved with the session


def test_without_plan_the_same_calls_run(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    """The control: the fuzz's changing calls do change things when plan mode is off."""
    ws = plan_fuzz.workspace(configured_home / "workspace")
    planned = [c for c in plan_fuzz.calls(3, 40) if c.name in ("write_file", "exec")][:5]
    llm_server.script(plan_fuzz.script(planned))
    before = plan_fuzz.state(ws)
    res = run_cli(configured_home, "agent", "--yes", "-m", "do it")
    assert res.returncode == 0, res.stderr
    assert plan_fuzz.state(ws) != before


def test_plan_read_only_lets_a_listed_tool_run(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    marker = tmp_path / "mcp"
    _home(configured_home, marker)
    config = json.loads((configured_home / "config.json").read_text())
    config["tools"]["planReadOnly"] = [plan_fuzz.MCP]
    (configured_home / "config.json").write_text(json.dumps(config))
    call = plan_fuzz.ToolCall(plan_fuzz.MCP, {"text": "listed"}, "c1")
    llm_server.script(plan_fuzz.script([call]))
    res = run_cli(configured_home, "agent", "--plan", "--yes", "-m", "x", "--output-format", "json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["tool_calls"][0]["status"] == "ok"
    assert (marker / "call-echo").read_text() == "listed"


def test_plan_read_only_refuses_a_file_tool(configured_home: Path) -> None:
    config = json.loads((configured_home / "config.json").read_text())
    config["tools"] = {"planReadOnly": ["exec"]}
    (configured_home / "config.json").write_text(json.dumps(config))
    res = run_cli(configured_home, "agent", "--plan", "-m", "x")
    assert res.returncode == 2
    assert "'exec' cannot run in plan mode" in res.stderr
    assert "Traceback" not in res.stderr


def test_the_plan_then_go_ahead_as_stderr_says(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    ws = configured_home / "workspace"
    write = tool_call_reply("write_file", {"path": "out.txt", "content": "done\n"})
    llm_server.script([write, text_reply(plan_fuzz.PLAN)])
    res = run_cli(configured_home, "agent", "--plan", "--yes", "-m", "plan it")
    assert (res.returncode, res.stdout) == (0, plan_fuzz.PLAN + "\n"), res.stderr
    assert not (ws / "out.txt").exists()
    hint = res.stderr.strip().splitlines()[-1]
    assert hint.startswith("picobot: plan mode: nothing was changed. To carry the plan out: ")
    command = hint.split("To carry the plan out: ", 1)[1]
    assert command.startswith("picobot agent -s ") and command.endswith('-m "go ahead"')
    session = command.split()[3]
    llm_server.script([write, text_reply("done")])
    res = run_cli(configured_home, "agent", "--yes", "-s", session, "-m", "go ahead")
    assert res.returncode == 0, res.stderr
    assert (ws / "out.txt").read_text() == "done\n"
    sent = llm_server.requests[-1].body["messages"]
    assert any(m["role"] == "assistant" and m.get("content") == plan_fuzz.PLAN for m in sent)
