"""`picobot mcp list` and `picobot mcp call` through the installed console script, against
real MCP servers (mcp-server-time from PyPI, tests/mcp/echo_server.py) and no model."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import run_cli
from tests.mcp.conftest import TEST_SERVER
from tests.mcp.conftest import write_mcp_config as _write_mcp_config

ECHO_SERVER = Path(__file__).with_name("echo_server.py")
TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
ECHO = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
MISSING = {"command": "/nonexistent/picobot-test-mcp-server"}


def write_mcp_config(home: Path, servers: dict[str, Any], **tools: Any) -> None:
    # A bound on the wait for a loaded machine (2 cores, other suites), not a timing.
    _write_mcp_config(home, servers, **{"mcpConnectTimeout": 120, **tools})


@pytest.fixture
def home(picobot_home: Path) -> Path:
    (picobot_home / "config.json").write_text("{}")
    return picobot_home


def no_traceback(res: object) -> None:
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout  # type: ignore[attr-defined]


# -- list -------------------------------------------------------------------------------------
def test_list_with_no_servers_says_so_and_exits_0(home: Path) -> None:
    res = run_cli(home, "mcp", "list")
    assert res.returncode == 0, res.stderr
    assert "No MCP servers are configured" in res.stdout
    assert "tools.mcpServers" in res.stdout and str(home / "config.json") in res.stdout


def test_list_shows_each_server_and_exits_1_when_one_failed(home: Path) -> None:
    write_mcp_config(home, {"time": TIME, "gone": MISSING})
    res = run_cli(home, "mcp", "list")
    assert res.returncode == 1, res.stdout + res.stderr
    no_traceback(res)
    lines = res.stdout.splitlines()
    [time_line] = [line for line in lines if line.startswith("time ")]
    assert "stdio" in time_line and "trust ask" in time_line
    assert "connected in " in time_line and " ms, 2 tools" in time_line
    assert "  get_current_time  as mcp_time_get_current_time" in lines
    assert "  convert_time      as mcp_time_convert_time" in lines
    [gone_line] = [line for line in lines if line.startswith("gone ")]
    assert "failed: command not found: /nonexistent/picobot-test-mcp-server" in gone_line
    assert lines[-1] == "1 of 2 MCP servers connected."


# What `uvx mcp-server-time` behind a private CA does: the download fails its TLS check and
# the process exits. It prints the variables it was given, so the test sees them too.
TLS_FAILURE = """
import os, sys
for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "https_proxy", "NO_PROXY"):
    print(f"{name}={os.environ.get(name)}", file=sys.stderr)
print("error: invalid peer certificate: UnknownIssuer", file=sys.stderr)
sys.exit(2)
"""
PASSED = {
    "SSL_CERT_FILE": "/etc/corp/ca.pem",
    "REQUESTS_CA_BUNDLE": "/etc/corp/ca.pem",
    "https_proxy": "http://proxy.corp:3128",
    "NO_PROXY": "localhost,127.0.0.1",
}


def test_a_failed_server_shows_its_last_stderr_lines_and_keeps_tls_and_proxy_env(
    home: Path,
) -> None:
    """Issue 25, point 4: before, `MCPError: Connection closed` and one stderr line, and
    the server never got SSL_CERT_FILE (the cause of the TLS failure)."""
    write_mcp_config(home, {"uvx": {"command": sys.executable, "args": ["-c", TLS_FAILURE]}})
    res = run_cli(home, "mcp", "list", **PASSED)
    assert res.returncode == 1, res.stdout + res.stderr
    no_traceback(res)
    [line] = [line for line in res.stdout.splitlines() if line.startswith("uvx ")]
    assert "MCPError" not in line and "the server closed the connection" in line
    assert (
        "«https_proxy=http://proxy.corp:3128» / «NO_PROXY=localhost,127.0.0.1» / «error: " in line
    )
    assert "UnknownIssuer»" in line  # the last 3 lines, the cause last
    assert f"(all of it: {home / 'data' / 'logs' / 'picobot.log'})" in line
    log = (home / "data" / "logs" / "picobot.log").read_text()
    for name, value in PASSED.items():
        assert f"{name}={value}" in log  # the server had them


def test_list_exits_0_when_every_server_connected(home: Path) -> None:
    write_mcp_config(home, {"time": {**TIME, "trust": "auto", "enabledTools": ["convert_time"]}})
    res = run_cli(home, "mcp", "list")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "trust auto" in res.stdout and ", 1 tool, protocol 2026-07-28\n" in res.stdout
    assert "as mcp_time_convert_time" in res.stdout
    assert "get_current_time" not in res.stdout  # not in enabledTools: not offered
    assert res.stdout.splitlines()[-1] == "1 of 1 MCP server connected."


def test_list_names_enabled_tools_the_server_does_not_offer(home: Path) -> None:
    write_mcp_config(home, {"time": {**TIME, "enabledTools": ["convert_time", "get_tiem"]}})
    res = run_cli(home, "mcp", "list")
    assert res.returncode == 0, res.stderr
    assert "enabledTools names tools the server does not offer: get_tiem" in res.stdout


def test_the_servers_stderr_goes_to_the_log_file_and_to_stderr_with_logs(home: Path) -> None:
    write_mcp_config(home, {"echo": ECHO})
    args = ("mcp", "call", "echo", "env", "--args", '{"name": "NO_SUCH_VAR"}')
    res = run_cli(home, *args)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "NO_SUCH_VAR=(unset)\n"
    assert "echo server:" not in res.stderr  # the terminal gets the result, not the noise
    log = (home / "data" / "logs" / "picobot.log").read_text()
    assert "[echo stderr] echo server: NO_SUCH_VAR is (unset)" in log
    res = run_cli(home, *args, "--logs")
    assert "[echo stderr] echo server: NO_SUCH_VAR is (unset)" in res.stderr


# -- call -------------------------------------------------------------------------------------
def test_call_prints_the_result_the_model_would_read(home: Path) -> None:
    write_mcp_config(home, {"time": TIME, "gone": MISSING})  # only the named server starts
    res = run_cli(home, "mcp", "call", "time", "get_current_time", "--args", '{"timezone": "UTC"}')
    assert res.returncode == 0, res.stderr
    assert '"timezone": "UTC"' in res.stdout and '"day_of_week"' in res.stdout
    assert "gone" not in res.stderr
    # The model-facing name works too.
    res = run_cli(
        home, "mcp", "call", "time", "mcp_time_get_current_time", "--args", '{"timezone": "UTC"}'
    )
    assert res.returncode == 0 and '"timezone": "UTC"' in res.stdout


def test_call_of_an_error_result_prints_it_and_exits_1(home: Path) -> None:
    write_mcp_config(home, {"time": TIME, "echo": ECHO})
    res = run_cli(
        home, "mcp", "call", "time", "get_current_time", "--args", '{"timezone": "Mars/Base"}'
    )
    assert res.returncode == 1
    assert res.stdout.startswith("Error: ") and "Mars/Base" in res.stdout
    res = run_cli(home, "mcp", "call", "echo", "shout", "--args", '{"text": "hi"}')
    assert (res.returncode, res.stdout) == (1, "Error: no: hi\n")
    no_traceback(res)


def test_call_of_a_server_that_cannot_start_exits_1_with_the_reason(home: Path) -> None:
    write_mcp_config(home, {"gone": MISSING})
    res = run_cli(home, "mcp", "call", "gone", "anything")
    assert res.returncode == 1
    assert "MCP server `gone`: command not found: /nonexistent/picobot-test-mcp-server" in (
        res.stderr
    )
    no_traceback(res)


def test_call_result_is_cleaned_and_truncated_like_the_models(home: Path) -> None:
    noisy = {"command": sys.executable, "args": [str(TEST_SERVER)]}
    write_mcp_config(home, {"t": noisy}, toolResultMaxChars=200)
    res = run_cli(home, "mcp", "call", "t", "noisy", "--args", '{"size": 500}')
    assert res.returncode == 0, res.stderr
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert res.stdout.startswith("red ") and "truncated" in res.stdout
    assert res.stdout.count("x") < 300


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope", "x"], "no MCP server is named `nope` in tools.mcpServers; configured: `time`"),
        (
            ["time", "get_time"],
            "MCP server `time` has no tool `get_time`; its tools (enabledTools limits them): "
            "`convert_time`",
        ),
        # In the server's list, but not in enabledTools: unknown here as for the model.
        (["time", "get_current_time"], "has no tool `get_current_time`"),
        (["time", "convert_time", "--args", "{oops"], "--args is not valid JSON"),
        (["time", "convert_time", "--args", "[1, 2]"], "--args must be a JSON object {...}"),
        (
            ["time", "convert_time", "--args", '{"source_timezone": 3}'],
            "invalid arguments for mcp_time_convert_time",
        ),
    ],
)
def test_call_usage_errors_exit_2_with_a_clear_message(
    home: Path, argv: list[str], message: str
) -> None:
    write_mcp_config(home, {"time": {**TIME, "enabledTools": ["convert_time"]}})
    res = run_cli(home, "mcp", "call", *argv)
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stderr
    assert res.stderr.startswith("picobot: ")
    no_traceback(res)


def test_call_with_no_servers_configured_is_a_usage_error(home: Path) -> None:
    res = run_cli(home, "mcp", "call", "time", "get_current_time")
    assert res.returncode == 2 and "No MCP servers are configured" in res.stderr


def test_a_bad_config_is_exit_2_for_both_commands(home: Path) -> None:
    write_mcp_config(home, {"time": {"comand": "x"}})
    for argv in (["list"], ["call", "time", "x"]):
        res = run_cli(home, "mcp", *argv)
        assert res.returncode == 2
        assert "`tools.mcpServers.time.comand`: unknown key; did you mean `command`?" in res.stderr
        no_traceback(res)


def test_help_lists_the_mcp_commands(home: Path) -> None:
    res = run_cli(home, "--help")
    assert res.returncode == 0 and "mcp" in res.stdout
    res = run_cli(home, "mcp", "--help")
    assert res.returncode == 0 and "list" in res.stdout and "call" in res.stdout
    res = run_cli(home, "mcp")
    assert "list" in res.stdout + res.stderr and "Traceback" not in res.stderr


@pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("picobot") is None,
    reason="bash and the console script are needed",
)
def test_bash_completes_the_mcp_commands(home: Path) -> None:
    from tests.headless.test_shell_completion import in_bash

    script = (
        'eval "$(picobot --show-completion)"\n'
        "COMP_WORDS=(picobot mc); COMP_CWORD=1; _picobot_completion picobot\n"
        'printf "first:%s\\n" "${COMPREPLY[@]}"\n'
        "COMP_WORDS=(picobot mcp c); COMP_CWORD=2; _picobot_completion picobot\n"
        'printf "second:%s\\n" "${COMPREPLY[@]}"\n'
        "COMP_WORDS=(picobot mcp call time x --ar); COMP_CWORD=5; _picobot_completion picobot\n"
        'printf "third:%s\\n" "${COMPREPLY[@]}"\n'
    )
    res = in_bash(home, script, SHELL="/bin/bash")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "first:mcp" in lines and "second:call" in lines and "third:--args" in lines


def test_a_server_that_never_answers_is_reported_after_the_connect_timeout(home: Path) -> None:
    """`sleep` never answers the handshake: still connecting when the wait ends (exit 1)."""
    mute = {"command": "sleep", "args": ["600"]}
    write_mcp_config(home, {"mute": mute, "time": TIME}, mcpConnectTimeout=1)
    res = run_cli(home, "mcp", "list")
    assert res.returncode == 1
    [line] = [ln for ln in res.stdout.splitlines() if ln.startswith("mute ")]
    assert line.endswith("still connecting after 1 s (tools.mcpConnectTimeout)")
    res = run_cli(home, "mcp", "call", "mute", "anything")
    assert res.returncode == 1
    assert "MCP server `mute`: still connecting after 1 s" in res.stderr


def test_call_of_a_tool_that_times_out_or_kills_its_server_exits_1(home: Path) -> None:
    server = {"command": sys.executable, "args": [str(TEST_SERVER)], "toolTimeout": 0.5}
    write_mcp_config(home, {"t": server})
    res = run_cli(home, "mcp", "call", "t", "sleep", "--args", '{"seconds": 600}')
    assert res.returncode == 1
    assert res.stdout == (
        "Error: `sleep` on MCP server `t` did not answer within 0.5 s (toolTimeout); "
        "the call was cancelled\n"
    )
    res = run_cli(home, "mcp", "call", "t", "crash")
    assert res.returncode == 1
    assert res.stdout.startswith("Error: MCP server `t` closed the connection during `crash`")
    no_traceback(res)
