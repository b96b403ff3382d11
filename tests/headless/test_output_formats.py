"""`-m --output-format json|stream-json` through the console script against the local
server: one result object (answer, session, outcome, usage with cache tokens, cost,
duration, tool calls, exit code), or the `--json` events of the one message and then it.
Every line is also checked against the schema by tests/support/protocol_tap.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import run_cli, session_files
from tests.support.openai_server import (
    OpenAITestServer,
    Reply,
    error,
    text_reply,
    tool_call_reply,
)

pytestmark = pytest.mark.e2e


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in stdout.splitlines()]


def script_with_a_tool(llm: OpenAITestServer) -> None:
    cached = Reply(text_reply("two files").deltas, usage=(100, 7), cached=60)
    llm.script([tool_call_reply("list_dir", {"path": "."}, usage=(40, 5)), cached])


def test_json_prints_one_result_object(configured_home: Path, llm_server: OpenAITestServer) -> None:
    script_with_a_tool(llm_server)
    res = run_cli(configured_home, "agent", "-m", "what is here?", "--output-format", "json")
    assert res.returncode == 0, res.stderr
    [result] = lines(res.stdout)
    [session] = session_files(configured_home)
    assert session.stem.replace("_", ":", 1) == result["session"]
    assert result["type"] == "result" and result["protocol"] == 1
    assert (result["outcome"], result["exit_code"], result["answer"]) == ("final", 0, "two files")
    assert result["usage"] == {
        "prompt_tokens": 140,
        "completion_tokens": 12,
        "total_tokens": 152,
        "cache_read_tokens": 60,
        "cache_write_tokens": 0,
        "model_calls": 2,
        "estimated": False,
    }
    [call] = result["tool_calls"]
    assert (call["name"], call["status"]) == ("list_dir", "ok") and call["duration_ms"] >= 0
    assert result["duration_ms"] > 0 and result["error"] is None
    assert "list_dir" in res.stderr  # the tool lines still go to stderr


def test_stream_json_is_the_json_protocol_for_one_message_then_the_result(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    script_with_a_tool(llm_server)
    streamed = run_cli(configured_home, "agent", "-m", "hi", "--output-format", "stream-json")
    assert streamed.returncode == 0, streamed.stderr
    script_with_a_tool(llm_server)
    line = json.dumps({"type": "message", "content": "hi"}) + "\n"
    channel = run_cli(configured_home, "agent", "--json", input=line)
    assert channel.returncode == 0, channel.stderr
    got, want = lines(streamed.stdout), lines(channel.stdout)
    assert got[-1]["type"] == "result" and got[-1]["answer"] == "two files"
    assert [e["type"] for e in got[:-1]] == [e["type"] for e in want]
    assert got[-2]["type"] == "turn_finished" and got[-2]["content"] == "two files"


def test_a_failed_turn_reports_its_error_and_exit_code(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([error(400, "the request is malformed")])
    res = run_cli(configured_home, "agent", "-m", "hi", "--output-format", "json")
    assert res.returncode == 1
    [result] = lines(res.stdout)
    assert (result["outcome"], result["exit_code"], result["answer"]) == ("error", 1, "")
    assert "malformed" in result["error"] and result["error_kind"]


def test_a_usage_error_still_ends_stdout_with_a_result(configured_home: Path) -> None:
    res = run_cli(configured_home, "agent", "-m", "hi", "-s", "nope", "--output-format", "json")
    assert res.returncode == 2
    [result] = lines(res.stdout)
    assert (result["outcome"], result["exit_code"], result["error_kind"]) == (
        "not_started",
        2,
        "usage",
    )
    assert "nope" in result["error"] and "nope" in res.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-m", "hi", "--output-format", "yaml"], "unknown format 'yaml'"),
        (["--json", "--output-format", "json"], "does not apply to --json"),
        (["--output-format", "json"], "does not apply to the TUI"),
        (["--json", "--output-schema", "s.json"], "does not apply to --json"),
    ],
)
def test_a_format_where_it_cannot_apply_is_refused(
    configured_home: Path, llm_server: OpenAITestServer, args: list[str], says: str
) -> None:
    res = run_cli(configured_home, "agent", *args)
    assert res.returncode == 2 and says in res.stderr, res.stderr
    assert res.stdout == "" and not llm_server.completions
