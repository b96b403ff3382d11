"""How a stdio server is started (issue 21, point 3): every way its program could be taken
from the workspace, refused unless its config names a `cwd` there; the private default cwd;
PYTHONSAFEPATH for `-m`/`-c`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from picobot_tui.core.mcp.launch import LaunchRefused, _cwd_on_sys_path, plan_stdio, safe_path
from picobot_tui.core.shapes.mcp_server import McpServerConfig


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with programs of its own: `server` at the top, `bin/mcp-ws-tool`, `.venv/bin/python3`."""
    folder = tmp_path / "ws"
    for rel in ("server", "bin/mcp-ws-tool", ".venv/bin/python3", "bin/mcp-shared"):
        exe = folder / rel
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text("#!/bin/sh\necho pwned\n")
        exe.chmod(0o755)
    return folder.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside" / "bin"
    folder.mkdir(parents=True)
    exe = folder / "mcp-shared"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return folder.resolve()


def plan(ws: Path, tmp_path: Path, **entry: object):
    return plan_stdio(McpServerConfig.model_validate(entry), ws, tmp_path / "home" / "data" / "mcp")


def refused(ws: Path, tmp_path: Path, **entry: object) -> str:
    with pytest.raises(LaunchRefused) as e:
        plan(ws, tmp_path, **entry)
    return str(e.value)


def test_no_cwd_means_a_private_folder_not_the_workspace(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ws)  # picobot's own current directory is the workspace
    os.umask(0)
    try:
        launch = plan(ws, tmp_path, command=sys.executable, args=["-m", "mcp_server_time"])
    finally:
        os.umask(0o022)
    assert launch.cwd == (tmp_path / "home" / "data" / "mcp").resolve()
    assert launch.cwd.stat().st_mode & 0o777 == 0o700
    assert not launch.explicit_cwd
    assert launch.command == sys.executable
    assert launch.env["PYTHONSAFEPATH"] == "1"


def test_a_private_folder_inside_the_workspace_is_not_used(tmp_path: Path) -> None:
    """`--workspace ~`: ~/.picobot/data/mcp is inside it, where the file tools could plant a
    `node_modules`; a fresh temporary folder (0700, the same for every server) is used."""
    home = tmp_path / "home"
    home.mkdir()
    config = McpServerConfig(command=sys.executable, args=["-m", "mcp_server_time"])
    first = plan_stdio(config, home, home / ".picobot" / "data" / "mcp")
    again = plan_stdio(config, home, home / ".picobot" / "data" / "mcp")
    assert not first.cwd.is_relative_to(home.resolve())
    assert first.cwd == again.cwd and list(first.cwd.iterdir()) == []
    assert first.cwd.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("command", ["./server", "bin/mcp-ws-tool", "server/../bin/tool"])
def test_a_relative_command_without_cwd_is_refused(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.chdir(ws)
    why = refused(ws, tmp_path, command=command)
    assert f"`command` {command!r} is a relative path and no `cwd` is set" in why


@pytest.mark.parametrize("entry", ["", ".", "bin", "./bin", "../ws/bin"])
def test_path_entries_that_mean_the_current_folder_are_dropped(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    """`tool` is only in the workspace's bin/; a PATH entry reaching it relatively (an empty
    one is the current folder) is dropped, so it is not found; the server's PATH keeps only
    absolute entries."""
    monkeypatch.chdir(ws / "bin" if entry in ("", ".") else ws)
    monkeypatch.setenv("PATH", f"{entry}{os.pathsep}/usr/bin{os.pathsep}/bin")
    assert refused(ws, tmp_path, command="mcp-ws-tool") == "command not found: mcp-ws-tool"
    launch = plan(ws, tmp_path, command="sh")
    assert launch.env["PATH"] == f"/usr/bin{os.pathsep}/bin"


def test_a_path_entry_inside_the_workspace_is_dropped(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: Path
) -> None:
    """An activated project venv or direnv's PATH_add: `python3` would be the workspace's.
    Found only there: refused, saying so; found outside too: the outside one."""
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(ws / ".venv/bin"), str(ws / "bin"), str(outside)])
    )
    why = refused(ws, tmp_path, command="python3")
    assert "is found only inside the workspace" in why and str(ws / ".venv/bin/python3") in why
    launch = plan(ws, tmp_path, command="mcp-shared")
    assert launch.command == str(outside / "mcp-shared")
    assert launch.env["PATH"] == str(outside)


def test_a_command_that_resolves_into_the_workspace_is_refused(
    ws: Path, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An absolute path into it, or a link outside pointing into it (named or on PATH)."""
    assert "inside the workspace" in refused(ws, tmp_path, command=str(ws / "server"))
    link = outside / "innocent"
    link.symlink_to(ws / "server")
    assert "inside the workspace" in refused(ws, tmp_path, command=str(link))
    monkeypatch.setenv("PATH", str(outside))
    assert "inside the workspace" in refused(ws, tmp_path, command="innocent")


def test_a_path_given_in_the_servers_env_is_filtered_too(ws: Path, tmp_path: Path) -> None:
    why = refused(ws, tmp_path, command="mcp-ws-tool", env={"PATH": f"{ws / 'bin'}:bin:"})
    assert "found only inside the workspace" in why
    launch = plan(ws, tmp_path, command="/bin/sh", env={"PATH": "bin::"})
    assert launch.env["PATH"] == os.defpath  # never empty: empty means the current folder


def test_an_explicit_cwd_in_the_workspace_allows_it(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cwd` relative to the workspace; inside it, the workspace's programs and PATH entries
    are the user's choice; no PYTHONSAFEPATH (`python -m` of the user's own package)."""
    monkeypatch.setenv("PATH", f"{ws / '.venv/bin'}:/usr/bin")
    launch = plan(ws, tmp_path, command="./server", cwd=".")
    assert (launch.command, launch.cwd, launch.explicit_cwd) == (str(ws / "server"), ws, True)
    tool = plan(ws, tmp_path, command="mcp-ws-tool", cwd="bin", env={"PATH": str(ws / "bin")})
    assert tool.command == str(ws / "bin" / "mcp-ws-tool")
    venv = plan(ws, tmp_path, command="python3", args=["-m", "x"], cwd=".")
    assert venv.command == str(ws / ".venv/bin/python3")
    assert "PYTHONSAFEPATH" not in venv.env


def test_an_explicit_cwd_outside_keeps_the_workspace_out(
    ws: Path, tmp_path: Path, outside: Path
) -> None:
    launch = plan(ws, tmp_path, command="./mcp-shared", cwd=str(outside))
    assert launch.command == str(outside / "mcp-shared") and launch.cwd == outside
    assert "inside the workspace" in refused(
        ws, tmp_path, command=str(ws / "server"), cwd=str(outside)
    )


def test_a_cwd_that_is_not_a_folder_is_refused(ws: Path, tmp_path: Path) -> None:
    assert "is not a folder that exists" in refused(ws, tmp_path, command="/bin/sh", cwd="nope")
    assert "is not a folder that exists" in refused(ws, tmp_path, command="/bin/sh", cwd="server")


def test_a_home_relative_command_is_expanded(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: Path
) -> None:
    monkeypatch.setenv("HOME", str(outside))
    assert plan(ws, tmp_path, command="~/mcp-shared").command == str(outside / "mcp-shared")


@pytest.mark.parametrize(
    ("args", "cwd_first"),
    [
        (["-m", "pkg"], True),
        (["-c", "import x"], True),
        (["-Im", "pkg"], True),
        (["-W", "error", "-m", "pkg"], True),
        (["-X", "dev", "-c", "x"], True),
        (["-Werror", "-u", "-m", "pkg"], True),
        (["--check-hash-based-pycs", "never", "-m", "pkg"], True),
        ([], True),
        (["-"], True),
        (["-u", "server.py", "-m"], False),
        (["/opt/s/server.py"], False),
        (["-W", "-m", "server.py"], False),  # -W takes `-m` as its value
        (["--", "server.py"], False),
    ],
)
def test_which_python_command_lines_put_the_cwd_on_sys_path(
    args: list[str], cwd_first: bool
) -> None:
    assert _cwd_on_sys_path(args) is cwd_first


def test_pythonsafepath_only_for_python_and_never_over_the_users_own(
    ws: Path, tmp_path: Path
) -> None:
    assert "PYTHONSAFEPATH" not in plan(ws, tmp_path, command="/bin/sh", args=["-c", "x"]).env
    assert "PYTHONSAFEPATH" not in plan(ws, tmp_path, command=sys.executable, args=["s.py"]).env
    mine = plan(ws, tmp_path, command=sys.executable, args=["-m", "x"], env={"PYTHONSAFEPATH": ""})
    assert mine.env["PYTHONSAFEPATH"] == ""


def test_a_path_entry_linked_into_the_workspace_is_dropped(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = tmp_path / "innocent-bin"
    link.symlink_to(ws / "bin")
    monkeypatch.setenv("PATH", f"{link}{os.pathsep}/usr/bin")
    assert "found only inside the workspace" in refused(ws, tmp_path, command="mcp-ws-tool")
    assert plan(ws, tmp_path, command="sh").env["PATH"] == "/usr/bin"


def test_safe_path_alone(ws: Path) -> None:
    value = os.pathsep.join(["", ".", "rel", "/usr/bin", str(ws), str(ws / "bin"), "/bin"])
    assert safe_path(value, ws, allow_workspace=False) == "/usr/bin:/bin"
    assert safe_path(value, ws, allow_workspace=True) == f"/usr/bin:{ws}:{ws / 'bin'}:/bin"


async def test_pythonsafepath_holds_even_if_the_private_folder_were_planted(
    picobot_home: Path, tmp_path: Path
) -> None:
    """A real `python -m mcp_server_time` with an `mcp_server_time.py` planted in its own
    (default) folder: PYTHONSAFEPATH keeps it off sys.path, the real server answers."""
    from picobot_tui.core.mcp.manager import McpManager

    planted = picobot_home / "data" / "mcp"
    planted.mkdir(parents=True)
    pwned = tmp_path / "pwned"
    (planted / "mcp_server_time.py").write_text(
        f"import pathlib\npathlib.Path({str(pwned)!r}).write_text('x')\nraise SystemExit(1)\n"
    )
    config = McpServerConfig(command=sys.executable, args=["-m", "mcp_server_time"])
    manager = McpManager(
        {"time": config}, workspace=tmp_path / "ws", registry=None, connect_timeout=60
    )
    (tmp_path / "ws").mkdir()
    try:
        assert await manager.wait_ready() == []
        [status] = manager.statuses()
    finally:
        await manager.close()
    assert status.state == "connected", status.error
    assert "get_current_time" in status.tools
    assert not pwned.exists()
