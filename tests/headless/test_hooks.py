"""Hooks through the real console script, with real shell and Python hook commands
(tests/support/hook_script.py), for every event.

PreToolUse fails closed: exit 2 with and without stderr, exit 1, a missing interpreter, a
command that is not executable, a timeout and invalid JSON each block their call, every time
(three rounds), under `--yes`, an "always" rule, `approval: auto`, `readonly`, and `ask`
(`--json`: no approval is ever requested for a blocked call). `failOpen` lets a failing hook's
call run. The other events: what each hook receives (Claude Code's shape, scrubbed, the
clean environment, the workspace as cwd) and what its answer does.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import SECRET, read_messages, run_cli, session_files
from tests.headless.test_compaction_e2e import model as compaction_model
from tests.support.openai_server import (
    OpenAITestServer,
    ToolCall,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)

pytestmark = pytest.mark.e2e

HOOK = Path(__file__).resolve().parents[1] / "support" / "hook_script.py"


def py_hook(record: Path, *args: str) -> str:
    return shlex.join([sys.executable, str(HOOK), "--record", str(record), *args])


def entry(command: str, matcher: str = "", **extra: Any) -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}


def configure(home: Path, hooks: dict[str, Any], **tools: Any) -> None:
    path = home / "config.json"
    config = json.loads(path.read_text())
    config["hooks"] = hooks
    if tools:
        config["tools"] = tools
    path.write_text(json.dumps(config))


def recorded(record: Path, event: str) -> list[dict[str, Any]]:
    path = record / f"{event}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in stdout.splitlines() if x.strip()]


# -- PreToolUse fails closed ------------------------------------------------------------------

# tool -> (its call, the failure its matcher's hook has, what the blocked result says)
FAILURES: dict[str, tuple[dict[str, Any], str]] = {
    "exec": ({"command": "touch ran-exec"}, "exit 2, stderr"),
    "write_file": ({"path": "ran-write.txt", "content": "x"}, "exit 2, no stderr"),
    "edit_file": ({"path": "a.txt", "old_text": "alpha", "new_text": "x"}, "exit 1"),
    "todo": ({"action": "add", "text": "ran"}, "missing interpreter"),
    "list_dir": ({"path": "."}, "not executable"),
    "read_file": ({"path": "a.txt"}, "timeout"),
    "web_fetch": ({"url": "http://127.0.0.1:9/x"}, "invalid JSON"),
}
SAYS = {
    "exit 2, stderr": "no exec here",
    "exit 2, no stderr": "blocked by the PreToolUse hook",
    "exit 1": "exited 1: oops",
    "missing interpreter": "exited 127",
    "not executable": "exited 126",
    "timeout": "timed out after 0.5 s",
    "invalid JSON": "invalid JSON",
}
POLICIES = {
    "--yes": (["--yes"], {}),
    "always rule": ([], {"alwaysAllow": list(FAILURES)}),
    "auto": ([], {"approval": "auto"}),
    "readonly": ([], {"approval": "readonly"}),
    "ask": ([], {"approval": "ask"}),
}


def failing_hooks(tmp: Path, record: Path) -> list[dict[str, Any]]:
    noexec = tmp / "noexec.sh"
    noexec.write_text("#!/bin/sh\nexit 0\n")
    noexec.chmod(0o644)
    commands = {
        "exit 2, stderr": (py_hook(record, "--exit", "2", "--stderr", "no exec here"), {}),
        "exit 2, no stderr": ("cat >/dev/null; exit 2", {}),
        "exit 1": ("echo oops >&2; exit 1", {}),
        "missing interpreter": ("python9.99-not-installed hook.py", {}),
        "not executable": (shlex.quote(str(noexec)), {}),
        "timeout": (py_hook(record, "--sleep", "30"), {"timeout": 0.5}),
        "invalid JSON": ("echo '{\"decision\": '", {}),
    }
    out = []
    for tool, (_, failure) in FAILURES.items():
        command, extra = commands[failure]
        out.append(entry(command, f"{tool}", **extra))
    return out


@pytest.mark.parametrize("policy", list(POLICIES))
def test_every_failing_pre_tool_use_hook_blocks_under_every_policy(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path, policy: str
) -> None:
    ws = configured_home / "workspace"
    (ws / "a.txt").write_text("alpha\n")
    record = tmp_path / "record"
    flags, tools = POLICIES[policy]
    configure(configured_home, {"PreToolUse": failing_hooks(tmp_path, record)}, **tools)
    rounds = [
        tool_calls_reply([ToolCall(t, args, f"r{r}-{t}") for t, (args, _) in FAILURES.items()])
        for r in range(3)
    ]
    llm_server.script([*rounds, text_reply("done")])
    if policy == "ask":
        line = json.dumps({"type": "message", "content": "go"}) + "\n"
        res = run_cli(configured_home, "agent", "--json", input=line)
    else:
        res = run_cli(
            configured_home, "agent", *flags, "-m", "go", "--output-format", "stream-json"
        )
    assert res.returncode == 0, res.stderr
    out = events(res.stdout)
    assert not [e for e in out if e["type"] == "approval_requested"]  # never asked
    finished = {e["id"]: e for e in out if e["type"] == "tool_call_finished"}
    assert len(finished) == 3 * len(FAILURES)
    for r in range(3):
        for tool, (_, failure) in FAILURES.items():
            result = finished[f"r{r}-{tool}"]
            assert result["status"] == "denied", (tool, result)
            assert result["result"].startswith("Blocked by a hook:"), result
            assert SAYS[failure] in result["result"], (failure, result["result"])
    errors = [e for e in out if e["type"] == "error"]
    assert len(errors) == 3 * 5  # the five failures (not the two exit-2 blocks) are shown
    assert all(e["kind"] == "hook" for e in errors)
    assert not (ws / "ran-exec").exists() and not (ws / "ran-write.txt").exists()
    assert (ws / "a.txt").read_text() == "alpha\n" and not (ws / "TODO.md").exists()
    assert len(recorded(record, "PreToolUse")) == 3 * 2  # the two Python hooks, each round


def test_fail_open_lets_the_call_run_and_still_shows_the_failure(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    ws = configured_home / "workspace"
    configure(configured_home, {"PreToolUse": [entry("exit 1", "exec", failOpen=True)]})
    llm_server.script([tool_call_reply("exec", {"command": "touch ran"}), text_reply("ok")])
    res = run_cli(configured_home, "agent", "--yes", "-m", "go")
    assert res.returncode == 0, res.stderr
    assert (ws / "ran").exists()
    assert "PreToolUse hook `exit 1` exited 1" in res.stderr


def test_a_hook_that_exits_0_allows_and_a_json_deny_blocks(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    ws = configured_home / "workspace"
    record = tmp_path / "record"
    deny = json.dumps(
        {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "nope"}}
    )
    configure(
        configured_home,
        {
            "PreToolUse": [
                entry(py_hook(record), "exec|write_file"),
                entry(py_hook(record, "--stdout", deny), "write_file"),
            ]
        },
    )
    llm_server.script(
        [
            tool_calls_reply(
                [
                    ToolCall("exec", {"command": "touch ran"}, "e1"),
                    ToolCall("write_file", {"path": "w.txt", "content": "x"}, "w1"),
                ]
            ),
            text_reply("ok"),
        ]
    )
    res = run_cli(configured_home, "agent", "--yes", "-m", "go", "--output-format", "json")
    assert res.returncode == 0, res.stderr
    statuses = {c["id"]: c["status"] for c in json.loads(res.stdout)["tool_calls"]}
    assert statuses == {"e1": "ok", "w1": "denied"}
    assert (ws / "ran").exists() and not (ws / "w.txt").exists()
    seen = [r["input"] for r in recorded(record, "PreToolUse")]
    assert [(s["tool_name"], s["tool_use_id"]) for s in seen] == [
        ("exec", "e1"),
        ("write_file", "w1"),
        ("write_file", "w1"),
    ]
    first = seen[0]
    assert first["hook_event_name"] == "PreToolUse"
    assert first["tool_input"] == {"command": "touch ran"}
    assert first["cwd"] == str(ws.resolve()) and first["permission_mode"] == "default"
    assert first["session_id"] and first["transcript_path"].endswith(".jsonl")
    tool_messages = [m for m in llm_server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "nope" in tool_messages[-1]["content"]


# -- what the other events get and do --------------------------------------------------------


def test_post_tool_use_sees_the_scrubbed_result_and_its_exit_2_reaches_the_model(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    ws = configured_home / "workspace"
    (ws / "notes.txt").write_text(f"the key is {SECRET}\n")
    record = tmp_path / "record"
    hook = py_hook(record, "--exit", "2", "--stderr", "reviewed: mind the key")
    configure(configured_home, {"PostToolUse": [entry(hook, "read_file")]})
    llm_server.script([tool_call_reply("read_file", {"path": "notes.txt"}), text_reply("ok")])
    res = run_cli(
        configured_home, "agent", "--yes", "-m", "read it", MY_SERVICE_TOKEN="tok-" + "z" * 20
    )
    assert res.returncode == 0, res.stderr
    (seen,) = recorded(record, "PostToolUse")
    assert SECRET not in json.dumps(seen)
    response = seen["input"]["tool_response"]
    assert response["status"] == "ok" and "the key is" in response["output"]
    assert seen["cwd"] == str(ws.resolve())
    assert "MY_SERVICE_TOKEN" not in seen["env"] and "PICOBOT_PROJECT_DIR" in seen["env"]
    tool = [m for m in llm_server.requests[-1].body["messages"] if m["role"] == "tool"][-1]
    assert "PostToolUse hook: reviewed: mind the key" in tool["content"]
    assert SECRET not in json.dumps(llm_server.requests[-1].body)


def test_session_start_and_prompt_hooks_add_context_for_the_model(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    record = tmp_path / "record"
    extra = json.dumps({"hookSpecificOutput": {"additionalContext": "Ticket: PB-42"}})
    configure(
        configured_home,
        {
            "SessionStart": [entry(py_hook(record, "--stdout", "Always answer in French."))],
            "UserPromptSubmit": [entry(py_hook(record, "--stdout", extra))],
        },
    )
    llm_server.script([text_reply("ok"), text_reply("again")])
    assert run_cli(configured_home, "agent", "-m", "hello").returncode == 0
    sent = llm_server.requests[-1].body["messages"]
    system = [m["content"] for m in sent[1:] if m["role"] == "system"]
    assert system == [
        "SessionStart hook: Always answer in French.",
        "UserPromptSubmit hook: Ticket: PB-42",
    ]
    assert run_cli(configured_home, "agent", "-m", "more", "-s", "latest").returncode == 0
    sources = [r["input"]["source"] for r in recorded(record, "SessionStart")]
    assert sources == ["startup", "resume"]
    prompts = [r["input"]["prompt"] for r in recorded(record, "UserPromptSubmit")]
    assert prompts == ["hello", "more"]


@pytest.mark.parametrize("hook", ["exit 2", "echo broken >&2; exit 1"])
def test_a_blocking_or_failing_prompt_hook_keeps_the_message_from_the_model(
    configured_home: Path, llm_server: OpenAITestServer, hook: str
) -> None:
    configure(configured_home, {"UserPromptSubmit": [entry(f"cat >/dev/null; {hook}")]})
    res = run_cli(configured_home, "agent", "-m", "secret plans")
    assert res.returncode == 1
    assert "UserPromptSubmit hook" in res.stderr and "Traceback" not in res.stderr
    assert llm_server.completions == []
    stored = [m for f in session_files(configured_home) for m in read_messages(f)]
    assert not [m for m in stored if m.get("role") == "user"]


def test_a_stop_hook_sends_the_model_on_once(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    record = tmp_path / "record"
    hook = py_hook(record, "--exit", "2", "--stderr", "run the tests first", "--allow-when-active")
    configure(configured_home, {"Stop": [entry(hook)]})
    llm_server.script([text_reply("done"), text_reply("tests pass")])
    res = run_cli(configured_home, "agent", "-m", "fix it")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "tests pass\n"
    last = llm_server.requests[-1].body["messages"][-1]
    assert last == {"role": "user", "content": "run the tests first"}
    active = [r["input"]["stop_hook_active"] for r in recorded(record, "Stop")]
    assert active == [False, True]


def test_pre_compact_runs_before_a_compaction(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    record = tmp_path / "record"
    config = json.loads((configured_home / "config.json").read_text())
    config["agents"]["defaults"]["tokenBudget"] = 8000
    (configured_home / "config.json").write_text(json.dumps(config))
    configure(configured_home, {"PreCompact": [entry(py_hook(record))]})
    llm_server.default = compaction_model(ratio=2.0)  # real tokens at twice chars/4
    lines = "".join(
        json.dumps({"type": "message", "content": f"q{i} " + "w" * 1500}) + "\n" for i in range(10)
    )
    res = run_cli(configured_home, "agent", "--json", input=lines)
    assert res.returncode == 0, res.stderr
    compressed = [e for e in events(res.stdout) if e["type"] == "history_compressed"]
    seen = recorded(record, "PreCompact")
    assert compressed and len(seen) == len(compressed)
    assert seen[0]["input"]["trigger"] == "auto"


def test_project_hooks_run_in_a_trusted_workspace_and_a_bad_file_is_exit_2(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    ws = configured_home / "workspace"
    record = tmp_path / "record"
    (ws / ".picobot").mkdir()
    project = {"hooks": {"UserPromptSubmit": [entry(py_hook(record))]}}
    (ws / ".picobot" / "config.json").write_text(json.dumps(project))
    llm_server.script([text_reply("ok")])
    assert run_cli(configured_home, "agent", "-m", "hi").returncode == 0
    assert len(recorded(record, "UserPromptSubmit")) == 1
    (ws / ".picobot" / "config.json").write_text('{"hooks": {"PreToolUse": [{"hooks": []}]}}')
    res = run_cli(configured_home, "agent", "-m", "hi")
    assert res.returncode == 2
    assert ".picobot/config.json" in res.stderr and "hooks.preToolUse.0.hooks" in res.stderr
    assert "Traceback" not in res.stderr


def test_doctor_lists_the_hooks_and_warns_of_one_that_cannot_start(
    configured_home: Path, tmp_path: Path
) -> None:
    configure(
        configured_home,
        {
            "PreToolUse": [
                entry("python9.99-not-installed check.py", "exec"),
                entry("cat >/dev/null", "write_file", failOpen=True),
            ]
        },
    )
    res = run_cli(configured_home, "doctor")
    assert "hooks: 2 configured" in res.stdout
    assert "PreToolUse exec: python9.99-not-installed check.py (user, 60 s)" in res.stdout
    assert "(user, 60 s, failOpen)" in res.stdout
    assert "python9.99-not-installed: not found on PATH" in res.stdout
