"""Test-wide setup: offline LiteLLM, and a hermetic PICOBOT_HOME for every test."""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import call_record, protocol_tap, worker_server

# LiteLLM must never fetch its price map: tests run offline.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

# No test starts or uses a warm server by accident (a process left running, a socket shared
# between tests): the server's own tests (tests/server) opt in, each with its own runtime
# dir, and stop their server at teardown.
os.environ["PICOBOT_SERVER"] = "0"
NO_SERVER = ("PICOBOT_SERVER", "0")

# The suite runs as from a terminal, however it was started: a shell without job control
# starts a background job (`cmd &`) with SIGINT and SIGQUIT ignored, and every process of
# the run inherits that. A cold `picobot acp` then ignored the SIGINT a test sent it (CI
# run 4 on 49f7d7d: SigIgn 0x1001006 in the hung process), unless an earlier in-process
# test in the same worker had put Python's handler back (asyncio does, on removing its
# SIGINT handler): a flaky "did not exit".
for _sig in (signal.SIGINT, signal.SIGQUIT):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, signal.default_int_handler if _sig == signal.SIGINT else signal.SIG_DFL)

# Every `--json` / `--output-format json` line a test receives is checked against the
# published schema (tests/support/protocol_tap.py).
protocol_tap.install()

INSTANT_DEMO = ("PICOBOT_DEMO__WORDS_PER_SECOND", "0")
"""The demo model answers at once in tests (it types 50 words a second for users); a test
about its pacing sets `demo.wordsPerSecond` itself."""


@pytest.fixture
def keep_picobot_logging() -> Iterator[None]:
    """An Agent adds a file handler to the `picobot` logger: take it off after the test."""
    logger = logging.getLogger("picobot")
    handlers, level = list(logger.handlers), logger.level
    yield
    for h in logger.handlers:
        if h not in handlers:
            h.close()
    logger.handlers, logger.level = handlers, level


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False, help="run long fuzzing runs")
    parser.addoption(
        "--record-calls",
        metavar="DIR",
        default=None,
        help="record each console-script call's normalised output in DIR "
        "(tests/support/call_record.py; compare two runs with scripts/compare_calls.py)",
    )


def pytest_configure(config: pytest.Config) -> None:
    raw = config.getoption("--record-calls")
    call_record.directory = Path(raw).resolve() if raw else None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a pytest-xdist worker: hand the reliability figures to the controller."""
    from tests.reliability import fuzz

    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["reliability"] = json.dumps({"ran": dict(fuzz.RAN), "notes": fuzz.NOTES})
        out["protocol_lines"] = protocol_tap.validated
        out["warm"] = json.dumps(worker_server.tally)
        out["warm_names"] = json.dumps(worker_server.cold_names)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """On the controller: add a finished worker's figures to the run's."""
    from tests.reliability import fuzz

    raw = getattr(node, "workeroutput", {}).get("reliability")
    if raw:
        got = json.loads(raw)
        fuzz.RAN.update(got["ran"])
        fuzz.NOTES.extend(got["notes"])
    protocol_tap.validated += int(getattr(node, "workeroutput", {}).get("protocol_lines", 0))
    for key, n in json.loads(getattr(node, "workeroutput", {}).get("warm", "{}")).items():
        worker_server.tally[key] += int(n)
    for key, n in json.loads(getattr(node, "workeroutput", {}).get("warm_names", "{}")).items():
        worker_server.cold_names[key] = worker_server.cold_names.get(key, 0) + int(n)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.reliability import fuzz

    if fuzz.RAN:
        terminalreporter.section("reliability: examples run per target")
        for target, n in sorted(fuzz.RAN.items()):
            terminalreporter.write_line(f"{target:<60} {n:>7}")
    if fuzz.NOTES:
        terminalreporter.section("reliability: figures")
        for line in fuzz.NOTES:
            terminalreporter.write_line(line)
    warm = worker_server.tally
    names = ", ".join(f"{k} {n}" for k, n in sorted(worker_server.cold_names.items()))
    if warm["starts"]:
        # A drop in "served" is a slower suite with every test still green: say it.
        terminalreporter.write_line(
            f"warm servers: {warm['served']} console-script calls served, "
            f"{warm['cold_for_env']} routed cold for their environment"
            f"{names and f' ({names})'}, "
            f"{warm['starts']} servers started"
        )
    if protocol_tap.validated:
        terminalreporter.write_line(
            f"protocol: {protocol_tap.validated} output lines checked against "
            "docs/protocol.schema.json"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="long run: pass --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _worker_server() -> Iterator[None]:
    """The worker's warm server (tests/support/worker_server.py), stopped when it ends."""
    yield
    worker_server.tally["served"] = worker_server.served_total()
    if call_record.directory is not None:
        worker_server.record_served(call_record.directory)
    worker_server.stop()


@pytest.fixture(autouse=True)
def _protocol_lines() -> Iterator[None]:
    """Fail the test that received a protocol line the schema does not allow."""
    protocol_tap.start()
    yield
    problems = protocol_tap.finish()
    if problems:
        pytest.fail("protocol lines that break docs/protocol.schema.json:\n" + "\n".join(problems))


@pytest.fixture(autouse=True)
def picobot_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Path]:
    """Every test gets its own ~/.picobot and no provider keys from the environment.

    It also runs in `<home>/workspace` (made here): the workspace is the current directory
    unless one is named, so a test that names none works there (as tests did when that was
    the default workspace), never in the checkout the tests run from."""
    marked = request.node.get_closest_marker("cold") is not None
    worker_server.cold_now = worker_server.is_cold(request.node.nodeid, marked)
    call_record.start_test(request.node.nodeid)
    home = tmp_path / "picobot-home"
    home.mkdir()
    (home / "workspace").mkdir()
    monkeypatch.chdir(home / "workspace")
    monkeypatch.setenv("PICOBOT_HOME", str(home))
    for key in list(os.environ):
        if key.startswith("PICOBOT_") and key != "PICOBOT_HOME":
            monkeypatch.delenv(key)
    monkeypatch.setenv(*INSTANT_DEMO)
    monkeypatch.setenv(*NO_SERVER)
    # /copy inside tmux also loads tmux's buffer: never the one of a developer's own tmux.
    monkeypatch.delenv("TMUX", raising=False)
    yield home
