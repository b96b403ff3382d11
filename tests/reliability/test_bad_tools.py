"""Bad tool arguments and hostile tool results, through the whole loop.

Arguments (many examples): any tool name, any argument text (not JSON, wrong types, missing
or extra keys, huge values) becomes a tool *result* the model sees — an error that says what
is wrong — never an exception; the session stays a valid conversation. Mutating tools run
under `tools.approval: readonly`, so a generated command is validated but never executed, and
web_fetch cannot resolve any host here.

Results (many examples): whatever a tool returns (binary, ANSI/OSC escape sequences, control
characters, huge text) reaches the terminal renderer, the JSON channel and the session file
sanitised and capped. The console script is checked once with real escapes from `exec` and
from the model's own text, including `picobot sessions show` afterwards.

tests/core/test_tools_registry.py fuzzes the registry alone; this goes through the loop.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from picobot_tui.config.settings import Settings
from picobot_tui.core.events import ToolCallFinished, ToolCallStarted, event_to_dict
from picobot_tui.core.llm.model import TextChunk, ToolCallChunk, UsageChunk
from picobot_tui.core.llm.scripted import ScriptedModel
from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.tools.base import Tool, ToolContext, ToolError, ToolResult
from picobot_tui.core.tools.registry import ToolRegistry, builtin_tools
from picobot_tui.headless.text import HeadlessFlags, TextRenderer
from picobot_tui.run.runtime import build_runtime
from tests.reliability.fuzz import fuzz, tally
from tests.reliability.support import (
    KEY,
    Proc,
    Router,
    check_session_file,
    conversation_problems,
    provider_view,
    write_config,
)
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

# Anything a terminal would act on: ESC, C1 controls, other C0 controls except \t and \n.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TOOL_NAMES = [t.name for t in builtin_tools()]


@pytest.fixture(autouse=True)
def no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """web_fetch must not resolve generated host names."""
    import picobot_tui.core.tools.web_fetch as web

    async def refuse(host: str, port: int) -> list[Any]:
        raise ToolError(f"cannot resolve host {host!r}: no network in this test")

    monkeypatch.setattr(web, "resolve_host", refuse)


def _settings(tmp: Path, approval: str = "readonly") -> Settings:
    s = Settings()
    s.agents.defaults.model = "scripted"
    s.agents.defaults.workspace = str(tmp / "ws")
    s.agents.defaults.max_tool_iterations = 3
    # The scripted model has exactly the steps of the turn: no summary call in between.
    s.agents.defaults.compaction = "drop"
    s.tools.approval = approval  # type: ignore[assignment]
    return s


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        st.text(max_size=40),
    ),
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=10), kids, max_size=4)
    ),
    max_leaves=10,
)
KNOWN_KEYS = ["path", "content", "old_text", "new_text", "command", "offset", "limit", "url",
              "max_chars", "action", "text", "index", "timeout"]  # fmt: skip
arg_objects = st.dictionaries(
    st.one_of(st.sampled_from(KNOWN_KEYS), st.text(max_size=10)), json_values, max_size=5
)
huge = st.sampled_from([10_000, 1_000_000]).map(lambda n: {"path": "p" * n, "content": "c" * n})
raw_arguments = st.one_of(
    arg_objects.map(json.dumps),
    huge.map(json.dumps),
    json_values.map(lambda v: json.dumps(v, allow_nan=True)),
    st.text(max_size=60),  # not JSON at all
    st.just(""),
)
names = st.one_of(st.sampled_from(TOOL_NAMES), st.text(max_size=12))


def _run_calls(tmp: Path, calls: list[tuple[str, str]], registry: ToolRegistry | None = None):
    """One turn in which the model asks for `calls` (in parallel), then answers."""
    step = [ToolCallChunk(i, f"call_{i}", name, raw) for i, (name, raw) in enumerate(calls)]
    model = ScriptedModel([[*step, UsageChunk(10, 5)], [TextChunk("done"), UsageChunk(10, 5)]])
    rt = build_runtime(_settings(tmp), model="scripted", model_client=model)
    if registry is not None:
        rt.loop.tools = registry
    store = SessionStore(tmp / "sessions")
    events: list[Any] = []

    async def go() -> None:
        with store.open(store.new_key()) as session:
            async for event in rt.loop.run_turn(session, "use the tools"):
                events.append(event)
            events.append(session.path)

    asyncio.run(go())
    path = events.pop()
    return events, path, model


@fuzz(250, 4000)
@given(calls=st.lists(st.tuples(names, raw_arguments), min_size=1, max_size=3))
def test_any_tool_arguments_become_results_never_exceptions(tmp_path_factory, calls) -> None:
    tally("tool arguments (through the loop)")
    tmp = tmp_path_factory.mktemp("args")
    events, path, model = _run_calls(tmp, calls)
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    calls = [(n, raw) for n, raw in calls if n or raw]  # a lone id is no call at all
    assert len(finished) == len(calls)
    # Arguments bigger than the whole budget (megabytes of text) cannot all be sent back:
    # the turn either goes on without them or stops cleanly at the budget.
    too_big = sum(len(raw) for _n, raw in calls) // 4 > 128_000 * 0.8
    assert events[-1].outcome in (("final", "budget_exhausted") if too_big else ("final",))
    for (name, _raw), e in zip(calls, finished, strict=True):
        assert e.status in ("ok", "error", "denied"), e
        assert isinstance(e.result, str) and len(e.result) <= 8_000 + 100
        if name not in TOOL_NAMES:
            assert e.status == "error" and "unknown tool" in e.result
        if e.status == "error" and name in TOOL_NAMES:
            assert e.result.startswith("Error:"), e.result
    # The model got every result, as a valid conversation.
    sent = model.requests[-1].messages
    assert conversation_problems(sent) == []
    check = check_session_file(path)
    assert not check.warnings and not check.damaged
    assert conversation_problems(provider_view(check.messages)) == []


@pytest.mark.parametrize(
    ("name", "raw", "words"),
    [
        ("read_file", "{}", "missing required argument `path`"),
        ("read_file", '{"path": 5}', "must be string"),
        ("read_file", '{"path": "a", "colour": "red"}', "unexpected argument `colour`"),
        ("list_dir", "[1, 2]", "must be a JSON object"),
        ("write_file", '{"path": "a"', "not valid JSON"),
        ("exec", '{"command": ["ls"]}', "must be string"),
        ("todo", '{"action": "explode"}', "must be one of"),
        ("nope", "{}", "unknown tool"),
    ],
)
def test_argument_errors_say_what_is_wrong(tmp_path, name, raw, words) -> None:
    events, _, model = _run_calls(tmp_path, [(name, raw)])
    [e] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert e.status == "error" and words in e.result, e.result
    assert model.requests[-1].messages[-1]["content"] == e.result


def test_a_tool_call_without_a_name_is_answered_and_the_next_request_is_valid(tmp_path):
    """Regression: a streamed call whose name never came was stored with name "", which a
    provider rejects in every later request (and a reload now skips as malformed)."""
    events, path, model = _run_calls(tmp_path, [("", '{"path": "a"}')])
    [e] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert e.name == "unnamed_tool" and e.status == "error" and "unknown tool" in e.result
    assert conversation_problems(model.requests[-1].messages) == []
    check = check_session_file(path)
    assert not check.warnings and [m["role"] for m in check.messages][-2:] == ["tool", "assistant"]


def test_huge_arguments_are_handled(tmp_path) -> None:
    """5 MB of content through write_file (allowed), and a 1 MB path: results stay small."""
    content = "line\n" * 1_000_000
    calls = [
        ("write_file", json.dumps({"path": "big.txt", "content": content})),
        ("read_file", json.dumps({"path": "x" * 1_000_000})),
    ]
    step = [ToolCallChunk(i, f"c{i}", n, raw) for i, (n, raw) in enumerate(calls)]
    model = ScriptedModel([[*step, UsageChunk(1, 1)], [TextChunk("ok"), UsageChunk(1, 1)]])
    rt = build_runtime(_settings(tmp_path, "auto"), model="scripted", model_client=model)

    async def go() -> list[Any]:
        with rt.store.open(rt.store.new_key()) as s:
            return [e async for e in rt.loop.run_turn(s, "big")]

    events = asyncio.run(go())
    done = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.status for e in done] == ["ok", "error"]
    assert (tmp_path / "ws" / "big.txt").read_text() == content
    assert all(len(e.result) < 9_000 for e in done)


# -- hostile results ------------------------------------------------------------------------


class EchoTool(Tool):
    """Returns whatever the test put in `payload` (str or bytes), as a result or an error."""

    name = "echo"
    description = "test"
    parameters = {"type": "object", "properties": {}, "additionalProperties": True}
    payload: Any = ""
    mode = "return"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str | ToolResult:
        if self.mode == "error":
            raise ToolError(self.payload if isinstance(self.payload, str) else "x")
        if self.mode == "result":
            return ToolResult(False, self.payload, "error")
        return self.payload


ESCAPES = [
    "\x1b[2J\x1b[H",  # clear screen, home
    "\x1b]0;pwned title\x07",  # OSC window title
    "\x1b]52;c;cGF5bG9hZA==\x07",  # OSC 52: write the clipboard
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",  # hyperlink
    "\x1bP+q544e\x1b\\",  # DCS
    "\x9b31m",  # 8-bit CSI
    "\x1b[6n",  # ask the terminal for the cursor position (it would answer on stdin)
    "\r\x1b[1A\x1b[K",  # rewrite the previous line
    "\x07\x08\x00\x7f",
]
payloads = st.one_of(
    st.lists(st.one_of(st.sampled_from(ESCAPES), st.text(max_size=20)), max_size=8).map("".join),
    st.binary(max_size=300),
    st.sampled_from([30_000, 200_000]).map(lambda n: "\x1b[31mX" * n),
    st.text(alphabet=st.characters(max_codepoint=0x2FF), max_size=100),
)


@fuzz(250, 4000)
@given(payload=payloads, mode=st.sampled_from(["return", "error", "result"]))
def test_hostile_results_never_reach_a_terminal_raw(tmp_path_factory, payload, mode) -> None:
    tally("tool results (binary/ANSI/huge, through the loop and renderers)")
    tmp = tmp_path_factory.mktemp("res")
    echo = EchoTool()
    echo.payload, echo.mode = payload, mode
    ctx = ToolContext(tmp / "ws", _settings(tmp).tools)
    registry = ToolRegistry([echo], ctx)
    events, path, model = _run_calls(tmp, [("echo", "{}")], registry)
    out, err = io.StringIO(), io.StringIO()
    renderer = TextRenderer(HeadlessFlags(show_tools=True), out, err)
    for e in events:
        renderer.handle(e)
    shown = out.getvalue() + err.getvalue()
    assert not UNSAFE.search(shown), repr(shown[:300])
    # The JSON channel writes json.dumps(..., ensure_ascii=False): controls are escaped.
    wire = "".join(json.dumps(event_to_dict(e), ensure_ascii=False) for e in events)
    assert not UNSAFE.search(wire)
    [fin] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert UNSAFE.sub("", fin.result) == fin.result
    assert len(fin.result) <= 8_000 + 100
    stored = [m for m in check_session_file(path).messages if m["role"] == "tool"]
    assert stored[0]["content"] == fin.result
    assert model.requests[-1].messages[-1]["content"] == fin.result
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started and started[0].name == "echo"


@pytest.mark.e2e
def test_console_script_shows_no_raw_escapes(tmp_path) -> None:
    """Real escapes from `exec` output and from the model's own text, through `picobot
    agent -m --show-tools`, then `picobot sessions show/list/search`: nothing raw."""
    router = Router()
    evil = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cGF5bG9hZA==\x07"
    router.add(
        "esc",
        [
            tool_call_reply(
                "exec",
                {"command": r"printf '\033]0;t\007\033[31mred\033[0m'; head -c 600 /dev/urandom"},
            ),
            text_reply(f"esc done {evil}and more", chunk_size=5),
        ],
    )
    with OpenAITestServer(default=router) as server:
        write_config(tmp_path, server.url)
        p = Proc(tmp_path, ["agent", "-m", f"esc: go {evil}", "--yes", "--show-tools"])
        assert p.finish(timeout=120) == 0, p.stderr
    outputs = {"agent -m": p.out + p.err}
    for args in (["sessions", "show", "latest"], ["sessions", "list"],
                 ["sessions", "search", "esc"], ["sessions", "export", "latest"]):  # fmt: skip
        q = Proc(tmp_path, args)
        assert q.finish(timeout=60) == 0, q.stderr
        outputs[" ".join(args)] = q.out + q.err
    tally("tool results with escapes (subprocess)")
    leaks = {k: v.count(b"\x1b") for k, v in outputs.items() if b"\x1b" in v or b"\x07" in v}
    assert not leaks, leaks
    assert KEY.encode() not in b"".join(outputs.values())


@pytest.mark.e2e
def test_console_script_titles_show_invisible_characters(tmp_path) -> None:
    """Issue 21 point 11: a session's title comes from its first message; `sessions list`
    and `search` showed its bidi override, isolates and zero-width characters raw (only C0
    and C1 controls were stripped), so a listed title could read as another. Every Cc/Cf
    character is a visible stand-in now."""
    hidden = "\u202eevil\u2066 \u200b\u200d\ufeff\x1b[31m \x9b"
    run = Proc(tmp_path, ["agent", "-m", f"deploy {hidden} now", "--model", "demo"])
    assert run.finish(timeout=120) == 0, run.stderr
    shown = {}
    for args in (["sessions", "list"], ["sessions", "search", "deploy"]):
        q = Proc(tmp_path, args)
        assert q.finish(timeout=60) == 0, q.stderr
        shown[" ".join(args)] = q.out.decode()
    for name, text in shown.items():
        raw = [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cc", "Cf")
               and c != "\n"]  # fmt: skip
        assert raw == [], (name, raw)
        assert "deploy ⟨U+202E⟩evil⟨U+2066⟩ ⟨U+200B⟩⟨U+200D⟩⟨U+FEFF⟩␛[31m" in text, name


@pytest.mark.e2e
def test_console_script_file_names_in_diff_and_rewind_show_controls(tmp_path) -> None:
    """The model names the files it writes. One named `ok.txt` + newline + `Restored 0
    file(s) ` + U+202E printed, in `sessions diff` and `sessions rewind`, a forged line of
    its own and a reversed one: the path went out as it was. A path is now an exact label
    (newline ␊, U+202E ⟨U+202E⟩, spaces kept), on one line in every report."""
    name = "ok.txt\nRestored 0 file(s)  \u202eevil"
    shown = "ok.txt␊Restored 0 file(s)  ⟨U+202E⟩evil"
    steps = [tool_call_reply("write_file", {"path": name, "content": "x\n"}), text_reply("ok")]
    with OpenAITestServer(steps) as server:
        write_config(tmp_path, server.url)
        turn = Proc(tmp_path, ["agent", "-m", "write it", "--yes"])
        assert turn.finish(timeout=120) == 0, turn.stderr
    printed = {}
    for args in (["sessions", "diff", "latest"], ["sessions", "rewind", "latest", "--to", "1", "--code"]):  # fmt: skip
        run = Proc(tmp_path, args)
        assert run.finish(timeout=60) == 0, run.stderr
        printed[args[1]] = run.out.decode()
    assert f"+++ b/{shown}\n" in printed["diff"]
    assert f"  {shown} (removed: the agent created it)\n" in printed["rewind"]
    for text in printed.values():
        assert "\u202e" not in text
        assert not any(line.startswith("Restored 0") for line in text.splitlines()), text
