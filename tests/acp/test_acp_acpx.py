"""End to end with a real ACP client from another ecosystem: acpx (npm `acpx`, pinned in
tests/acp/node, installed by .ci/run where npm exists) runs `picobot acp` as its agent
(`acpx --agent "picobot acp" exec ...`) against the local scripted model.

Skipped where Node or acpx is missing, except in CI (`CI=true`), where that is a failure, as
the sandbox tests are for bwrap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import cli_env
from tests.support.openai_steps import text_reply, tool_call_reply

NODE_DIR = Path(__file__).resolve().parent / "node"
ACPX = NODE_DIR / "node_modules" / ".bin" / "acpx"


def acpx_exe() -> Path:
    if shutil.which("node") and ACPX.exists():
        return ACPX
    if not shutil.which("node"):
        why = "Node is missing (acpx runs on it)"
    else:
        why = f"acpx is not installed: `npm install --prefix tests/acp/node --no-save` ({ACPX})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {why}; .ci/run installs acpx where npm exists")
    pytest.skip(why)


def run_acpx(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    acpx = acpx_exe()
    user_home = home / "acpx-home"  # acpx keeps its own state under ~/.acpx
    user_home.mkdir(exist_ok=True)
    return subprocess.run(
        [str(acpx), "--agent", "picobot acp", "--cwd", str(home / "workspace"), *args],
        cwd=home / "workspace",
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=cli_env(home, HOME=str(user_home)),
    )


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def chunks_text(messages: list[dict[str, Any]]) -> str:
    return "".join(
        m["params"]["update"]["content"].get("text", "")
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
    )


def test_acpx_exec_streams_the_answer(configured_home: Path, llm_server) -> None:
    llm_server.script([text_reply("Hello from picobot through acpx.", chunk_size=6)])
    proc = run_acpx(configured_home, "--format", "json", "exec", "say hello")
    assert proc.returncode == 0, proc.stderr[-3000:]
    messages = json_lines(proc.stdout)
    init = next(m for m in messages if m.get("id") == 0 and "result" in m)
    assert init["result"]["protocolVersion"] == 1
    assert chunks_text(messages) == "Hello from picobot through acpx."
    assert any(m.get("result", {}).get("stopReason") == "end_turn" for m in messages)
    assert "say hello" in json.dumps(llm_server.last_body["messages"])


def test_acpx_exec_text_output(configured_home: Path, llm_server) -> None:
    llm_server.script([text_reply("Plain text answer for acpx.")])
    proc = run_acpx(configured_home, "exec", "answer plainly")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Plain text answer for acpx." in proc.stdout


def test_acpx_approve_all_writes_through_the_client(configured_home: Path, llm_server) -> None:
    """acpx advertises fs.writeTextFile: the write goes through the client (fs/write_text_file),
    after a permission request acpx approves."""
    llm_server.script(
        [
            tool_call_reply(
                "write_file", {"path": "from-acpx.txt", "content": "written via acpx\n"}
            ),
            text_reply("File written."),
        ]
    )
    proc = run_acpx(configured_home, "--approve-all", "--format", "json", "exec", "write it")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (configured_home / "workspace" / "from-acpx.txt").read_text() == "written via acpx\n"
    messages = json_lines(proc.stdout)
    methods = [m.get("method") for m in messages]
    assert "session/request_permission" in methods
    assert "fs/write_text_file" in methods
    updates = [
        m["params"]["update"]
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"].get("sessionUpdate") in ("tool_call", "tool_call_update")
    ]
    assert updates and updates[0]["kind"] == "edit"
    assert updates[-1].get("status") == "completed"


def test_acpx_deny_all_leaves_the_file_alone(configured_home: Path, llm_server) -> None:
    llm_server.script(
        [
            tool_call_reply("write_file", {"path": "denied.txt", "content": "no\n"}),
            text_reply("Understood, not written."),
        ]
    )
    proc = run_acpx(configured_home, "--deny-all", "--format", "json", "exec", "write it")
    assert not (configured_home / "workspace" / "denied.txt").exists()
    messages = json_lines(proc.stdout)
    assert "fs/write_text_file" not in [m.get("method") for m in messages]
    assert "Understood, not written." in chunks_text(messages), proc.stderr[-3000:]
