"""ToolRegistry: schemas, argument parsing and validation, and the result pipeline
(errors as results, sanitising, secret scrubbing, truncation). Plus property-based fuzzing
of parse_arguments + execute."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.settings import ToolsConfig
from picobot_tui.core.tools import web_fetch
from picobot_tui.core.tools.base import Tool, ToolContext, ToolError, ToolResult
from picobot_tui.core.tools.exec.guard import check_confined, check_denied
from picobot_tui.core.tools.registry import ToolRegistry, default_registry
from picobot_tui.core.tools.text import sanitize, truncate

SECRET_KEY = "sk-test-0123456789abcdef"


class Echo(Tool):
    name = "echo"
    description = "Returns `text` as it is."
    parameters = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["text"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return args["text"]


class Raw(Tool):
    """Returns whatever the test put in `payload` (bytes, objects...)."""

    name = "raw"
    description = "raw"
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}
    payload: Any = None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return self.payload


class Boom(Tool):
    name = "boom"
    description = "Always fails."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        raise KeyError("kaput")


class Refuse(Tool):
    name = "refuse"
    description = "Raises ToolError."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        raise ToolError(f"nope, key {SECRET_KEY}")


class Sleepy(Tool):
    name = "sleepy"
    description = "Sleeps."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        await asyncio.sleep(30)
        return "woke"


@pytest.fixture
def reg(tmp_path: Path) -> ToolRegistry:
    ctx = ToolContext(tmp_path, ToolsConfig(tool_result_max_chars=100))
    return ToolRegistry(
        [Echo(), Raw(), Boom(), Refuse(), Sleepy()],
        ctx,
        scrub=Scrubber([SECRET_KEY], include_env=False),
    )


# -- schemas -----------------------------------------------------------------------------


def test_default_registry_has_the_seven_tools(tmp_path):
    reg = default_registry(ToolContext(tmp_path, ToolsConfig()))
    assert sorted(reg.names()) == sorted(
        ["read_file", "write_file", "edit_file", "list_dir", "exec", "web_fetch", "todo"]
    )
    for schema in reg.schemas():
        assert schema["type"] == "function"
        fn = schema["function"]
        assert fn["name"] in reg.names() and fn["description"]
        params = fn["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        json.dumps(schema)  # serialisable as sent to the provider
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(params)
    assert reg.get("exec") is not None and reg.get("nope") is None


def test_duplicate_names_rejected(tmp_path):
    with pytest.raises(ValueError, match="two tools"):
        ToolRegistry([Echo(), Echo()], ToolContext(tmp_path, ToolsConfig()))


# -- parse_arguments -----------------------------------------------------------------------


def test_parse_valid_and_empty(reg):
    assert reg.parse_arguments("echo", '{"text": "hi"}') == {"text": "hi"}
    assert reg.parse_arguments("raw", "") == {}
    assert reg.parse_arguments("raw", "  ") == {}
    assert reg.parse_arguments("echo", {"text": "x"}) == {"text": "x"}


def test_integral_float_becomes_int(reg):
    args = reg.parse_arguments("echo", '{"text": "a", "n": 3.0}')
    assert args["n"] == 3 and isinstance(args["n"], int)


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("nope", "{}", "unknown tool"),
        ("echo", '{"text": ', "not valid JSON"),
        ("echo", "{'text': 'x'}", "not valid JSON"),
        ("echo", '{"text": NaN}', "not valid JSON"),
        ("echo", '{"text": "a", "n": 1e999}', "too large"),
        ("echo", "[1, 2]", "must be a JSON object, got array"),
        ("echo", '"text"', "must be a JSON object, got string"),
        ("echo", "null", "must be a JSON object, got null"),
        ("echo", "{}", "missing required argument `text`"),
        ("echo", '{"text": 5}', "argument `text` must be string, got integer 5"),
        ("echo", '{"text": "a", "n": "1"}', "argument `n` must be integer"),
        ("echo", '{"text": "a", "n": true}', "argument `n` must be integer, got boolean"),
        ("echo", '{"text": "a", "extra": 1}', "unexpected argument `extra`"),
        ("echo", "[" * 100000, "not valid JSON"),
    ],
)
def test_parse_errors_are_clear(reg, name, raw, message):
    with pytest.raises(ToolError) as exc:
        reg.parse_arguments(name, raw)
    text = str(exc.value)
    assert message in text
    assert len(text) < 600


def test_parse_error_shows_the_expected_shape(reg):
    with pytest.raises(ToolError, match=r"Expected \{text: string, n\?: integer\}"):
        reg.parse_arguments("echo", '{"txt": "a"}')


def test_parse_error_does_not_echo_huge_values(reg):
    with pytest.raises(ToolError) as exc:
        reg.parse_arguments("echo", json.dumps({"text": ["x" * 100000]}))
    assert len(str(exc.value)) < 400


# -- execute -------------------------------------------------------------------------------


async def test_execute_ok(reg):
    assert await reg.execute("echo", {"text": "hi"}) == ToolResult(True, "hi", "ok")


async def test_tool_exception_becomes_error_result(reg):
    r = await reg.execute("boom", {})
    assert r == ToolResult(False, "Error: boom failed: KeyError: 'kaput'", "error")


async def test_tool_error_becomes_error_result_and_is_scrubbed(reg):
    r = await reg.execute("refuse", {})
    assert not r.ok and r.status == "error"
    assert r.content == "Error: nope, key [REDACTED]"


async def test_unknown_tool_and_invalid_args_are_results(reg):
    r = await reg.execute("nope", {})
    assert not r.ok and "unknown tool" in r.content and "echo" in r.content
    r = await reg.execute("echo", {"text": 1})
    assert not r.ok and "must be string" in r.content
    r = await reg.call("echo", "{bad")
    assert not r.ok and "not valid JSON" in r.content


async def test_truncation_marker_counts(reg):
    r = await reg.execute("echo", {"text": "a" * 345})
    assert r.content == "a" * 100 + "\n… [truncated: 245 more chars of 345]"


async def test_scrub_happens_before_truncation(tmp_path):
    # A secret straddling the cut must not leak its first half.
    ctx = ToolContext(tmp_path, ToolsConfig(tool_result_max_chars=100))
    reg = ToolRegistry([Echo()], ctx, scrub=Scrubber([SECRET_KEY], include_env=False))
    r = await reg.execute("echo", {"text": "x" * 90 + SECRET_KEY})
    assert "sk-test" not in r.content


async def test_ansi_and_control_chars_stripped(reg):
    text = "\x1b[31mred\x1b[0m \x1b]0;evil title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x07\x08\x00ok\r\nnext\ttab\x9b2J\x1bc"
    r = await reg.execute("echo", {"text": text})
    assert r.content == "red link ok\nnext\ttab"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"bytes \xff\xfe ok", "bytes \ufffd\ufffd ok"),
        (12345, "12345"),
        ("lone \ud800 surrogate", "lone ? surrogate"),
        (ToolResult(False, "\x1b[1mbad\x1b[0m", "error"), "bad"),
    ],
)
async def test_any_return_value_is_sanitised(reg, payload, expected):
    reg.get("raw").payload = payload
    r = await reg.execute("raw", {})
    assert r.content == expected
    r.content.encode("utf-8")  # always storable


async def test_cancellation_propagates(reg):
    task = asyncio.create_task(reg.execute("sleepy", {}))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_preview_never_raises(reg, tmp_path):
    assert reg.preview("nope", {}).startswith("Error: unknown tool")
    assert reg.preview("echo", {"text": 3}).startswith("Error: invalid arguments")
    full = default_registry(ToolContext(tmp_path, ToolsConfig()), scrub=Scrubber([SECRET_KEY]))
    text = full.preview("exec", {"command": f"echo {SECRET_KEY} \x1b[2J"})
    assert SECRET_KEY not in text and "\x1b" not in text


def test_sanitize_and_truncate_units():
    assert sanitize("a\rb\r\nc") == "a\nb\nc"
    assert truncate("abc", 3) == "abc"
    assert truncate("abcd", 3) == "abc\n… [truncated: 1 more chars of 4]"


# -- property-based: random arguments never crash the registry ------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=10,
)
_keys = st.sampled_from(
    ["path", "content", "old_text", "new_text", "offset", "limit", "command", "timeout", "url",
     "max_chars", "action", "text", "index", "extra"]
)  # fmt: skip
_args = st.dictionaries(_keys, _json_values | st.text(max_size=200), max_size=5)
_raw = st.one_of(
    _args.map(json.dumps),
    st.text(max_size=200),
    st.binary(max_size=50).map(lambda b: b.decode("latin-1")),
    _json_values.map(json.dumps),
)
_names = st.sampled_from(
    ["read_file", "write_file", "edit_file", "list_dir", "exec", "web_fetch", "todo", "nope", ""]
)


@pytest.fixture
def fuzz_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ToolRegistry:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\n")

    # No network, ever: every host "resolves" to a private address, which is refused.
    async def resolve(host: str, port: int) -> list[Any]:
        return [ipaddress.ip_address("10.0.0.1")]

    monkeypatch.setattr(web_fetch, "resolve_host", resolve)
    return default_registry(ToolContext(ws, ToolsConfig(tool_result_max_chars=500)))


def _safe_for_exec(args: dict[str, Any]) -> dict[str, Any]:
    """Random text must not run as a shell command: echo it instead, quoted."""
    if isinstance(args.get("command"), str):
        import shlex

        args = {**args, "command": "printf %s " + shlex.quote(args["command"].replace("\x00", ""))}
        if isinstance(args.get("timeout"), int | float) and args["timeout"] > 5:
            args["timeout"] = 5
    return args


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=_names, raw=_raw)
async def test_random_arguments_never_raise(fuzz_registry, name, raw):
    try:
        args = fuzz_registry.parse_arguments(name, raw)
    except ToolError as e:
        assert str(e)
        return
    if name == "exec":
        args = _safe_for_exec(args)
    result = await fuzz_registry.execute(name, args)
    assert isinstance(result, ToolResult)
    assert result.status in {"ok", "error"}
    assert "Traceback" not in result.content
    assert len(result.content) <= 500 + 60
    assert not any(c in result.content for c in "\x1b\x00\r\x07")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=_names, args=_args)
async def test_random_decoded_arguments_never_raise(fuzz_registry, name, args):
    if name == "exec":
        args = _safe_for_exec(args)
    result = await fuzz_registry.execute(name, args)
    assert isinstance(result, ToolResult)
    fuzz_registry.preview(name, args)


@settings(max_examples=300, deadline=None)
@given(command=st.text(max_size=120))
def test_exec_guards_only_raise_tool_errors(tmp_path_factory, command):
    ws = tmp_path_factory.getbasetemp()
    for check in (lambda: check_denied(command), lambda: check_confined(command, ws)):
        with contextlib.suppress(ToolError):
            check()


_paths = st.one_of(
    st.text(min_size=1, max_size=30),
    st.sampled_from(
        ["a.txt", "new/b.txt", "..", "../x", "/etc/passwd", "~", "$HOME/x", "a.txt/x", "."]
    ),
)
_WELL_TYPED = {
    "read_file": st.fixed_dictionaries(
        {"path": _paths}, optional={"offset": st.integers(1, 5), "limit": st.integers(1, 5)}
    ),
    "write_file": st.fixed_dictionaries({"path": _paths, "content": st.text(max_size=200)}),
    "edit_file": st.fixed_dictionaries(
        {
            "path": _paths,
            "old_text": st.text(min_size=1, max_size=10),
            "new_text": st.text(max_size=10),
        }
    ),
    "list_dir": st.fixed_dictionaries({}, optional={"path": _paths}),
    "todo": st.fixed_dictionaries(
        {"action": st.sampled_from(["read", "add", "check", "uncheck", "remove", "write"])},
        optional={
            "text": st.text(min_size=1, max_size=30),
            "index": st.integers(1, 4),
            "content": st.text(max_size=100),
        },
    ),
    "web_fetch": st.fixed_dictionaries(
        {
            "url": st.one_of(
                st.text(min_size=1, max_size=40), st.text(max_size=30).map(lambda t: "http://" + t)
            )
        }
    ),
}


def _outside_state(root: Path, ws: Path) -> dict[str, int]:
    return {
        str(p): p.stat().st_mtime_ns
        for p in root.rglob("*")
        if not p.is_relative_to(ws) and p.is_file() and not p.is_symlink()
    }


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
async def test_well_typed_random_calls_stay_in_the_workspace(fuzz_registry, tmp_path, data):
    ws = fuzz_registry.ctx.workspace
    before = _outside_state(tmp_path, ws)
    name = data.draw(st.sampled_from(sorted(_WELL_TYPED)))
    args = data.draw(_WELL_TYPED[name])
    result = await fuzz_registry.call(name, json.dumps(args))
    assert isinstance(result, ToolResult)
    if not result.ok:
        assert result.content.startswith("Error:")
    assert _outside_state(tmp_path, ws) == before
