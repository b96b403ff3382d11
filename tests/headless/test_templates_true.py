"""What the onboard templates put in the system prompt is true on this machine (issue 25,
point 7): USER.md's placeholder is never sent, and exec's sandbox is described as it is here
(the old TOOLS.md said "It is not a sandbox" everywhere), through the real console script
against the local OpenAI-compatible server."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core.settings import ExecConfig
from picobot_tui.core.tools.exec.sandbox import sandbox_status
from tests.headless.conftest import SECRET, run_cli
from tests.support.openai_server import OpenAITestServer, text_reply

OLD_USER_MD = (
    "# About the user\n\n"
    "(Write here what picobot should know about you: your role, languages, preferences.)\n"
)
OLD_TOOLS_MD = (
    "# Tool notes\n\n"
    "- `exec` runs shell commands in the workspace with a timeout. It is not a sandbox.\n"
    "- `web_fetch` reads public web pages (no local or private addresses).\n"
)


def _home(home: Path, server: OpenAITestServer, sandbox: str, templates: dict[str, str]) -> None:
    config = {
        "agents": {"defaults": {"model": "openai/test-model", "maxRetries": 0}},
        "providers": {"openai": {"apiKey": SECRET, "apiBase": server.url}},
        "tools": {"exec": {"sandbox": sandbox}},
    }
    (home / "config.json").write_text(json.dumps(config))
    for name, text in templates.items():
        (home / name).write_text(text)


def _ask(home: Path, server: OpenAITestServer) -> tuple[str, str]:
    """(the system prompt, exec's description) of one `agent -m` call."""
    server.script([text_reply("ok")])
    done = run_cli(home, "agent", "-m", "hi")
    assert done.returncode == 0, done.stderr
    body: Any = server.completions[-1].body
    system = body["messages"][0]["content"]
    if isinstance(system, list):  # content blocks
        system = "".join(part.get("text", "") for part in system)
    [exec_tool] = [t for t in body["tools"] if t["function"]["name"] == "exec"]
    return system, exec_tool["function"]["description"]


def _shipped() -> dict[str, str]:
    source = resources.files("picobot_tui") / "templates"
    return {name: (source / name).read_text() for name in ("AGENTS.md", "USER.md", "TOOLS.md")}


@pytest.mark.parametrize("templates", ["shipped now", "written by an older onboard"])
def test_no_placeholder_and_no_false_sandbox_claim_reach_the_model(
    picobot_home: Path, llm_server: OpenAITestServer, templates: str
) -> None:
    files = _shipped()
    if templates != "shipped now":
        files.update({"USER.md": OLD_USER_MD, "TOOLS.md": OLD_TOOLS_MD})
    _home(picobot_home, llm_server, "auto", files)
    system, described = _ask(picobot_home, llm_server)
    assert "Write here what picobot should know" not in system
    assert "USER.md" not in system  # nothing but a heading was left: the file is left out
    assert "not a sandbox" not in system
    assert "# TOOLS.md" in system and "web_fetch" in system  # the rest of it still goes
    assert "# AGENTS.md" in system
    if sandbox_status(ExecConfig(sandbox="auto")).active:
        assert "It runs in a bubblewrap sandbox, without network" in described, described
    else:
        assert "It runs unsandboxed here" in described, described


def test_unsandboxed_exec_says_so_and_a_user_md_with_content_goes_without_comments(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    user_md = "# About the user\n\n<!-- a note to myself -->\nI write Rust; answer briefly.\n"
    _home(picobot_home, llm_server, "none", {**_shipped(), "USER.md": user_md})
    system, described = _ask(picobot_home, llm_server)
    assert "It runs unsandboxed here" in described and "bubblewrap sandbox," not in described
    assert "I write Rust; answer briefly." in system and "a note to myself" not in system
