"""`picobot context` through the real console script: the instruction files of a monorepo
package with their paths and sizes, the tools with a real MCP server's (connected first),
the conversation of a session resumed by `-s latest`, tokens against the budget; the total
is the gauge's; a secret in a file is scrubbed; a bad session is exit 2, no traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.headless.conftest import SECRET, run_cli
from tests.mcp.conftest import write_mcp_config
from tests.mcp.test_mcp_cli import ECHO
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = pytest.mark.e2e


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "AGENTS.md").write_text("root rules\n")
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "CLAUDE.md").write_text(f"pkg rules, key {SECRET}\n")
    return pkg


def _rows(report: dict, group: str) -> list[dict]:
    return [r for r in report["rows"] if r["group"] == group]


def test_the_report_names_each_file_tool_and_the_conversation(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    pkg = _package(tmp_path)
    (pkg / "skills" / "tidy").mkdir(parents=True)
    (pkg / "skills" / "tidy" / "SKILL.md").write_text("---\nname: tidy\ndescription: d\n---\nx")
    write_mcp_config(configured_home, {"echo": ECHO}, mcpConnectTimeout=120)
    res = run_cli(configured_home, "context", "--workspace", str(pkg), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    prompt = {r["name"]: r for r in _rows(report, "prompt") if r["name"].endswith(".md")}
    root = pkg.parent.resolve()
    assert prompt["AGENTS.md"]["source"] == str(root / "AGENTS.md")
    assert prompt["AGENTS.md"]["size"] == len("root rules\n")
    assert prompt["CLAUDE.md"]["source"] == str(root / "pkg" / "CLAUDE.md")
    assert SECRET not in res.stdout
    tools = {r["name"]: r["source"] for r in _rows(report, "tools")}
    assert tools["read_file"] == "built-in" and tools["skill"] == "built-in"
    assert {r["name"]: r["source"] for r in _rows(report, "prompt")}["skills"] == "tidy"
    assert any(s == "MCP: echo" for s in tools.values()), tools
    assert all(r["tokens"] > 0 for r in _rows(report, "tools"))
    assert _rows(report, "conversation")[0]["tokens"] == 0
    # the gauge's total; the parts, each rounded up, come within a token each of it
    parts = sum(r["tokens"] for r in report["rows"])
    assert report["budget"] == 128_000 and abs(report["total"] - parts) <= len(report["rows"])

    text = run_cli(configured_home, "context", "--workspace", str(pkg))
    assert text.returncode == 0, text.stderr
    assert str(root / "pkg" / "CLAUDE.md") in text.stdout and "MCP: echo" in text.stdout
    assert "tokens of a 128,000 budget" in text.stdout and SECRET not in text.stdout


def test_a_session_counts_its_conversation(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    pkg = _package(tmp_path)
    llm_server.script([text_reply("an answer " * 200)])
    ran = run_cli(configured_home, "agent", "--workspace", str(pkg), "-m", "a question " * 50)
    assert ran.returncode == 0, ran.stderr
    before = json.loads(
        run_cli(configured_home, "context", "--workspace", str(pkg), "--json").stdout
    )
    res = run_cli(configured_home, "context", "--workspace", str(pkg), "-s", "latest", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    talk = _rows(report, "conversation")[0]
    assert talk["source"] == "2" and talk["tokens"] > 300  # the question and the answer
    assert report["total"] > before["total"] + 300


def test_an_unknown_session_is_a_usage_error(configured_home: Path) -> None:
    res = run_cli(configured_home, "context", "-s", "nope")
    assert res.returncode == 2
    assert res.stderr.startswith("picobot: no session") and "Traceback" not in res.stderr
