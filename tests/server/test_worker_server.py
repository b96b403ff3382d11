"""The test workers' own warm servers (tests/support/worker_server.py): a call whose
imports would read other values (here a HOME of its own, as the sandbox tests give) runs
cold and leaves the server serving; a worker whose server went away (idle past its
minutes, or stale) starts it again for its next call, rather than running every later
call cold under `CI=true`; and the calls a gone server served still count."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.headless.conftest import cli_env, picobot_exe, run_cli_env
from tests.support import worker_server
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = pytest.mark.e2e


def _server(*args: str) -> subprocess.CompletedProcess[str]:
    """`picobot server ARGS` against the worker's server, as the worker runs it."""
    runtime, home = worker_server._runtime, worker_server._home
    assert runtime is not None and home is not None
    return subprocess.run(
        [*picobot_exe(), "server", *args],
        env=worker_server._base_env(home, runtime), cwd=home,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _served() -> int:
    found = re.search(r"^calls\s+(\d+) served", _server("status").stdout, re.M)
    return int(found.group(1)) if found else -1


def _log() -> str:
    """The worker's server log (for a failure's message)."""
    path = Path(str(worker_server._home), "data", "logs", "server.log")
    return path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"


@pytest.fixture
def warm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if not worker_server.enabled():
        pytest.skip("PICOBOT_TEST_WARM=0: every call runs cold")
    monkeypatch.setattr(worker_server, "cold_now", False)  # tests/server is cold otherwise
    yield


@pytest.mark.usefixtures("warm")
def test_a_call_under_another_home_runs_cold_and_the_server_stays(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    llm_server.script([text_reply("one"), text_reply("two"), text_reply("three")])
    runtime = worker_server._runtime
    before = _served() if runtime is not None and worker_server._listening(runtime) else 0
    first = run_cli_env(configured_home, ["agent", "-m", "hi"], cli_env(configured_home))
    assert (first.returncode, first.stdout.strip()) == (0, "one"), first.stderr
    runtime = worker_server._runtime
    assert runtime is not None and worker_server._listening(runtime), _log()
    served = _served()
    assert served == before + 1, _log()  # served, whatever the tests before this one set

    other = tmp_path / "another-home"
    other.mkdir()
    env = cli_env(configured_home, HOME=str(other))
    assert env.get("PICOBOT_SERVER") == "0"  # routed cold: HOME is read by the imports
    second = run_cli_env(configured_home, ["agent", "-m", "hi"], env)
    assert (second.returncode, second.stdout.strip()) == (0, "two"), second.stderr
    assert worker_server._listening(runtime), _log()  # not told it is stale

    third = run_cli_env(configured_home, ["agent", "-m", "hi"], cli_env(configured_home))
    assert (third.returncode, third.stdout.strip()) == (0, "three"), third.stderr
    assert _served() == served + 1, _log()  # the cold call did not count, this one did


@pytest.mark.usefixtures("warm")
def test_a_worker_whose_server_went_away_starts_it_again(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("one"), text_reply("two")])
    first = run_cli_env(configured_home, ["agent", "-m", "hi"], cli_env(configured_home))
    assert first.returncode == 0, first.stderr
    runtime = worker_server._runtime
    assert runtime is not None and worker_server._listening(runtime), _log()
    before = worker_server.served_before_restarts()

    stopped = _server("stop")  # as an idle server exits
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not worker_server._listening(runtime)
    assert worker_server.served_before_restarts() > before, _log()  # its "exit after N calls"

    second = run_cli_env(configured_home, ["agent", "-m", "hi"], cli_env(configured_home))
    assert (second.returncode, second.stdout.strip()) == (0, "two"), second.stderr
    assert worker_server._runtime == runtime and worker_server._listening(runtime), _log()
    assert _served() == 1, _log()  # the second call, by the new server
