"""Unit tests of core/mcp/names.py (the model-facing tool names) and core/mcp/results.py
(a CallToolResult as text), and of a real server's results going through the registry's
sanitise -> scrub -> cap path."""

from __future__ import annotations

import asyncio
import base64
import random
import re
import sys
from pathlib import Path

import pytest
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from picobot_tui.core.mcp.manager import McpManager
from picobot_tui.core.mcp.names import MAX_NAME, crosses, sanitize, server_prefix, tool_name
from picobot_tui.core.mcp.results import to_tool_result
from picobot_tui.core.mcp.schema import schema_problem
from picobot_tui.core.secrets import MASK, Scrubber
from picobot_tui.core.settings import ToolsConfig
from picobot_tui.core.shapes.mcp_server import McpServerConfig
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.registry import ToolRegistry
from tests.mcp.conftest import TEST_SERVER

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


# -- names ------------------------------------------------------------------------------------
def test_plain_names_are_kept() -> None:
    assert tool_name("github", "create_issue") == "mcp_github_create_issue"
    assert tool_name("my-srv", "get-time") == "mcp_my-srv_get-time"
    assert server_prefix("my srv") == "mcp_my_srv_"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("a.b/c", "a_b_c"),
        ("with spaces  here", "with_spaces_here"),
        ("天气", "_"),  # nothing allowed is left
        ("__edge__", "edge"),
        ("x\x1b[31my", "x_31my"),
        ("", "_"),
    ],
)
def test_sanitize_keeps_only_the_allowed_characters(raw: str, clean: str) -> None:
    assert sanitize(raw) == clean


def test_long_names_are_cut_to_64_with_a_stable_hash() -> None:
    server, tool = "a-server-with-a-rather-long-name", "and_a_tool_whose_name_goes_on_" * 3
    name = tool_name(server, tool)
    assert len(name) == MAX_NAME and VALID.match(name)
    assert name == tool_name(server, tool)  # the same pair always gets the same name
    assert name != tool_name(server, tool + "x")


def test_names_that_sanitise_alike_stay_unique() -> None:
    taken: set[str] = set()
    first = tool_name("s", "get.time", taken)
    taken.add(first)
    second = tool_name("s", "get time", taken)
    assert first == "mcp_s_get_time" and second != first
    assert second.startswith("mcp_s_get_time_") and VALID.match(second)
    assert tool_name("s", "get time", taken) == second  # stable too
    # A built-in's name is taken as well: an MCP tool never replaces it.
    assert tool_name("s", "x", {"mcp_s_x"}) != "mcp_s_x"


def test_many_random_names_are_all_valid_and_unique() -> None:
    rng = random.Random(12)
    alphabet = "abcXYZ019_-. /:é天\x00\t"
    taken: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    while len(pairs) < 500:
        server = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        tool = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 90)))
        pairs.add((server, tool))
    for server, tool in sorted(pairs):
        name = tool_name(server, tool, taken)
        assert VALID.match(name), (server, tool, name)
        assert name not in taken
        taken.add(name)


# -- results ----------------------------------------------------------------------------------
def _text(text: str) -> TextContent:
    return TextContent(type="text", text=text)


def test_text_blocks_are_joined() -> None:
    result = to_tool_result(CallToolResult(content=[_text("one"), _text("two")]))
    assert (result.ok, result.status, result.content) == (True, "ok", "one\ntwo")


def test_media_become_placeholders() -> None:
    png = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()
    content: list[ContentBlock] = [
        _text("look:"),
        ImageContent(type="image", data=png, mime_type="image/png"),
        AudioContent(type="audio", data="", mime_type="audio/wav"),
        ResourceLink(type="resource_link", name="spec", uri="file:///spec.md"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri="file:///a.txt", text="inside"),
        ),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(uri="file:///b.bin", blob=png, mime_type="x/bin"),
        ),
    ]
    text = to_tool_result(CallToolResult(content=content)).content
    assert text.split("\n") == [
        "look:",
        "[image: image/png, 100 bytes, not shown]",
        "[audio: audio/wav, empty, not shown]",
        "[resource link: spec file:///spec.md]",
        "[resource file:///a.txt]",
        "inside",
        "[resource file:///b.bin: x/bin, 100 bytes, not shown]",
    ]
    assert png not in text  # no base64 reaches the model


def test_structured_content_is_included_once() -> None:
    data = {"city": "Oslo", "celsius": 21.5}
    # Only structured: the JSON is the result.
    only = to_tool_result(CallToolResult(content=[], structured_content=data)).content
    assert only == 'structured content: {"city": "Oslo", "celsius": 21.5}'
    # The same JSON as text too (what SDK servers send): once.
    echoed = CallToolResult(content=[_text('{\n "celsius": 21.5, "city": "Oslo"}')])
    echoed.structured_content = data
    assert to_tool_result(echoed).content == '{\n "celsius": 21.5, "city": "Oslo"}'
    # Different text: both.
    both = CallToolResult(content=[_text("It is mild.")], structured_content=data)
    assert to_tool_result(both).content == (
        'It is mild.\nstructured content: {"city": "Oslo", "celsius": 21.5}'
    )
    # The SDK's wrapper of a non-object return value, {"result": value}: the text says it.
    wrapped = CallToolResult(content=[_text("hi")], structured_content={"result": "hi"})
    assert to_tool_result(wrapped).content == "hi"
    numbers = CallToolResult(content=[_text("[1, 2]")], structured_content={"result": [1, 2]})
    assert to_tool_result(numbers).content == "[1, 2]"


def test_is_error_is_an_error_result() -> None:
    result = to_tool_result(CallToolResult(content=[_text("bad city")], is_error=True))
    assert (result.ok, result.status, result.content) == (False, "error", "Error: bad city")
    empty = to_tool_result(CallToolResult(content=[], is_error=True))
    assert (empty.ok, empty.content) == (False, "Error: (no content)")
    assert to_tool_result(CallToolResult(content=[])).content == "(no content)"


# -- a real server's results through the registry -----------------------------------------
def test_results_are_sanitised_scrubbed_and_capped(tmp_path: Path) -> None:
    """A tool returning ANSI escapes and 100k characters, and one echoing a secret from
    the server's env: what the model gets is clean, masked and at most toolResultMaxChars."""
    secret = "mcp-env-secret-4f9a2c7e1b"
    limit = 1000
    ctx = ToolContext(workspace=tmp_path, config=ToolsConfig(tool_result_max_chars=limit))
    registry = ToolRegistry([], ctx, Scrubber([secret], include_env=False))
    config = McpServerConfig(command=sys.executable, args=[str(TEST_SERVER)], env={"K": secret})
    # "t!" sanitises to "t" too: its tools get names of their own, not t's. It lists two
    # more tools: one whose schema refers to $defs, one whose schema is broken.
    other_config = config.model_copy(update={"args": [str(TEST_SERVER), "--schemas"]})
    servers = {"t": config, "t!": other_config}
    manager = McpManager(servers, workspace=tmp_path, registry=registry, connect_timeout=30)

    async def scenario() -> None:
        manager.start()
        try:
            assert await manager.wait_ready(60) == []
            first, second = manager.tool_names("t"), manager.tool_names("t!")
            assert "mcp_t_echo" in first and (len(first), len(second)) == (9, 10)
            # The broken schema is not offered (it made every argument check raise); the
            # server's other tools are, the one with a $ref too.
            assert [s.name for s in manager.servers["t!"].tools if s.name == "broken"] == []
            located = next(n for n in second if n.startswith("mcp_t_locate_"))
            found = await registry.call(located, {"point": {"x": 1, "y": 2.5}})
            assert (found.ok, found.content) == (True, "at 1,2.5")
            wrong = await registry.call(located, {"point": {"x": "left"}})
            assert wrong.status == "error" and "invalid arguments" in wrong.content
            assert not set(first) & set(second) and all(VALID.match(n) for n in second)
            assert set(registry.names()) == set(first) | set(second)
            other = next(n for n in second if n.startswith("mcp_t_echo_"))
            assert (await registry.call(other, {"text": "from t!"})).content == "from t!"
            noisy = await registry.call("mcp_t_noisy", {"size": 100_000})
            echoed = await registry.call("mcp_t_echo", {"text": f"key={secret}"})
        finally:
            await manager.close()
        assert noisy.ok
        body, _, tail = noisy.content.partition("\n… [truncated: ")
        # The escapes are gone (colour, the title-setting OSC with its payload, clear
        # screen) before the cut, so the cut counts what the model could read.
        assert body.startswith("red   xxx") and len(body) == limit
        assert tail == "99006 more chars of 100006]"
        assert "\x1b" not in noisy.content and "\x07" not in noisy.content
        assert echoed.content == f"key={MASK}"

    asyncio.run(scenario())


# -- schemas ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}}, None),
        (
            {
                "type": "object",
                "$defs": {"P/Q": {"type": "object"}, "L": {"allOf": [{"type": "string"}]}},
                "properties": {
                    "p": {"$ref": "#/$defs/P~1Q"},
                    "l": {"$ref": "#/$defs/L/allOf/0"},
                },
            },
            None,
        ),
        ({"type": "object", "properties": {"a": {"$ref": "#"}}}, None),  # recursive, fine
        ({"type": "strng"}, "not a valid JSON Schema"),
        ({"properties": {"a": {"$ref": "#/$defs/Missing"}}}, "points nowhere in it: #/$defs/"),
        ({"properties": {"a": {"$ref": "https://example.invalid/s.json"}}}, "points nowhere"),
    ],
)
def test_schema_problem(schema: dict[str, object], problem: str | None) -> None:
    found = schema_problem(schema)
    assert found is None if problem is None else (found is not None and problem in found)


# -- two servers whose names overlap -----------------------------------------------------------
ONE_TOOL = """
import os, sys, time
from mcp.server.mcpserver import MCPServer

name, gate = sys.argv[1], sys.argv[2:]
while gate and not os.path.exists(gate[0]):  # held back until the test says so
    time.sleep(0.01)
server = MCPServer("one-tool")
server.tool(name=name)(lambda: f"I am {name}")
server.run("stdio")
"""


@pytest.mark.parametrize(
    ("server", "tool", "others", "crossing"),
    [
        ("a", "b_c", ["a", "a_b"], True),
        ("a_b", "c", ["a", "a_b"], False),  # the longer name keeps its plain names
        ("a", "bc", ["a", "a_b"], False),
        ("a", "b", ["a", "a_b"], False),
        ("a!", "b_c", ["a!", "a b"], True),  # compared once sanitised
        ("a", "b_c", ["a", "ab"], False),
    ],
)
def test_crosses(server: str, tool: str, others: list[str], crossing: bool) -> None:
    assert crosses(server, tool, others) is crossing


def test_a_tool_name_two_servers_could_have_means_the_same_one_in_any_order(
    tmp_path: Path,
) -> None:
    """`a`'s tool `b_c` and `a_b`'s tool `c` are both `mcp_a_b_c` once named. With `a`
    connected first (the other is held back), `a_b` still gets that name and `a` the
    hashed one, as when `a_b` connects first: an `always` rule for `mcp_a_b_c` always means
    `a_b`'s `c`. (Before, the first to connect took it.)"""
    script = tmp_path / "one_tool.py"
    script.write_text(ONE_TOOL)
    gate = tmp_path / "gate"
    servers = {
        "a": McpServerConfig(command=sys.executable, args=[str(script), "b_c"]),
        "a_b": McpServerConfig(command=sys.executable, args=[str(script), "c", str(gate)]),
    }
    registry = ToolRegistry([], ToolContext(workspace=tmp_path, config=ToolsConfig()))
    manager = McpManager(servers, workspace=tmp_path, registry=registry, connect_timeout=60)

    async def scenario() -> None:
        manager.start()
        try:
            first = manager.servers["a"]
            assert await first.wait_ready(60)
            assert manager.servers["a_b"].state == "connecting"
            gate.touch()
            assert await manager.wait_ready(60) == []
            [mine] = manager.tool_names("a")
            assert manager.tool_names("a_b") == ["mcp_a_b_c"]
            assert mine.startswith("mcp_a_b_c_") and VALID.match(mine)
            assert (await registry.call("mcp_a_b_c", {})).content == "I am c"
            assert (await registry.call(mine, {})).content == "I am b_c"
        finally:
            await manager.close()

    asyncio.run(scenario())
