"""Each row of the exit-code table (run/exit_codes.TABLE: docs/cli.md and `picobot --help`
print it) happens through the console script with `--output-format json`: the exit code
and the result's `outcome` are the row's. A row without a scenario here fails the suite."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.run import exit_codes
from tests.headless.conftest import run_cli
from tests.reliability.support import Proc
from tests.support.openai_server import (
    OpenAITestServer,
    error,
    slow,
    text_reply,
    tool_call_reply,
)

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
JSON = ("--output-format", "json")


def set_defaults(home: Path, **defaults: Any) -> None:
    path = home / "config.json"
    cfg = json.loads(path.read_text())
    cfg["agents"]["defaults"].update(defaults)
    path.write_text(json.dumps(cfg))


Outcome = tuple[int, dict[str, Any]]


def _result(code: int, stdout: str) -> Outcome:
    [result] = [json.loads(x) for x in stdout.splitlines()]
    assert result["exit_code"] == code, result
    return code, result


def _run(home: Path, *args: str) -> Outcome:
    res = run_cli(home, "agent", *args, *JSON)
    return _result(res.returncode, res.stdout)


def answered(home: Path, llm: OpenAITestServer) -> Outcome:
    llm.script([text_reply("fine")])
    return _run(home, "-m", "hi")


def denied_then_answered(home: Path, llm: OpenAITestServer) -> Outcome:
    llm.script([tool_call_reply("exec", {"command": "touch x"}), text_reply("could not")])
    code, result = _run(home, "-m", "touch x")  # no terminal, no --yes: refused
    assert [c["status"] for c in result["tool_calls"]] == ["denied"]
    return code, result


def provider_error(home: Path, llm: OpenAITestServer) -> Outcome:
    llm.script([error(400, "bad request")])
    return _run(home, "-m", "hi")


def failures_in_a_row(home: Path, llm: OpenAITestServer) -> Outcome:
    # Failed calls are counted after their retries, across turns: one -m turn's call is one.
    set_defaults(home, maxRetries=1, maxConsecutiveFailures=1)
    llm.script([error(500, "down"), error(500, "down")])
    code, result = _run(home, "-m", "hi")
    assert result["error_kind"] == "too_many_failures", result
    assert len(llm.completions) == 2  # the call and its one retry
    return code, result


def iterations(home: Path, llm: OpenAITestServer) -> Outcome:
    set_defaults(home, maxToolIterations=1)
    llm.script([tool_call_reply("list_dir", {"path": "."}, id=f"c{i}") for i in range(3)])
    return _run(home, "-m", "look")


def budget(home: Path, llm: OpenAITestServer) -> Outcome:
    set_defaults(home, tokenBudget=8000)
    code, result = _run(home, "-m", "word " * 12_000)
    assert not llm.completions
    return code, result


def invalid_output(home: Path, llm: OpenAITestServer) -> Outcome:
    (home / "s.json").write_text('{"type": "object", "required": ["x"]}')
    llm.script([text_reply("{}"), text_reply("[]")])
    return _run(home, "-m", "give x", "--output-schema", str(home / "s.json"))


def usage(home: Path, llm: OpenAITestServer) -> Outcome:
    return _run(home, "-m", "hi", "--session", "no-such-session")


def by_signal(sig: signal.Signals) -> Callable[[Path, OpenAITestServer], Outcome]:
    def scenario(home: Path, llm: OpenAITestServer) -> Outcome:
        llm.script([slow(0.3, text_reply("word " * 60, chunk_size=5))])
        proc = Proc(home, ["agent", "-m", "talk", *JSON])
        try:
            proc.wait_until(lambda: bool(llm.completions), timeout=120)
            proc.popen.send_signal(sig)
            code = proc.finish(timeout=60)
        finally:
            if proc.popen.poll() is None:
                proc.popen.kill()
                proc.finish()
        return _result(code, proc.out.decode())

    return scenario


SCENARIOS: dict[str, Callable[[Path, OpenAITestServer], Outcome]] = {
    "the model answered (after a denied approval too)": answered,
    "an agent or provider error the retries did not cure": provider_error,
    "maxConsecutiveFailures model calls failed in a row": failures_in_a_row,
    "stopped at maxToolIterations": iterations,
    "the token budget is spent": budget,
    "the answer breaks --output-schema, after one retry": invalid_output,
    "a usage or config error: nothing was sent": usage,
    "interrupted (SIGINT, Ctrl+C); the turn is saved": by_signal(signal.SIGINT),
    "terminated (SIGTERM); the turn is saved": by_signal(signal.SIGTERM),
}


def test_every_row_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == sorted(case for _, _, case in exit_codes.TABLE)


@pytest.mark.parametrize(("code", "outcome", "case"), exit_codes.TABLE, ids=lambda v: str(v))
def test_each_row_of_the_table(
    configured_home: Path, llm_server: OpenAITestServer, code: int, outcome: str, case: str
) -> None:
    got_code, result = SCENARIOS[case](configured_home, llm_server)
    assert (got_code, result["outcome"]) == (code, outcome), result


def test_a_denied_approval_alone_does_not_fail_the_run(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    code, result = denied_then_answered(configured_home, llm_server)
    assert (code, result["outcome"], result["answer"]) == (0, "final", "could not")


def test_the_docs_and_help_print_the_same_table(picobot_home: Path) -> None:
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\d+)` \| `([a-z_]+)` \| (.+?) \|$", doc, re.M)
    assert [(int(c), o, case) for c, o, case in rows] == list(exit_codes.TABLE)
    res = run_cli(picobot_home, "--help", COLUMNS="200")
    assert res.returncode == 0
    for code, outcome, case in exit_codes.TABLE:
        assert re.search(rf"{code}\s+{outcome}\s+{re.escape(case)}", res.stdout), case
