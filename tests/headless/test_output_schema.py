"""`-m --output-schema FILE.json` through the console script against the local server: a
scripted model that answers wrong then right, wrong twice, not JSON at all; a schema file
that is itself invalid (exit 2, nothing sent); the provider's structured-output mode sent
where LiteLLM's model map says the model has one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import run_cli
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = pytest.mark.e2e

SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"enum": ["ok", "broken"]}, "files": {"type": "integer"}},
    "required": ["verdict", "files"],
    "additionalProperties": False,
}


def schema_file(home: Path, schema: Any = SCHEMA, name: str = "answer.schema.json") -> str:
    path = home / name
    path.write_text(schema if isinstance(schema, str) else json.dumps(schema))
    return str(path)


def user_texts(llm: OpenAITestServer) -> list[str]:
    body = llm.completions[-1].body
    out = []
    for m in body["messages"]:
        if m["role"] == "user":
            c = m["content"]
            out.append(c if isinstance(c, str) else "".join(p.get("text", "") for p in c))
    return out


def test_wrong_then_right_is_asked_again_once_and_prints_the_json(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script(
        [text_reply('{"verdict": "fine", "files": 2}'), text_reply('{"verdict":"ok","files":2}')]
    )
    res = run_cli(configured_home, "agent", "-m", "check it", "--output-schema",
                  schema_file(configured_home))  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stdout == '{"verdict": "ok", "files": 2}\n'
    assert len(llm_server.completions) == 2
    first, second = user_texts(llm_server)
    assert first.startswith("check it") and '"required"' in first  # the schema is in it
    assert "at verdict: 'fine' is not one of ['ok', 'broken']" in second
    assert "asking again" in res.stderr


def test_wrong_twice_exits_1_with_the_validation_error_and_no_answer(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply('{"verdict": "ok"}'), text_reply('{"verdict": "ok"}')])
    path = schema_file(configured_home)
    res = run_cli(configured_home, "agent", "-m", "check", "--output-schema", path)
    assert res.returncode == 1
    assert res.stdout == ""
    assert f"the answer does not match --output-schema {path}" in res.stderr
    assert "'files' is a required property" in res.stderr
    assert len(llm_server.completions) == 2

    llm_server.script([text_reply('{"verdict": "ok"}'), text_reply('{"verdict": "ok"}')])
    res = run_cli(
        configured_home, "agent", "-m", "check", "--output-schema", path, "--output-format", "json"
    )
    [result] = [json.loads(x) for x in res.stdout.splitlines()]
    assert (res.returncode, result["outcome"], result["exit_code"]) == (1, "invalid_output", 1)
    assert "'files' is a required property" in result["error"]
    assert result["structured"] is None and result["answer"] == '{"verdict": "ok"}'


def test_not_json_at_all_then_a_fenced_answer(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("Sure! It looks fine."), text_reply("nope, still prose")])
    path = schema_file(configured_home)
    res = run_cli(configured_home, "agent", "-m", "check", "--output-schema", path)
    assert (res.returncode, res.stdout) == (1, "")
    assert "the answer is not JSON" in res.stderr

    fenced = '```json\n{"verdict": "broken", "files": 0}\n```'
    llm_server.script([text_reply(fenced)])
    res = run_cli(
        configured_home, "agent", "-m", "check", "--output-schema", path, "--output-format", "json"
    )
    [result] = [json.loads(x) for x in res.stdout.splitlines()]
    assert res.returncode == 0, res.stderr
    assert result["structured"] == {"verdict": "broken", "files": 0}
    assert result["outcome"] == "final"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "not JSON"),
        ({"type": "nonsense"}, "not a valid JSON Schema"),
        ([1, 2], "a JSON Schema is an object"),
        (None, "cannot read it"),
    ],
)
def test_an_invalid_schema_file_exits_2_before_any_request(
    configured_home: Path, llm_server: OpenAITestServer, content: Any, says: str
) -> None:
    path = (
        str(configured_home / "missing.json")
        if content is None
        else schema_file(configured_home, content)
    )
    res = run_cli(configured_home, "agent", "-m", "check", "--output-schema", path)
    assert res.returncode == 2 and says in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert not llm_server.completions


@pytest.mark.parametrize(("model", "structured"), [("gpt-4o-mini", True), ("test-model", False)])
def test_the_provider_mode_goes_with_the_call_where_the_model_has_one(
    configured_home: Path, llm_server: OpenAITestServer, model: str, structured: bool
) -> None:
    llm_server.script([text_reply('{"verdict": "ok", "files": 1}')])
    llm_server.models = [*llm_server.models, "gpt-4o-mini"]
    path = schema_file(configured_home)
    res = run_cli(
        configured_home, "agent", "-m", "check", "--model", f"openai/{model}",
        "--output-schema", path,
    )  # fmt: skip
    assert (res.returncode, res.stdout) == (0, '{"verdict": "ok", "files": 1}\n'), res.stderr
    body = llm_server.completions[0].body
    if structured:
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    else:
        assert "response_format" not in body
    assert '"additionalProperties": false' in user_texts(llm_server)[0]
