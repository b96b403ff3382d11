"""One warm server per test worker, for console-script calls that do not test a cold start.

About 250 `picobot agent -m/--json` runs in the suite each imported LiteLLM in a new
process (~2.7 s of CPU apiece, two thirds of the suite's CPU). A run handed to a warm
server (picobot_tui/warm) runs the same `picobot_tui.cli.main` in a forked child, with the
client's argv, environment, cwd and fds; tests/server/test_differential.py holds the two
paths to byte-identical output. So each worker starts one server by hand, on first use,
in a runtime dir of its own, and the calls attach to it (`CI=true` with no
`PICOBOT_SERVER`: attach, never start one). A call whose import environment differs from
the server's runs cold by itself, as a user's would.

Cold stays the path of everything listed in `COLD`, every test marked `cold`, and every
call that sets `PICOBOT_SERVER` or `XDG_RUNTIME_DIR` itself (tests/server). `COLD` holds
the files that send signals, kill processes, use a pty or count processes: the warm
hand-over relays those, and they are tested for it in tests/server, but these tests are
about the cold process itself. `PICOBOT_TEST_WARM=0` turns the whole scheme off.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

COLD = (
    "tests/headless/test_cli_e2e.py",  # the main e2e file keeps the cold path fully tested
    "tests/server/",
    "tests/acp/",
    "tests/tui/",
    "tests/reliability/test_signals.py",
    "tests/reliability/test_crash.py",
    "tests/reliability/test_concurrency.py",
    "tests/reliability/test_disk_and_damage.py",
    "tests/reliability/test_approval_truth.py",
    "tests/mcp/test_mcp_orphans.py",
    "tests/mcp/test_mcp_stdio.py",
    "tests/mcp/test_mcp_workspace.py",
    "tests/headless/test_doctor.py",
    "tests/headless/test_onboard_key.py",
    "tests/headless/test_workspace.py",
)
"""Paths (relative to the checkout) whose tests always run cold."""

cold_now = True
"""Set per test by tests/conftest.py: whether this test's calls run cold."""

_runtime: str | None = None
_home: str | None = None
_broken = False


def enabled() -> bool:
    return os.environ.get("PICOBOT_TEST_WARM", "1") != "0"


def is_cold(nodeid: str, marked: bool) -> bool:
    return marked or not enabled() or nodeid.startswith(COLD)


def _base_env(home: str, runtime: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PICOBOT_") and not k.endswith("_API_KEY")
    }
    env.update(
        PICOBOT_HOME=home,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PICOBOT_DEMO__WORDS_PER_SECOND="0",
        XDG_RUNTIME_DIR=runtime,
        CI="true",
    )
    return env


def _start() -> None:
    global _runtime, _home, _broken
    from tests.headless.conftest import picobot_exe

    # Short, under /tmp: a Unix socket's path must fit in 108 bytes.
    runtime = tempfile.mkdtemp(prefix="pbw", dir="/tmp")
    home = tempfile.mkdtemp(prefix="pbw-home")
    # 30 idle minutes: a worker's longest stretch of cold tests outlasted 5 (its server
    # idled out at 07:35 in a run on 0f0c903, after 31 calls, and under CI=true no client
    # starts one: the worker's later calls ran cold). A dead worker's server exits after it.
    Path(home, "config.json").write_text(json.dumps({"server": {"idleMinutes": 30}}))
    res = subprocess.run(
        [*picobot_exe(), "server", "start"],
        env=_base_env(home, runtime),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if res.returncode != 0:  # the calls run cold: slower, never wrong
        _broken = True
        print(f"worker server did not start ({res.returncode}): {res.stdout}{res.stderr}")
        return
    _runtime, _home = runtime, home


def call_env() -> dict[str, str]:
    """The variables that route this test's console-script call: to the worker's server,
    or cold."""
    if cold_now or _broken:
        return {"PICOBOT_SERVER": "0"}
    if _runtime is None:
        _start()
        if _runtime is None:
            return {"PICOBOT_SERVER": "0"}
    return {"CI": "true", "XDG_RUNTIME_DIR": _runtime}


def record_served(directory: Path) -> None:
    """Write how many calls this worker's server ran (`served` in its status) beside the
    call records: a warm run whose calls all fell back to cold would compare equal."""
    served = 0
    if _runtime is not None and _home is not None:
        from tests.headless.conftest import picobot_exe

        res = subprocess.run(
            [*picobot_exe(), "server", "status"],
            env=_base_env(_home, _runtime),
            cwd=_home,
            capture_output=True,
            text=True,
            timeout=120,
        )
        found = re.search(r"^calls\s+(\d+) served", res.stdout, re.M)
        served = int(found.group(1)) if found else 0
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    directory.mkdir(parents=True, exist_ok=True)
    Path(directory, f"served-{worker}.json").write_text(json.dumps({"served": served}))


def stop() -> None:
    """Stop the worker's server (at the end of the worker's session)."""
    global _runtime, _home
    if _runtime is None or _home is None:
        return
    from tests.headless.conftest import picobot_exe

    subprocess.run(
        [*picobot_exe(), "server", "stop"],
        env=_base_env(_home, _runtime),
        cwd=_home,
        capture_output=True,
        timeout=120,
    )
    shutil.rmtree(_runtime, ignore_errors=True)
    shutil.rmtree(_home, ignore_errors=True)
    _runtime = _home = None
