"""A rule saved in one project does not apply in another (issue 21, point 2), through the real
console script: "always" saves for the workspace (`<PICOBOT_HOME>/permissions.json`, keyed by
its resolved path), "everywhere" to config.json. A damaged permissions.json is said plainly,
its rules apply nowhere, and it is never overwritten."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.headless.conftest import run_cli
from tests.reliability.support import Proc, Router, write_config
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e


def _calls(case: str, calls: dict[str, str]) -> list:
    return [tool_call_reply("exec", {"command": c}, id=i) for i, c in calls.items()] + [
        text_reply(f"{case}: done")
    ]


def _results(bodies: list[dict]) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"]
        for body in bodies
        for m in body["messages"]
        if m.get("role") == "tool"
    }


def test_always_applies_in_its_workspace_and_everywhere_in_every_one(tmp_path) -> None:
    home = tmp_path / "home"
    a, b = tmp_path / "project-a", tmp_path / "project-b"
    for ws in (a, b):
        ws.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (tmp_path / "link-to-a").symlink_to(a)
    router = Router()
    router.add("sa", _calls("sa", {"s1": "git status --short", "s2": "git status", "s3": "ls"}))
    router.add("sb", _calls("sb", {"b1": "git status --short", "b2": "ls -la"}))
    router.add("sc", _calls("sc", {"c1": "git status --short", "c2": "ls -a"}))
    with OpenAITestServer(default=router) as server:
        write_config(home, server.url)
        # In A, over --json: "always" for git status (this workspace), "everywhere" for ls.
        p = Proc(home, ["agent", "--json", "--workspace", str(a)], stdin=True)

        def asked(n: int) -> dict:
            return p.wait_until(
                lambda: [e for e in p.events() if e["type"] == "approval_requested"][n - 1 :]
            )[0]

        try:
            p.send({"type": "message", "content": "sa: go"})
            assert asked(1)["id"] == "s1"
            p.send({"type": "approval", "id": "s1", "decision": "always"})
            assert asked(2)["id"] == "s3"  # s2 ran unasked: the rule applies in A at once
            p.send({"type": "approval", "id": "s3", "decision": "always", "scope": "everywhere"})
            p.wait_until(lambda: any(e["type"] == "turn_finished" for e in p.events()))
            p.close_stdin()
            assert p.finish(timeout=60) == 0, p.stderr
        finally:
            if p.popen.poll() is None:
                p.popen.kill()
                p.finish()
        # In B, headless with no terminal: A's rule does not apply there; the everywhere one does.
        in_b = run_cli(home, "agent", "--workspace", str(b), "-m", "sb: go")
        # Back in A, by a symlinked path, in a new process: A's rule applies (resolved path).
        in_a = run_cli(home, "agent", "--workspace", str(tmp_path / "link-to-a"), "-m", "sc: go")
    results = _results(router.of("sa")) | _results(router.of("sb")) | _results(router.of("sc"))
    assert results["b1"].startswith("Denied"), results["b1"]  # A's rule is not B's
    assert in_b.returncode == 0 and in_a.returncode == 0, in_b.stderr + in_a.stderr
    assert in_b.stderr.count("no terminal to ask for approval") == 1
    for call_id in ("s2", "b2", "c1", "c2"):
        assert not results[call_id].startswith("Denied"), (call_id, results[call_id])
    assert "no terminal" not in in_a.stderr
    offered = [e["rule"] for e in p.events() if e["type"] == "approval_requested"]
    assert offered == ["exec(git status:*)", "exec(ls:*)"]
    assert not [e for e in p.events() if e["type"] == "error"]
    saved = json.loads((home / "permissions.json").read_text())
    assert saved == {
        "version": 1,
        "workspaces": {str(a.resolve()): {"alwaysAllow": ["exec(git status:*)"]}},
    }
    config = json.loads((home / "config.json").read_text())
    assert config["tools"]["alwaysAllow"] == ["exec(ls:*)"]


def test_a_damaged_permissions_file_is_said_applies_nowhere_and_is_kept(tmp_path) -> None:
    """One damaged file through the console script; every shape is in
    tests/core/test_workspace_rules.py."""
    home = tmp_path / "home"
    ws = home / "workspace"
    router = Router()
    router.add("d", _calls("d", {"d1": "git status --short"}))
    with OpenAITestServer(default=router) as server:
        write_config(home, server.url)
        ws.mkdir()
        key = json.dumps(str(ws.resolve()))
        raw = f'{{"version": 1, "workspaces": {{{key}: {{"alwaysAllow": "exec(git status:*)"}}'
        (home / "permissions.json").write_text(raw)  # a string for a list, and cut short
        done = run_cli(home, "agent", "-m", "d: go")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "picobot: warning: " in done.stderr and "permissions.json cannot be read" in done.stderr
    assert "do not apply until it is fixed or removed" in done.stderr
    assert _results(router.of("d"))["d1"].startswith("Denied")  # asked, so refused here
    assert (home / "permissions.json").read_text() == raw


def test_the_terminal_prompt_says_why_a_rule_did_not_cover_and_offers_both_scopes(
    tmp_path,
) -> None:
    from tests.reliability.test_approval_truth import PtyProc

    home = tmp_path / "home"
    ws = home / "workspace"
    router = Router()
    calls = {"x1": "git log --output=w.txt", "x2": "git status --short", "x3": "git status"}
    router.add("tp", _calls("tp", calls))
    with OpenAITestServer(default=router) as server:
        path = write_config(home, server.url)
        config = json.loads(path.read_text())
        config["tools"] = {"alwaysAllow": ["exec(git log:*)"]}
        path.write_text(json.dumps(config))
        ws.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
        p = PtyProc(home, ["agent", "-m", "tp: go"])
        try:
            p.wait_until(lambda: b"[e]verywhere" in p.err)
            shown = bytes(p.err).decode()
            assert "note: not covered by exec(git log:*): --output=w.txt: writes" in shown
            assert "[a]lways: exactly this command in this workspace / [e]verywhere" in shown
            p.answer("n")
            p.wait_until(lambda: bytes(p.err).count(b"[e]verywhere") == 2)
            assert "[a]lways: commands starting with git status in this workspace" in (
                bytes(p.err).decode()
            )
            p.answer("e")
            assert p.finish(timeout=60) == 0, p.stderr
        finally:
            if p.popen.poll() is None:
                p.popen.kill()
                p.finish()
    results = _results(router.of("tp"))
    assert results["x1"].startswith("Denied") and not (ws / "w.txt").exists()
    assert not results["x2"].startswith("Denied") and not results["x3"].startswith("Denied")
    assert bytes(p.err).count(b"[e]verywhere") == 2  # x3 ran unasked
    saved = json.loads(path.read_text())["tools"]["alwaysAllow"]
    assert saved == ["exec(git log:*)", "exec(git status:*)"]
    assert not (home / "permissions.json").exists()
