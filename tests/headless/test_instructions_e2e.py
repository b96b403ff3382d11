"""Instruction files of a monorepo through the real console script and LiteLLM: started
in a package, the request's system prompt holds the repository root's AGENTS.md, then the
package's CLAUDE.md; a read under a folder with its own AGENTS.md carries it in the tool
result the next request sends, and the system prompt (the cached prefix) stays
byte-identical between the requests. A symlink out gives nothing (an untrusted workspace
reads none: tests/core/test_instructions.py; headless runs are trusted)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.headless.conftest import run_cli
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e


def _monorepo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "AGENTS.md").write_text("ROOT rules: run make test\n")
    api = root / "apps" / "api"
    (api / "src" / "handlers").mkdir(parents=True)
    (api / "CLAUDE.md").write_text("API rules: Python 3.11\n")
    (api / "src" / "handlers" / "AGENTS.md").write_text("HANDLERS rules: no globals\n")
    (api / "src" / "handlers" / "users.py").write_text("USERS = []\n")
    (tmp_path / "outside.txt").write_text("OUTSIDE secret\n")
    (api / "src" / "AGENTS.md").symlink_to(tmp_path / "outside.txt")
    return root


def test_a_package_workspace_gets_the_root_then_its_own_then_nested(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    api = _monorepo(tmp_path) / "apps" / "api"
    llm_server.script(
        [
            tool_call_reply("read_file", {"path": "src/handlers/users.py"}),
            tool_call_reply("read_file", {"path": "src/handlers/users.py"}, id="call_2"),
            text_reply("done"),
        ]
    )
    res = run_cli(configured_home, "agent", "--workspace", str(api), "-m", "look")
    assert (res.returncode, res.stdout.strip()) == (0, "done"), res.stderr
    bodies = [r.body for r in llm_server.completions]
    assert len(bodies) == 3
    system = bodies[0]["messages"][0]
    assert system["role"] == "system"
    text = system["content"] if isinstance(system["content"], str) else json.dumps(system)
    assert text.index("ROOT rules") < text.index("API rules")
    assert "HANDLERS rules" not in text and "OUTSIDE" not in text
    # the cached prefix is the same in every request of the turn
    assert all(b["messages"][0] == system for b in bodies[1:])
    tools = [[m for m in b["messages"] if m["role"] == "tool"] for b in bodies[1:]]
    first = tools[0][0]["content"]
    assert first.startswith("USERS = []")
    assert "[instructions for the files under src/handlers/" in first
    assert "HANDLERS rules: no globals" in first and "OUTSIDE" not in first
    second = tools[1][1]["content"]  # the same folder again: once per session
    assert "HANDLERS rules" not in second and second.startswith("USERS = []")
