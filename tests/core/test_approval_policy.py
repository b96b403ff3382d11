"""Who is asked, and about what: web_fetch per host (allowHosts, this host for the session,
readonly / auto), todo changes like file writes (reads free, symlinks refused), cross-host
redirects, and "always" saved to config.json."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.config.remember import persist_allow_host, persist_always_allow, remember_always
from picobot_tui.config.settings import Settings
from picobot_tui.core.approval import approval_needed, ask
from picobot_tui.core.events import ApprovalRequested, ToolCallFinished, event_to_dict
from picobot_tui.core.llm import scripted
from picobot_tui.core.llm.scripted import ScriptedModel
from picobot_tui.core.settings import ToolsConfig
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.hosts import host_allowed, normalize_host
from picobot_tui.core.tools.registry import default_registry
from picobot_tui.core.turn_state import SessionState
from picobot_tui.run.runtime import build_runtime
from tests.support.capture_site import CaptureSite


@pytest.fixture
def site() -> Iterator[CaptureSite]:
    with CaptureSite() as s:
        yield s


def _settings(ws: Path, approval: str = "ask", hosts: list[str] | None = None) -> Settings:
    s = Settings()
    s.agents.defaults.model = "scripted"
    s.agents.defaults.workspace = str(ws)
    s.tools.approval = approval  # type: ignore[assignment]
    s.tools.web.allow_private = True
    s.tools.web.allow_hosts = list(hosts or [])
    return s


async def _turn(settings: Settings, steps: list[Any], confirm=None):
    model = ScriptedModel(steps, default=scripted.text("done"))
    rt = build_runtime(settings, model="scripted", model_client=model, confirm=confirm)
    with rt.store.open(rt.store.new_key()) as session:
        events = [e async for e in rt.loop.run_turn(session, "go")]
    return events, rt


def _done(events: list[Any]) -> dict[str, ToolCallFinished]:
    return {e.id: e for e in events if isinstance(e, ToolCallFinished)}


# -- hosts ------------------------------------------------------------------------------------


def test_hosts_compare_exactly_ignoring_case_trailing_dot_and_brackets() -> None:
    assert normalize_host("[::1]") == "::1" and normalize_host("Example.COM.") == "example.com"
    assert host_allowed("EXAMPLE.com", ["example.com."])
    assert not host_allowed("api.example.com", ["example.com"])
    assert not host_allowed("example.com", [5, None, ""])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("approval", "hosts", "expected"),
    [
        ("ask", [], "ask"),
        ("ask", ["127.0.0.1"], "allow"),
        ("readonly", [], "readonly"),
        ("readonly", ["127.0.0.1"], "allow"),
        ("auto", [], "allow"),
    ],
)
def test_web_fetch_is_judged_per_host(tmp_path, approval, hosts, expected) -> None:
    s = _settings(tmp_path, approval, hosts)
    reg = default_registry(ToolContext(tmp_path, s.tools))
    args = {"url": "http://127.0.0.1:9/?d=secret"}
    assert reg.needs_approval("web_fetch", args)
    got = approval_needed(s, reg, "c1", "web_fetch", args, SessionState([]))
    if expected == "ask":
        assert isinstance(got, ApprovalRequested)
        assert (got.scope, got.host) == ("host", "127.0.0.1")
        assert "GET http://127.0.0.1:9/?d=secret" in got.preview
        d = event_to_dict(got)
        assert d["scope"] == "host" and d["host"] == "127.0.0.1" and d["full"] == d["preview"]
    else:
        assert got == expected


def test_a_url_web_fetch_refuses_anyway_needs_no_approval(tmp_path) -> None:
    reg = default_registry(ToolContext(tmp_path, ToolsConfig()))
    assert not reg.needs_approval("web_fetch", {"url": "file:///etc/passwd"})


async def test_allow_for_the_session_covers_that_host_only(tmp_path) -> None:
    s = _settings(tmp_path)
    reg = default_registry(ToolContext(tmp_path, s.tools))
    state = SessionState([])
    a = {"url": "http://127.0.0.1:9/a"}
    req = approval_needed(s, reg, "c1", "web_fetch", a, state)
    assert isinstance(req, ApprovalRequested)

    async def session(_: ApprovalRequested) -> str:
        return "allow_session"

    assert await ask(session, req, state) == "allow"
    assert state.allowed_hosts == {"127.0.0.1"} and not state.allowed_tools
    assert (
        approval_needed(s, reg, "c2", "web_fetch", {"url": "http://127.0.0.1:1/b"}, state)
        == "allow"
    )
    other = approval_needed(s, reg, "c3", "web_fetch", {"url": "http://localhost:9/"}, state)
    assert isinstance(other, ApprovalRequested) and other.host == "localhost"


async def test_the_loop_asks_about_the_host_and_a_denial_sends_nothing(tmp_path, site) -> None:
    url = f"http://127.0.0.1:{site.port}/?d=contents"
    asked: list[ApprovalRequested] = []

    async def deny(req: ApprovalRequested) -> str:
        asked.append(req)
        return "deny"

    steps = [scripted.tool_call("web_fetch", {"url": url}, call_id="w1")]
    events, _ = await _turn(_settings(tmp_path / "ws"), steps, confirm=deny)
    assert [r.host for r in asked] == ["127.0.0.1"]
    assert _done(events)["w1"].status == "denied" and not site.requests
    events, _ = await _turn(_settings(tmp_path / "ws", "readonly"), steps)
    assert _done(events)["w1"].status == "denied" and not site.requests
    events, _ = await _turn(_settings(tmp_path / "ws", "readonly", ["127.0.0.1"]), steps)
    assert _done(events)["w1"].ok and site.requests == ["/?d=contents"]


async def test_a_redirect_to_another_host_needs_its_own_call(tmp_path, site) -> None:
    port = site.port
    target = f"http://localhost:{port}/?d=stolen"
    url = f"http://127.0.0.1:{port}/redir?to={target}"
    steps = [scripted.tool_call("web_fetch", {"url": url}, call_id="w1")]
    events, _ = await _turn(_settings(tmp_path / "ws", "readonly", ["127.0.0.1"]), steps)
    result = _done(events)["w1"]
    assert not result.ok and "another host (localhost)" in result.result
    assert "/?d=stolen" not in site.requests and len(site.requests) == 1
    events, _ = await _turn(_settings(tmp_path / "ws", "auto"), steps)
    assert _done(events)["w1"].ok and site.requests[-1] == "/?d=stolen"


# -- todo ---------------------------------------------------------------------------------------


def test_todo_reads_need_no_approval_and_changes_do(tmp_path) -> None:
    reg = default_registry(ToolContext(tmp_path, ToolsConfig()))
    assert not reg.needs_approval("todo", {"action": "read"})
    for args in (
        {"action": "add", "text": "x"},
        {"action": "check", "index": 1},
        {"action": "uncheck", "index": 1},
        {"action": "remove", "index": 1},
        {"action": "write", "content": "x"},
    ):
        assert reg.needs_approval("todo", args), args
    (tmp_path / "TODO.md").write_text("# Plan\n- [ ] one\n")
    text = reg.preview("todo", {"action": "check", "index": 1})
    assert "-- a/TODO.md" in text and "-- [ ] one" in text and "+- [x] one" in text
    assert (tmp_path / "TODO.md").read_text() == "# Plan\n- [ ] one\n"  # a preview writes nothing


@pytest.mark.parametrize(
    "args",
    [{"action": "read"}, {"action": "add", "text": "x"}, {"action": "write", "content": "y"}],
)
async def test_todo_refuses_a_symlinked_todo_md_even_inside(tmp_path, args) -> None:
    (tmp_path / "Makefile").write_text("all:\n\techo build\n")
    (tmp_path / "TODO.md").symlink_to("Makefile")
    reg = default_registry(ToolContext(tmp_path, ToolsConfig()))
    result = await reg.execute("todo", args)
    assert not result.ok and "symbolic link" in result.content
    assert "symbolic link" in reg.preview("todo", args)
    assert (tmp_path / "Makefile").read_text() == "all:\n\techo build\n"
    assert (tmp_path / "TODO.md").is_symlink()


async def test_todo_changes_follow_the_policy_in_the_loop(tmp_path) -> None:
    ws = tmp_path / "ws"
    asked: list[str] = []

    async def deny(req: ApprovalRequested) -> str:
        asked.append(req.id)
        return "deny"

    steps = [
        scripted.tool_call("todo", {"action": "read"}, call_id="t1"),
        scripted.tool_call("todo", {"action": "add", "text": "x"}, call_id="t2"),
    ]
    events, _ = await _turn(_settings(ws), steps, confirm=deny)
    done = _done(events)
    assert asked == ["t2"] and done["t1"].ok and done["t2"].status == "denied"
    assert not (ws / "TODO.md").exists()
    events, _ = await _turn(_settings(ws, "readonly"), steps)
    assert _done(events)["t2"].status == "denied" and not (ws / "TODO.md").exists()


# -- "always" is saved ------------------------------------------------------------------------


def test_always_for_a_host_is_saved_keeping_other_keys(tmp_path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"tools": {"web": {"allow_hosts": ["a.example"]}, "approval": "ask"}})
    )
    persist_allow_host("b.example", path)
    persist_allow_host("b.example", path)
    assert json.loads(path.read_text()) == {
        "tools": {"web": {"allow_hosts": ["a.example", "b.example"]}, "approval": "ask"}
    }


def test_a_saved_config_is_private_when_new_and_keeps_its_mode_after(tmp_path) -> None:
    # config.json may hold API keys: a new one is 0600; a user's own chmod is kept.
    new = tmp_path / "new" / "config.json"
    persist_always_allow("exec", new)
    assert stat.S_IMODE(new.stat().st_mode) == 0o600
    assert json.loads(new.read_text()) == {"tools": {"alwaysAllow": ["exec"]}}
    new.chmod(0o640)
    persist_allow_host("a.example", new)
    assert stat.S_IMODE(new.stat().st_mode) == 0o640
    assert [p.name for p in new.parent.iterdir()] == ["config.json"]  # no temp left


def test_remember_always_saves_for_this_workspace_or_everywhere(tmp_path, picobot_home) -> None:
    s = _settings(tmp_path)
    ctx = ToolContext(tmp_path, s.tools)
    here = picobot_home / "permissions.json"
    # "everywhere": config.json, as before; the host, never the tool
    req = ApprovalRequested("c", "web_fetch", {}, "", scope="host", host="c.example")
    what, where = remember_always(s, ctx, req, "everywhere")
    assert where == picobot_home / "config.json" and "c.example" in what and "everywhere" in what
    assert json.loads(where.read_text()) == {"tools": {"web": {"allowHosts": ["c.example"]}}}
    assert s.tools.web.allow_hosts == ["c.example"] and "web_fetch" not in s.tools.always_allow
    assert not here.exists()
    # the default: this workspace only, in permissions.json and in the run's rules
    tool = ApprovalRequested("d", "write_file", {}, "")
    assert remember_always(s, ctx, tool) == ("write_file (in this workspace)", here)
    assert ctx.saved.tools == ["write_file"] and s.tools.always_allow == []
    # exec saves the offered rule, never the whole tool; no rule: nothing
    cmd = ApprovalRequested("e", "exec", {}, "", prefix="git status", rule="exec(git status:*)")
    assert "git status" in remember_always(s, ctx, cmd)[0]
    exact = ApprovalRequested("f", "exec", {}, "", rule="exec(ls -la)")
    assert remember_always(s, ctx, exact) == (
        "the exact command exec(ls -la) (in this workspace)",
        here,
    )
    assert remember_always(s, ctx, ApprovalRequested("g", "exec", {}, "")) is None
    assert ctx.saved.tools == ["write_file", "exec(git status:*)", "exec(ls -la)"]
    key = str(tmp_path.resolve())
    assert json.loads(here.read_text()) == {
        "version": 1,
        "workspaces": {key: {"alwaysAllow": ["write_file", "exec(git status:*)", "exec(ls -la)"]}},
    }
    assert stat.S_IMODE(here.stat().st_mode) == 0o600
    assert json.loads(where.read_text()) == {"tools": {"web": {"allowHosts": ["c.example"]}}}


@pytest.mark.parametrize(
    "url", ["http://ex\u200bample.com/", "http://a\u202eb.com/", "http://a b/"]
)
async def test_a_host_with_invisible_characters_is_refused_before_anything(tmp_path, url) -> None:
    reg = default_registry(ToolContext(tmp_path, ToolsConfig()))
    assert not reg.needs_approval("web_fetch", {"url": url})  # nothing could be sent
    result = await reg.execute("web_fetch", {"url": url})
    assert not result.ok and "invalid URL" in result.content


async def test_json_channel_decisions(tmp_path, picobot_home) -> None:
    import asyncio
    import io

    from picobot_tui.headless.json_protocol import JsonChannel

    out = io.StringIO()
    channel = JsonChannel(out, yes=False)
    channel.settings = _settings(tmp_path)
    channel.ctx = ToolContext(tmp_path, channel.settings.tools)
    got = []
    for decision in ("allow", "allow_session", "deny", "always"):
        req = ApprovalRequested("c1", "web_fetch", {}, "p", scope="host", host="h.example")
        task = asyncio.create_task(channel.confirm(req))
        while "c1" not in channel.pending:
            await asyncio.sleep(0)
        answer = {"type": "approval", "id": "c1", "decision": decision}
        if decision == "always":
            answer["scope"] = "everywhere"
        channel.handle_line(json.dumps(answer).encode())
        got.append(await task)
    assert got == ["allow", "allow_session", "deny", "always"]
    assert channel.settings.tools.web.allow_hosts == ["h.example"]
    saved = json.loads((picobot_home / "config.json").read_text())
    assert saved == {"tools": {"web": {"allowHosts": ["h.example"]}}}
    assert out.getvalue() == ""  # no protocol errors
