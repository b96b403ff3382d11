"""Workspace confinement: every file tool and exec refuse escapes with restrictToWorkspace on.

Layout (under tmp_path):
  ws/          the workspace: a.txt, sub/b.txt and symlinks
  ws2/         a sibling whose name has the workspace's name as a prefix
  outside/     a directory outside the workspace
  home/        $HOME for these tests
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from picobot_tui.core.settings import ExecConfig, ToolsConfig
from picobot_tui.core.tools.base import ToolContext, ToolError
from picobot_tui.core.tools.exec.guard import check_confined
from picobot_tui.core.tools.paths import display_path, resolve_in_workspace
from picobot_tui.core.tools.registry import default_registry

SECRET = "TOPSECRET"


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("inside\n")
    (ws / "sub" / "b.txt").write_text("inside b\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET} outside\n")
    ws2 = tmp_path / "ws2"
    ws2.mkdir()
    (ws2 / "secret.txt").write_text(f"{SECRET} sibling\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text(f"{SECRET} home\n")
    (ws / "link_out").symlink_to(outside)
    (ws / "link_file").symlink_to(outside / "secret.txt")
    (ws / "link_sib").symlink_to(ws2)
    (ws / "dangling").symlink_to(outside / "new.txt")
    (ws / "sub" / "up").symlink_to(Path("..") / ".." / "outside")
    (ws / "link_in").symlink_to(ws / "sub")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OUTSIDE_DIR", str(outside))
    return {"ws": ws, "outside": outside, "ws2": ws2, "home": home, "tmp": tmp_path}


def make_registry(ws: Path, restrict: bool = True):
    return default_registry(ToolContext(ws, ToolsConfig(restrict_to_workspace=restrict)))


def snapshot_outside(tmp: Path, ws: Path) -> dict[str, bytes | str]:
    """Every file and symlink under tmp_path except the workspace."""
    out: dict[str, bytes | str] = {}
    for root, dirs, files in os.walk(tmp):
        if Path(root) == ws or ws in Path(root).parents:
            dirs[:] = []
            continue
        for name in files + dirs:
            p = Path(root) / name
            if p.is_symlink():
                out[str(p)] = "-> " + os.readlink(p)
            elif p.is_file():
                out[str(p)] = p.read_bytes()
    return out


# Path arguments that must never reach outside the workspace. Each is a function of the layout.
ESCAPE_PATHS: dict[str, object] = {
    "dotdot": "../outside/secret.txt",
    "dotdot-deep": "../../../../../../etc/passwd",
    "dotdot-via-sub": "sub/../../outside/secret.txt",
    "dotdot-sibling": "./../ws2/secret.txt",
    "dotdot-bare": "..",
    "abs-etc": "/etc/passwd",
    "abs-root": "/",
    "abs-outside": lambda L: str(L["outside"] / "secret.txt"),
    "abs-sibling-prefix": lambda L: f"{L['ws']}2/secret.txt",
    "abs-ws-then-dotdot": lambda L: f"{L['ws']}/../outside/secret.txt",
    "abs-through-symlink": lambda L: f"{L['ws']}/link_out/secret.txt",
    "tilde": "~",
    "tilde-file": "~/secret.txt",
    "tilde-dotdot": "~/../outside/secret.txt",
    "env-home": "$HOME/secret.txt",
    "env-home-braces": "${HOME}/secret.txt",
    "env-other": "$OUTSIDE_DIR/secret.txt",
    "symlink-dir": "link_out/secret.txt",
    "symlink-dir-itself": "link_out",
    "symlink-file": "link_file",
    "symlink-sibling": "link_sib/secret.txt",
    "symlink-relative-up": "sub/up/secret.txt",
    "symlink-dangling": "dangling",
}


def _path(spec: object, layout: dict[str, Path]) -> str:
    return spec(layout) if callable(spec) else str(spec)  # type: ignore[operator]


def _args(tool: str, path: str) -> dict[str, str]:
    if tool == "write_file":
        return {"path": path, "content": "pwned\n"}
    if tool == "edit_file":
        return {"path": path, "old_text": SECRET, "new_text": "pwned"}
    return {"path": path}


@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file", "list_dir"])
@pytest.mark.parametrize("spec", list(ESCAPE_PATHS.values()), ids=list(ESCAPE_PATHS))
async def test_file_tool_escape_refused(layout, tool, spec):
    reg = make_registry(layout["ws"])
    before = snapshot_outside(layout["tmp"], layout["ws"])
    result = await reg.execute(tool, _args(tool, _path(spec, layout)))
    assert not result.ok
    assert result.status == "error"
    assert "outside the workspace" in result.content
    assert "restrictToWorkspace is on" in result.content
    assert SECRET not in result.content
    assert snapshot_outside(layout["tmp"], layout["ws"]) == before


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
@pytest.mark.parametrize("spec", ["link_file", "../outside/secret.txt", "dangling"])
def test_preview_refuses_escape(layout, tool, spec):
    reg = make_registry(layout["ws"])
    text = reg.preview(tool, _args(tool, spec))
    assert text.startswith("Error:")
    assert "outside the workspace" in text
    assert SECRET not in text


ESCAPE_COMMANDS: dict[str, object] = {
    "dotdot": "cat ../outside/secret.txt",
    "cd-dotdot-and": "cd .. && cat outside/secret.txt",
    "cd-dotdot-semi": "cd ..; cat outside/secret.txt",
    "redirect-in-dotdot": "cat <../outside/secret.txt",
    "tar-dotdot": "tar cf x.tar ../outside",
    "abs-etc": "cat /etc/passwd",
    "abs-root": "ls /",
    "abs-outside": lambda L: f"cat {L['outside']}/secret.txt",
    "abs-sibling-prefix": lambda L: f"cat {L['ws']}2/secret.txt",
    "abs-ws-dotdot": lambda L: f"cat {L['ws']}/../outside/secret.txt",
    "abs-write": lambda L: f"echo pwned > {L['outside']}/new.txt",
    "python-abs": "python3 -c \"print(open('/etc/passwd').read())\"",
    "tilde": "cat ~/secret.txt",
    "cd-tilde": "cd ~ && cat secret.txt",
    "cd-bare": "cd && cat secret.txt",
    "cd-dash": "cd - && ls",
    "env-home": "cat $HOME/secret.txt",
    "env-home-braces": "cat ${HOME}/secret.txt",
    "env-home-quoted": 'cat "$HOME/secret.txt"',
    "env-other": "cat $OUTSIDE_DIR/secret.txt",
    "subst-abs": "cat $(echo /etc/passwd)",
    "subst-dotdot": "cat $(cd ..; pwd)/outside/secret.txt",
    "backtick-tilde": "cat `echo ~`/secret.txt",
    "backtick-abs": lambda L: f"cat `echo {L['outside']}`/secret.txt",
    "symlink-dir": "cat link_out/secret.txt",
    "symlink-file": "cat link_file",
    "symlink-copy": "cp link_file stolen.txt",
    "symlink-sibling": "cat link_sib/secret.txt",
    "symlink-relative-up": "cat sub/up/secret.txt",
    "symlink-abs": lambda L: f"cat {L['ws']}/link_out/secret.txt",
}


@pytest.mark.parametrize("spec", list(ESCAPE_COMMANDS.values()), ids=list(ESCAPE_COMMANDS))
async def test_exec_escape_refused(layout, spec):
    reg = make_registry(layout["ws"])
    before = snapshot_outside(layout["tmp"], layout["ws"])
    result = await reg.execute("exec", {"command": _path(spec, layout)})
    assert not result.ok
    assert result.content.startswith("Error: command refused")
    assert "restrictToWorkspace is on" in result.content
    assert SECRET not in result.content
    assert not (layout["ws"] / "stolen.txt").exists()
    assert not (layout["ws"] / "x.tar").exists()
    assert snapshot_outside(layout["tmp"], layout["ws"]) == before


async def test_todo_symlinked_out_is_refused(layout):
    (layout["ws"] / "TODO.md").symlink_to(layout["outside"] / "secret.txt")
    reg = make_registry(layout["ws"])
    before = snapshot_outside(layout["tmp"], layout["ws"])
    for args in (
        {"action": "read"},
        {"action": "add", "text": "x"},
        {"action": "write", "content": ""},
    ):
        result = await reg.execute("todo", args)
        assert not result.ok
        assert "outside the workspace" in result.content
        assert SECRET not in result.content
    assert snapshot_outside(layout["tmp"], layout["ws"]) == before


# -- what stays allowed ----------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    ["a.txt", "./a.txt", "sub/../a.txt", "link_in/b.txt", lambda L: str(L["ws"] / "a.txt")],
    ids=["plain", "dot", "dotdot-inside", "symlink-inside", "absolute-inside"],
)
async def test_inside_paths_allowed(layout, spec):
    reg = make_registry(layout["ws"])
    result = await reg.execute("read_file", {"path": _path(spec, layout)})
    assert result.ok, result.content
    assert result.content.startswith("inside")


def test_workspace_itself_and_display(layout):
    ctx = ToolContext(layout["ws"], ToolsConfig())
    assert resolve_in_workspace(".", ctx) == layout["ws"].resolve()
    assert display_path(resolve_in_workspace("sub/b.txt", ctx), ctx) == "sub/b.txt"
    assert display_path(layout["ws"].resolve(), ctx) == "."


@pytest.mark.parametrize("bad", ["", "a\x00b"])
def test_resolve_rejects_empty_and_nul(layout, bad):
    ctx = ToolContext(layout["ws"], ToolsConfig())
    with pytest.raises(ToolError):
        resolve_in_workspace(bad, ctx)


def test_symlink_loop_is_a_tool_error(layout):
    (layout["ws"] / "loop").symlink_to(layout["ws"] / "loop")
    ctx = ToolContext(layout["ws"], ToolsConfig())
    # Either refused as unresolvable or resolved to itself inside the workspace: never a crash.
    try:
        assert resolve_in_workspace("loop/x", ctx).is_relative_to(layout["ws"].resolve())
    except ToolError as e:
        assert "loop" in str(e)


@pytest.mark.parametrize(
    "command",
    [
        "cat a.txt",
        "ls -la sub",
        "cat link_in/b.txt",
        "git log HEAD~1..HEAD",
        "echo hi > /dev/null 2>&1",
        "curl -s https://example.com/a/b",
        "export PATH=$PATH:./bin",
        "for f in *.txt; do echo $f; done",
        "echo $PWD",
    ],
)
def test_exec_guard_allows_ordinary_commands(layout, command):
    check_confined(command, layout["ws"].resolve())


async def test_exec_inside_by_absolute_path_runs(layout):
    reg = make_registry(layout["ws"])
    result = await reg.execute("exec", {"command": f"cat {layout['ws']}/a.txt"})
    assert result.ok, result.content
    assert "inside" in result.content


# -- restrictToWorkspace off: the same paths work ----------------------------------------


@pytest.mark.parametrize(
    "name",
    ["dotdot", "abs-outside", "abs-sibling-prefix", "tilde-file", "env-home", "symlink-file"],
)
async def test_restrict_off_allows_reading_outside(layout, name):
    reg = make_registry(layout["ws"], restrict=False)
    result = await reg.execute("read_file", {"path": _path(ESCAPE_PATHS[name], layout)})
    assert result.ok, result.content
    assert SECRET in result.content


async def test_restrict_off_allows_writing_outside(layout):
    reg = make_registry(layout["ws"], restrict=False)
    result = await reg.execute("write_file", {"path": "../outside/new.txt", "content": "x"})
    assert result.ok, result.content
    assert (layout["outside"] / "new.txt").read_text() == "x"


@pytest.mark.parametrize("name", ["dotdot", "env-home", "symlink-file", "abs-sibling-prefix"])
async def test_restrict_off_exec_can_leave(layout, name):
    # Unsandboxed: the sandbox hides these paths whatever the guard says
    # (tests/reliability/test_sandbox.py).
    tools = ToolsConfig(restrict_to_workspace=False, exec=ExecConfig(sandbox="none"))
    reg = default_registry(ToolContext(layout["ws"], tools))
    result = await reg.execute("exec", {"command": _path(ESCAPE_COMMANDS[name], layout)})
    assert result.ok, result.content
    assert SECRET in result.content


async def test_exec_quoted_workspace_path_with_spaces(tmp_path):
    ws = tmp_path / "My Projects" / "ws"
    ws.mkdir(parents=True)
    (ws / "a b.txt").write_text("spaced\n")
    (tmp_path / "My Projects" / "secret.txt").write_text(SECRET)
    reg = make_registry(ws)
    ok = await reg.execute("exec", {"command": f'cat "{ws}/a b.txt"'})
    assert ok.ok, ok.content
    assert "spaced" in ok.content
    for cmd in (
        f'cat "{ws}/../secret.txt"',
        f"cat '{ws.parent}/secret.txt'",
        f'cat "{ws}" /etc/passwd',
    ):
        r = await reg.execute("exec", {"command": cmd})
        assert not r.ok and "restrictToWorkspace" in r.content
        assert SECRET not in r.content
