"""Bad command lines, property-based, in process through typer's runner: random flags, values
and orders for every command. Never a traceback; the exit code is one docs/cli.md documents
(0, 1 for a refused interactive confirmation, 2 for usage errors); a usage error says what
is wrong. A few nasty ones also go through the console script.

No generated command line can reach the network or run a command: `agent` always gets
`--model demo` (offline) and a workspace last (so they win), the demo's "run CMD" trigger is
never generated, and the TUI and the --json loop are replaced by stubs (they need a terminal
or a real stdin; tests/reliability/test_bad_json_channel.py covers the protocol).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from picobot_tui.cli import app
from picobot_tui.core.sessions import SessionStore
from tests.reliability.fuzz import fuzz, tally
from tests.reliability.support import Proc, saved_logging

texts = st.one_of(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        max_size=20,
    ),
    st.sampled_from(["", " ", "-", "--", "-x", "latest", "cli:x", "0", "-1", "9" * 30, "1e3"]),
).filter(lambda t: not t.strip().lower().startswith("run"))
AGENT_FLAGS = {
    "-m": texts,
    "--message": texts,
    "-s": texts,
    "--session": texts,
    "--max-tokens": st.one_of(texts, st.integers(-5, 10**6).map(str)),
    "--stream": None,
    "--no-stream": None,
    "--show-tools": None,
    "--no-show-tools": None,
    "--markdown": None,
    "--no-markdown": None,
    "--logs": None,
    "--no-logs": None,
    "--json": None,
    "--yes": None,
    "-y": None,
    "--bogus": None,
}
SESSION_COMMANDS: dict[str, list[Any]] = {
    "list": ["--limit", "--json"],
    "search": ["QUERY", "--limit"],
    "show": ["ID"],
    "export": ["ID", "--format", "-o"],
    "rename": ["ID", "TITLE"],
    "delete": ["ID", "--yes"],
}
OUT_PATHS = ["out.md", "no/such/dir/x.md", "."]


@st.composite
def argvs(draw: st.DrawFn) -> list[str]:
    kind = draw(st.sampled_from(["agent", "sessions", "root", "onboard"]))
    if kind == "root":
        return draw(st.lists(st.one_of(st.sampled_from(["--version", "--help", "x"]), texts),
                             max_size=3))  # fmt: skip
    if kind == "onboard":
        return ["onboard", *draw(st.lists(st.sampled_from(["--force", "--bogus"]), max_size=2))]
    if kind == "agent":
        argv = ["agent"]
        for flag in draw(st.lists(st.sampled_from(list(AGENT_FLAGS)), max_size=5)):
            argv.append(flag)
            value = AGENT_FLAGS[flag]
            if value is not None:
                argv.append(draw(value))
        return argv + ["--model", "demo", "--workspace", "@WS"]
    cmd = draw(st.sampled_from(list(SESSION_COMMANDS)))
    argv = ["sessions", cmd]
    for item in draw(st.lists(st.sampled_from(SESSION_COMMANDS[cmd] + ["--bogus"]), max_size=4)):
        if item in ("QUERY", "TITLE"):
            argv.append(draw(texts))
        elif item == "ID":
            argv.append(draw(st.one_of(texts, st.sampled_from(["latest", "cli:seeded", "seed"]))))
        elif item == "-o":
            argv += ["-o", "@TMP/" + draw(st.sampled_from(OUT_PATHS))]
        elif item == "--limit":
            argv += ["--limit", draw(st.one_of(texts, st.integers(-3, 5).map(str)))]
        elif item == "--format":
            argv += ["--format", draw(st.sampled_from(["md", "pdf", ""]))]
        else:
            argv.append(item)
    return argv


@pytest.fixture
def cli_world(picobot_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A home with one session, stubs for the TUI and --json, and the demo without delay."""
    import picobot_tui.headless.json_protocol as jp
    import picobot_tui.run.runtime as runtime
    import picobot_tui.tui.launch as tui
    from picobot_tui.core.llm.demo import DemoModel

    monkeypatch.setattr(tui, "run_app", lambda opts, **kw: 0)
    monkeypatch.setattr(jp, "run_json", lambda opts, yes: 0)
    monkeypatch.setattr(runtime, "make_model_client", lambda settings, model: DemoModel(0))
    with SessionStore(picobot_home / "sessions").open("cli:seeded") as s:
        s.append({"role": "user", "content": "hello there"})
        s.append({"role": "assistant", "content": "hi"})
    ws = picobot_home.parent / "ws"
    ws.mkdir(exist_ok=True)  # a named workspace must exist
    return {"home": picobot_home, "ws": ws}


@fuzz(300, 4000)
@given(argv=argvs())
def test_any_command_line_gives_a_documented_exit_and_no_traceback(cli_world, argv) -> None:
    tally("CLI arguments (in process)")
    tmp = cli_world["home"].parent
    argv = [a.replace("@WS", str(cli_world["ws"])).replace("@TMP", str(tmp)) for a in argv]
    with saved_logging():
        result = CliRunner().invoke(app, argv, input="")
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        argv,
        result.exception,
        result.output,
    )
    assert result.exit_code in (0, 1, 2), (argv, result.exit_code, result.output)
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert "picobot: " in result.output or "Usage:" in result.output, (argv, result.output)
    # The seeded session is never damaged by anything but an explicit delete or rename.
    path = cli_world["home"] / "sessions" / "cli_seeded.jsonl"
    if path.exists():
        msgs = SessionStore(path.parent).load_messages("cli:seeded")
        assert [m["content"] for m in msgs][:2] == ["hello there", "hi"]


def test_export_to_an_unwritable_path_is_a_usage_error(cli_world) -> None:
    """Regression: `sessions export -o` into a missing directory raised a traceback."""
    target = cli_world["home"].parent / "no" / "such" / "dir" / "x.md"
    result = CliRunner().invoke(app, ["sessions", "export", "latest", "-o", str(target)])
    assert result.exit_code == 2
    assert "picobot: cannot write" in result.output and "Traceback" not in result.output


NASTY = [
    (["agent", "-m", ""], 2, "message is empty"),
    (["agent", "-m", "hi", "--max-tokens", "0", "--model", "demo"], 2, "--max-tokens"),
    (["agent", "-m", "hi", "--max-tokens", "many"], 2, "Invalid value"),
    (["agent", "--json", "-m", "x"], 2, "don't combine"),
    (["agent", "-m", "hi", "--session", "../../etc/passwd", "--model", "demo"], 2, "invalid session id"),
    (["agent", "-m", "hi", "--session", "nope", "--model", "demo"], 2, "no session"),
    (["agent", "--frobnicate"], 2, "No such option"),
    (["sessions", "show", "cli:\x1b[2J"], 2, "invalid session id"),
    # A name too long for the system: Path.is_dir() raised (ENAMETOOLONG), exit 1 and a traceback.
    (["agent", "-m", "hi", "--model", "demo", "--workspace", "/tmp/" + "d" * 300], 2, "cannot be used: File name too long"),
    (["sessions", "show", "cli:" + "b" * 5000], 2, "invalid session id"),
    (["sessions", "export", "latest", "--format", "pdf"], 2, "unknown format"),
]  # fmt: skip


@pytest.mark.e2e
def test_console_script_nasty_arguments(tmp_path) -> None:
    procs = [(argv, code, words, Proc(tmp_path, argv)) for argv, code, words in NASTY]
    for argv, code, words, p in procs:
        tally("CLI arguments (subprocess)")
        assert p.finish(timeout=120) == code, (argv, p.stderr)
        assert words in p.stderr, (argv, p.stderr)
        assert "Traceback" not in p.stderr
        assert b"\x1b" not in p.err
        assert len(p.stderr) < 2_000, (
            argv[:2],
            len(p.stderr),
        )  # a 5,000-character id was echoed whole
