"""The test workers' own warm servers (tests/support/worker_server.py): a worker whose
server went away (idle past its minutes, or told it was stale by a call imported under
other variables) starts it again for its next call, rather than running every later call
cold under `CI=true`, and the calls the gone server served still count."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.headless.conftest import cli_env, picobot_exe, run_cli_env
from tests.support import worker_server
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = pytest.mark.e2e


def test_a_worker_whose_server_went_away_starts_it_again(
    configured_home: Path, llm_server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not worker_server.enabled():
        pytest.skip("PICOBOT_TEST_WARM=0: every call runs cold")
    monkeypatch.setattr(worker_server, "cold_now", False)  # tests/server is cold otherwise
    llm_server.script([text_reply("one"), text_reply("two")])
    first = run_cli_env(configured_home, ["agent", "-m", "hi"], cli_env(configured_home))
    assert first.returncode == 0, first.stderr
    runtime, home = worker_server._runtime, worker_server._home
    assert runtime is not None and home is not None and worker_server._listening(runtime)
    before = worker_server.served_before_restarts()

    stopped = subprocess.run(  # as an idle server exits
        [*picobot_exe(), "server", "stop"],
        env=worker_server._base_env(home, runtime), cwd=home,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not worker_server._listening(runtime)
    assert worker_server.served_before_restarts() > before  # its "exit after N calls"

    second = run_cli_env(configured_home, ["agent", "-m", "hi"], cli_env(configured_home))
    assert (second.returncode, second.stdout.strip()) == (0, "two"), second.stderr
    assert worker_server._runtime == runtime and worker_server._listening(runtime)
    status = subprocess.run(
        [*picobot_exe(), "server", "status"],
        env=worker_server._base_env(home, runtime), cwd=home,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    served = re.search(r"^calls\s+(\d+) served", status.stdout, re.M)
    assert served is not None and served.group(1) == "1", status.stdout  # the second call
