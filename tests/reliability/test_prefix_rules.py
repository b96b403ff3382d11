"""Attacks on exec's command-prefix rules through the real `picobot` console script (issue 15,
item 15): a rule `exec(git status:*)` in tools.alwaysAllow allows `git status …` and nothing
that merely starts with that text. Chaining (`;`, `&&`, `||`, `&`), substitutions (`$(…)`,
backticks, inside double quotes too), pipes, redirections, newlines, subshells, assignments
and comments are put to the user, which headless without a terminal refuses: no PWNED file
appears, and the model reads "Denied" for each. `--json` offers the prefix, "always" saves it
(for this workspace), a command with no reviewed prefix is offered as itself (saved
everywhere when asked so), and a deny's reason reaches the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.headless.conftest import run_cli
from tests.reliability.support import Proc, Router, write_config
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e

ATTACKS = {
    "a1": "git status; touch PWNED1",
    "a2": "git status && touch PWNED2",
    "a3": "git status || touch PWNED3",
    "a4": "git status & touch PWNED4",
    "a5": "git status $(touch PWNED5)",
    "a6": "git status `touch PWNED6`",
    "a7": 'git status "$(touch PWNED7)"',
    "a8": "git status | tee PWNED8",
    "a9": "git status > PWNED9",
    "a10": "git status 2>PWNED10",
    "a11": "git status\ntouch PWNED11",
    "a12": "git status #\ntouch PWNED12",
    "a13": "(git status; touch PWNED13)",
    "a14": "GIT_DIR=$(touch PWNED14) git status",
    "a15": "git status >>PWNED15",
    "a16": "git status\\\n; touch PWNED16",
    "a17": "  git status ;touch PWNED17",
    "a18": "git status$(touch PWNED18)",
}
ALLOWED = {
    "ok1": "git status --short",
    "ok2": "git 'status'",
    "ok3": "touch made_by_rule",
}


def _tool_results(bodies: list[dict]) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"] for m in bodies[-1]["messages"] if m.get("role") == "tool"
    }


def _home(tmp_path: Path, url: str, **tools: object) -> Path:
    home = tmp_path / "home"
    path = write_config(home, url, maxToolIterations=40)
    config = json.loads(path.read_text())
    config["tools"] = tools
    path.write_text(json.dumps(config))
    (home / "workspace").mkdir(exist_ok=True)
    return home


def test_a_stored_prefix_rule_never_allows_more_than_its_words(tmp_path) -> None:
    calls = {**ATTACKS, **ALLOWED}
    router = Router()
    router.add(
        "pr",
        [tool_call_reply("exec", {"command": c}, id=i) for i, c in calls.items()]
        + [text_reply("pr: done")],
    )
    with OpenAITestServer(default=router) as server:
        home = _home(
            tmp_path, server.url, alwaysAllow=["exec(git status:*)", "exec(touch made_by_rule)"]
        )
        done = run_cli(home, "agent", "-m", "pr: try them all")
    assert done.returncode == 0, done.stderr
    ws = home / "workspace"
    assert sorted(p.name for p in ws.glob("PWNED*")) == []
    assert (ws / "made_by_rule").exists()  # a matching rule really runs the command
    results = _tool_results(router.of("pr"))
    assert set(results) == set(calls)
    for call_id in ATTACKS:
        assert results[call_id].startswith("Denied"), (call_id, results[call_id])
    for call_id in ALLOWED:
        assert not results[call_id].startswith("Denied"), (call_id, results[call_id])
    assert done.stderr.count("no terminal to ask for approval") == len(ATTACKS)


def test_json_offers_the_prefix_always_saves_it_and_a_reason_reaches_the_model(tmp_path) -> None:
    router = Router()
    router.add(
        "jp",
        [
            tool_call_reply("exec", {"command": "git status -s"}, id="j1"),
            tool_call_reply("exec", {"command": "git status; touch PWNED"}, id="j2"),
            tool_call_reply("exec", {"command": "git status --short"}, id="j3"),
            tool_call_reply("exec", {"command": "sh -c 'touch ONCE'"}, id="j4"),
            text_reply("jp: done"),
        ],
    )
    reason = "no chained commands, please"
    with OpenAITestServer(default=router) as server:
        home = _home(tmp_path, server.url)
        p = Proc(home, ["agent", "--json"], stdin=True)

        def asked(n: int) -> dict:
            return p.wait_until(
                lambda: [e for e in p.events() if e["type"] == "approval_requested"][n - 1 :]
            )[0]

        try:
            p.send({"type": "message", "content": "jp: go"})
            first = asked(1)
            assert first["id"] == "j1" and first["prefix"] == "git status"
            assert first["rule"] == "exec(git status:*)" and first["note"] == ""
            p.send({"type": "approval", "id": "j1", "decision": "always"})
            second = asked(2)
            assert second["id"] == "j2"  # chained: asked although the rule is saved
            p.send({"type": "approval", "id": "j2", "decision": "allow", "reason": "x"})
            p.wait_until(lambda: any(e["type"] == "error" for e in p.events()))
            p.send({"type": "approval", "id": "j2", "decision": "deny", "reason": reason})
            fourth = asked(3)  # j3 ran without asking
            assert fourth["id"] == "j4" and fourth["prefix"] is None
            assert fourth["rule"] == "exec(sh -c 'touch ONCE')"  # no prefix: the exact command
            p.send({"type": "approval", "id": "j4", "decision": "always", "scope": "everywhere"})
            p.wait_until(lambda: any(e["type"] == "turn_finished" for e in p.events()))
            p.close_stdin()
            assert p.finish(timeout=60) == 0, p.stderr
        finally:
            if p.popen.poll() is None:
                p.popen.kill()
                p.finish()
    [err] = [e for e in p.events() if e["type"] == "error"]
    assert '"reason"' in err["message"] and err["kind"] == "protocol"
    results = _tool_results(router.of("jp"))
    assert results["j2"] == (
        f"Denied: the user did not allow this exec call. The user's reason: {reason}"
    )
    assert not results["j3"].startswith("Denied")
    # j1's rule is this workspace's, j4's exact command everywhere's
    here = json.loads((home / "permissions.json").read_text())
    key = str((home / "workspace").resolve())
    assert here == {"version": 1, "workspaces": {key: {"alwaysAllow": ["exec(git status:*)"]}}}
    saved = json.loads((home / "config.json").read_text())
    assert saved["tools"]["alwaysAllow"] == ["exec(sh -c 'touch ONCE')"]
    assert not (home / "workspace" / "PWNED").exists()
    assert (home / "workspace" / "ONCE").exists()  # j4 was allowed, as answered
