"""A bad `tools.mcpServers` entry is a config error through the real console script: exit 2,
one line naming `tools.mcpServers.<name>` (the name as the user wrote it) and the key, no
traceback, before any server is started."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import run_cli

NAME = "My_Git"  # case and underscore kept: it is the user's name, not a field


def write_config(home: Path, tools: dict[str, Any]) -> Path:
    path = home / "config.json"
    path.write_text(json.dumps({"tools": tools}, indent=2))
    return path


def config_error(home: Path, *argv: str) -> str:
    res = run_cli(home, *argv)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert res.stderr.startswith("picobot: Invalid configuration:\n")
    return res.stderr


@pytest.mark.parametrize(
    ("entry", "key", "message"),
    [
        ({"args": ["server.py"]}, "", "is missing"),
        ({"type": "stdio", "args": ["x"]}, "", "`command` is missing"),
        ({"type": "sse"}, "", "`url` is missing: an sse server needs its address"),
        ({"comand": "uvx"}, ".comand", "unknown key; did you mean `command`?"),
        ({"command": "uvx", "enabledtools": []}, ".enabledtools", "did you mean `enabledTools`?"),
        (
            {"url": "ftp://127.0.0.1/mcp"},
            "",
            "`url` must be an http:// or https:// address, got 'ftp://127.0.0.1/mcp'",
        ),
        ({"url": "127.0.0.1:8931/mcp"}, "", "`url` must be an http:// or https:// address"),
        ({"command": "uvx", "url": "http://127.0.0.1/mcp"}, "", "not both"),
        ({"command": "uvx", "trust": "maybe"}, ".trust", "Input should be 'ask' or 'auto'"),
        ({"command": "uvx", "toolTimeout": 0}, ".toolTimeout", "Input should be greater than 0"),
        ({"command": "uvx", "type": "websocket"}, ".type", "Input should be 'stdio', 'http' or"),
        ({"command": "uvx", "env": {"TOKEN": 12}}, ".env.TOKEN", "Input should be a valid string"),
        ({"url": "http://127.0.0.1/mcp", "headers": []}, ".headers", "valid dictionary"),
        ("uvx mcp-server-time", "", "Input should be an object {...}"),
    ],
)
def test_a_bad_entry_is_exit_2_naming_the_server_and_the_key(
    picobot_home: Path, entry: Any, key: str, message: str
) -> None:
    write_config(picobot_home, {"mcpServers": {NAME: entry}})
    err = config_error(picobot_home, "agent", "-m", "hi", "--model", "demo")
    [line] = [ln for ln in err.splitlines() if f"`tools.mcpServers.{NAME}" in ln]
    assert f"`tools.mcpServers.{NAME}{key}`: " in line
    assert message in line
    assert "Value error" not in line  # pydantic's prefix is not for people
    assert "McpServerConfig" not in line  # nor our class names


def test_the_line_is_the_keys_own_under_its_server(picobot_home: Path) -> None:
    """Two servers with `trust`: the error points at the second one's line."""
    path = write_config(
        picobot_home,
        {
            "mcpServers": {
                "a": {"command": "x", "trust": "auto"},
                "b": {"command": "y", "trust": "no"},
            }
        },
    )
    err = config_error(picobot_home, "mcp", "list")
    bad = next(n for n, ln in enumerate(path.read_text().splitlines(), 1) if '"no"' in ln)
    assert f"{path}, line {bad}: `tools.mcpServers.b.trust`: Input should be" in err


def test_an_entry_from_the_environment_names_the_variable(picobot_home: Path) -> None:
    entry = json.dumps({NAME: {"command": "x", "tool_timeout": -1}})
    res = run_cli(picobot_home, "mcp", "list", PICOBOT_TOOLS__MCP_SERVERS=entry)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert (
        "environment variable PICOBOT_TOOLS__MCP_SERVERS: "
        f"`tools.mcpServers.{NAME}.toolTimeout`: Input should be greater than 0"
    ) in res.stderr
    # camelCase keys are taken in a variable's JSON too, as in the file.
    entry = json.dumps({NAME: {"command": sys.executable, "toolTimeout": 0}})
    res = run_cli(picobot_home, "mcp", "list", PICOBOT_TOOLS__MCP_SERVERS=entry)
    assert res.returncode == 2
    assert f"`tools.mcpServers.{NAME}.toolTimeout`: Input should be greater than 0" in res.stderr


def test_a_blank_server_name_and_a_bad_connect_timeout(picobot_home: Path) -> None:
    write_config(picobot_home, {"mcpServers": {" ": {"command": "x"}}, "mcpConnectTimeout": 0})
    err = config_error(picobot_home, "mcp", "call", "x", "y")
    assert "`tools.mcpServers`: an MCP server has an empty name" in err
    assert "`tools.mcpConnectTimeout`: Input should be greater than 0" in err


def test_every_front_end_refuses_it_before_starting_anything(picobot_home: Path) -> None:
    write_config(picobot_home, {"mcpServers": {NAME: {"comand": "x"}}})
    for argv in (["agent", "-m", "hi", "--model", "demo"], ["agent", "--json"], ["mcp", "list"]):
        err = config_error(picobot_home, *argv)
        assert f"`tools.mcpServers.{NAME}.comand`: unknown key" in err
    assert not (picobot_home / "sessions").exists() or not any(
        (picobot_home / "sessions").glob("*.jsonl")
    )


def test_the_docs_example_is_a_valid_config(picobot_home: Path) -> None:
    """The first jsonc block of docs/mcp.md loads with no warning, as documented."""
    import re

    from picobot_tui.config.settings import load_settings

    doc = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text()
    match = re.search(r"```jsonc\n(.*?)```", doc, re.S)
    assert match, "the section has no config example"
    (picobot_home / "config.json").write_text(match.group(1))
    settings, warnings = load_settings()
    assert warnings == []
    servers = settings.tools.mcp_servers
    transports = {name: s.transport for name, s in servers.items()}
    assert transports == {"time": "stdio", "git": "stdio", "notes": "http", "legacy": "sse"}
    assert servers["time"].trust == "auto" and servers["git"].tool_timeout == 30
    assert servers["git"].enabled_tools == ["git_status", "git_diff", "git_log"]
