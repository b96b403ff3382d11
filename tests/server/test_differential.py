"""Differential: headless e2e scenarios (tests/headless/test_cli_e2e.py's) run cold and
through the warm server, and everything they leave is compared byte for byte, times and
ids aside: stdout, stderr, exit code, the session file, the trace line, the files a tool
wrote, and what was sent to the provider. Not a second copy of the e2e assertions: only
"warm == cold" is asserted, plus that the warm run really went through the server."""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import SECRET
from tests.server.support import Rig, normalise_all
from tests.support.openai_server import (
    OpenAITestServer,
    error,
    rate_limited,
    text_reply,
    tool_call_reply,
)

pytestmark = pytest.mark.e2e

JSON_TWO = "\n".join(
    [
        json.dumps({"type": "message", "content": "first"}),
        "this is not json",
        json.dumps({"type": "message", "content": "second"}),
    ]
)


@dataclass(frozen=True)
class Scenario:
    args: tuple[str, ...]
    steps: tuple[Any, ...] = ()
    config: str = "server"
    """"server" (the local test server), "none" (no config file) or "bad"."""
    input: str | None = None
    before: tuple[tuple[str, ...], ...] = ()
    """Calls made first, in the same mode (e.g. the session a later call resumes)."""
    files: dict[str, str] = field(default_factory=dict)
    protocol_errors_float: bool = False
    """--json's reader thread reports a bad input line as soon as it reads it, while the
    first turn runs on the event loop: where that `error` event lands among the turn's
    events is a race in any run (a cold run's `import litellm` holds the GIL and puts it
    after `budget`; warm, it comes first). Its place is left out of the comparison, the
    order of every other event and the error itself are not."""


SCENARIOS = {
    "answer": Scenario(
        ("agent", "-m", "what is it?", "--no-stream"),
        (text_reply("The answer is 42.", usage=(31, 6)),),
    ),
    "stream-tools-yes": Scenario(
        ("agent", "-m", "go", "--stream", "--show-tools", "--yes"),
        (
            tool_call_reply("read_file", {"path": "notes.txt"}, id="call_r"),
            tool_call_reply("exec", {"command": "echo ran-it"}, id="call_x"),
            text_reply("Read it and ran it.", chunk_size=3),
        ),
        files={"notes.txt": "hello"},
    ),
    "write-file-yes": Scenario(
        ("agent", "-m", "write it", "--yes"),
        (
            tool_call_reply("write_file", {"path": "a.txt", "content": "hi\n"}, id="w1"),
            text_reply("written"),
        ),
    ),
    "refused-without-tty": Scenario(
        ("agent", "-m", "make it"),
        (tool_call_reply("exec", {"command": "touch made"}, id="c1"), text_reply("ok")),
    ),
    "max-tokens-markdown": Scenario(
        ("agent", "-m", "hi", "--max-tokens", "77", "--markdown"),
        (text_reply("# Title\n\n- one\n- **two**\n"),),
    ),
    "resume-latest": Scenario(
        ("agent", "-m", "second", "--session", "latest"),
        (text_reply("first answer"), text_reply("second answer")),
        before=(("agent", "-m", "first"),),
    ),
    "unknown-session": Scenario(("agent", "-m", "hi", "--session", "nope")),
    "rate-limit-retried": Scenario(
        ("agent", "-m", "hi"), (rate_limited("0"), text_reply("after retry"))
    ),
    "503-twice": Scenario(("agent", "-m", "hi"), (error(503), error(503))),
    "auth-error-logs": Scenario(("agent", "-m", "hi", "--logs"), (error(401),)),
    "no-key": Scenario(("agent", "-m", "hi", "--model", "openai/gpt-4o-mini"), config="none"),
    "bad-config": Scenario(("agent", "-m", "hi"), config="bad"),
    "demo": Scenario(("agent", "-m", "show me", "--model", "demo"), config="none"),
    "empty-message": Scenario(("agent", "-m", "  ")),
    "json-two-messages": Scenario(
        ("agent", "--json"),
        (text_reply("one"), text_reply("two")),
        input=JSON_TWO + "\n",
        protocol_errors_float=True,
    ),
}


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    rig = Rig()
    try:
        rig.start(tmp_path_factory.mktemp("warm-home"))
        yield rig
    finally:
        rig.close()


def _home(root: Path, scenario: Scenario, llm: OpenAITestServer) -> Path:
    home = root / "picobot-home"
    (home / "workspace").mkdir(parents=True)
    for name, text in scenario.files.items():
        (home / "workspace" / name).write_text(text)
    if scenario.config == "server":
        config = {
            "agents": {"defaults": {"model": "openai/test-model", "retryBackoff": 0.05}},
            "providers": {"openai": {"apiKey": SECRET, "apiBase": llm.url}},
        }
        (home / "config.json").write_text(json.dumps(config))
    elif scenario.config == "bad":
        (home / "config.json").write_text('{"agents": {"defaults": {"maxTokens": "x"}}}')
    return home


def _tree(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        str(p.relative_to(folder)): p.read_text(errors="replace")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _outcome(rig: Rig, root: Path, scenario: Scenario, llm: OpenAITestServer, server: str):
    llm.script(list(scenario.steps))
    llm.clear()
    home = _home(root, scenario, llm)
    for args in scenario.before:
        assert rig.run(home, *args, PICOBOT_SERVER=server).returncode == 0
    res = rig.run(home, *scenario.args, input=scenario.input, PICOBOT_SERVER=server)
    traces = home / "data" / "traces" / "traces.jsonl"
    stdout: Any = res.stdout
    if scenario.protocol_errors_float:
        lines = stdout.splitlines()
        floating = [line for line in lines if '"kind": "protocol"' in line]
        stdout = {"in order": [x for x in lines if x not in floating], "anywhere": floating}
    out = {
        "code": res.returncode,
        "stdout": stdout,
        "stderr": res.stderr,
        "sessions": _tree(home / "sessions"),
        "trace": traces.read_text().splitlines()[-1] if traces.exists() else None,
        "workspace": _tree(home / "workspace"),
        "sent": [r.body for r in llm.completions],
    }
    return normalise_all(out, home)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_warm_is_cold(name: str, warm: Rig, llm_server: OpenAITestServer, tmp_path: Path) -> None:
    scenario = SCENARIOS[name]
    cold = _outcome(warm, tmp_path / "c", scenario, llm_server, server="0")
    served = warm.served()
    hot = _outcome(warm, tmp_path / "w", scenario, llm_server, server="1")
    assert warm.served() == served + 1 + len(scenario.before), "the warm run went cold"
    for key in cold:  # one key at a time, as a diff of lines
        if hot[key] != cold[key]:
            lines = [json.dumps(v, indent=1, sort_keys=True).splitlines() for v in (cold, hot)]
            diff = difflib.unified_diff(lines[0], lines[1], "cold", "warm", lineterm="")
            pytest.fail(f"{key} differs:\n" + "\n".join(diff))
    shutil.rmtree(tmp_path / "c"), shutil.rmtree(tmp_path / "w")
