"""Skills through the real console script and LiteLLM: only names and descriptions are in
the prompt; the model loads one with the `skill` tool and its body is the result; a skill
with `disable-model-invocation` is neither listed nor loadable; the folders other agents
use (.agents/skills, .claude/skills) are found; with no skill there is no `skill` tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.headless.conftest import run_cli
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e


def _skill(folder: Path, name: str, description: str, body: str, extra: str = "") -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"
    )


def _tool_names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_the_model_loads_a_skill_by_name(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    _skill(ws / ".claude" / "skills", "review", "review a change", "REVIEW-BODY: read the diff")
    _skill(ws / ".agents" / "skills", "release", "cut a release", "RELEASE-BODY")
    _skill(ws / "skills", "wipe", "user only", "WIPE-BODY", "disable-model-invocation: true\n")
    llm_server.script(
        [
            tool_call_reply("skill", {"name": "review"}),
            tool_call_reply("skill", {"name": "wipe"}, id="call_2"),
            text_reply("done"),
        ]
    )
    res = run_cli(configured_home, "agent", "--workspace", str(ws), "-m", "review it")
    assert (res.returncode, res.stdout.strip()) == (0, "done"), res.stderr
    first, second, third = (r.body for r in llm_server.completions)
    system = json.dumps(first["messages"][0])
    assert "- review: review a change" in system and "- release: cut a release" in system
    assert "REVIEW-BODY" not in system and "wipe" not in system
    assert "skill" in _tool_names(first)
    loaded = [m for m in second["messages"] if m["role"] == "tool"][-1]["content"]
    assert loaded == "# Skill: review\nREVIEW-BODY: read the diff"
    refused = [m for m in third["messages"] if m["role"] == "tool"][-1]["content"]
    assert "no skill named 'wipe'" in refused and "WIPE-BODY" not in refused
    assert first["messages"][0] == third["messages"][0]  # the prefix holds across the turn


def test_no_skill_no_skill_tool(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    llm_server.script([text_reply("done")])
    res = run_cli(configured_home, "agent", "--workspace", str(ws), "-m", "hi")
    assert res.returncode == 0, res.stderr
    body = llm_server.completions[0].body
    assert "skill" not in _tool_names(body) and "read_file" in _tool_names(body)


def test_a_custom_command_and_a_user_only_skill_run_headless(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / ".picobot" / "commands").mkdir(parents=True)
    (ws / ".picobot" / "commands" / "review.md").write_text(
        "---\ndescription: review a path\nmodel: openai/review-model\n---\n"
        "Review $ARGUMENTS and list the risks.\n"
    )
    _skill(ws / "skills", "wipe", "user only", "WIPE-BODY", "disable-model-invocation: true\n")
    llm_server.script([text_reply("reviewed"), text_reply("wiped")])
    res = run_cli(configured_home, "agent", "--workspace", str(ws), "-m", "/review src/")
    assert (res.returncode, res.stdout.strip()) == (0, "reviewed"), res.stderr
    body = llm_server.completions[0].body
    assert body["model"] == "review-model"  # the command's model, through LiteLLM
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    assert user.startswith("Review src/ and list the risks.")
    res = run_cli(configured_home, "agent", "--workspace", str(ws), "-m", "/wipe the cache")
    assert (res.returncode, res.stdout.strip()) == (0, "wiped"), res.stderr
    body = llm_server.completions[1].body
    assert body["model"] == "test-model"  # the configured one again
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    assert user.startswith("WIPE-BODY\n\nthe cache")
