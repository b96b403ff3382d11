"""One warm server per test worker, for console-script calls that do not test a cold start.

About 250 `picobot agent -m/--json` runs in the suite each imported LiteLLM in a new
process (~2.7 s of CPU apiece, two thirds of the suite's CPU). A run handed to a warm
server (picobot_tui/warm) runs the same `picobot_tui.cli.main` in a forked child, with the
client's argv, environment, cwd and fds; tests/server/test_differential.py holds the two
paths to byte-identical output. So each worker starts one server by hand, on first use,
in a runtime dir of its own, and the calls attach to it (`CI=true` with no
`PICOBOT_SERVER`: attach, never start one). A call whose import environment differs from
the server's is routed cold before it reaches the server (which it would otherwise tell to
exit), and a server that went away is started again (`call_env`).

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
import socket
import subprocess
import tempfile
from collections.abc import Mapping
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

tally = {"served": 0, "cold_for_env": 0, "starts": 0}
"""This worker's figures, printed at the end of the run (tests/conftest.py): calls its
servers ran, calls routed cold for their environment, servers started."""

cold_names: dict[str, int] = {}
"""The variables that sent calls cold, with how many calls each (for the same line)."""

cold_now = True
"""Set per test by tests/conftest.py: whether this test's calls run cold."""

_runtime: str | None = None
_home: str | None = None
_broken = False


def enabled() -> bool:
    return os.environ.get("PICOBOT_TEST_WARM", "1") != "0"


def is_cold(nodeid: str, marked: bool) -> bool:
    return marked or not enabled() or nodeid.startswith(COLD)


_SESSION_ENV = dict(os.environ)
"""The worker's environment before any test changed it: a server started from inside a
test that set its own HOME or NO_COLOR (monkeypatch) would have been imported under them,
and every later call that did not set them would have gone cold (CI run on bd51a45)."""


SET_BY_IMPORTS = ("TIKTOKEN_CACHE_DIR",)
"""Variables LiteLLM's import sets in the importing process (tests/core imports it here)."""


def session_env() -> dict[str, str]:
    """The worker's environment before any test ran."""
    return _SESSION_ENV


def _base_env(home: str, runtime: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in _SESSION_ENV.items()
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

    # Short, under /tmp: a Unix socket's path must fit in 108 bytes. A server started again
    # keeps the dirs (and its log, which holds the gone one's count: served_before_restarts).
    runtime = _runtime or tempfile.mkdtemp(prefix="pbw", dir="/tmp")
    home = _home or tempfile.mkdtemp(prefix="pbw-home")
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
    tally["starts"] += 1


def call_env(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The variables that route a console-script call (its environment: `base`, these,
    then the test's `extra`): to the worker's server, or cold.

    A call whose imports would read other values than the server's did (a test's own HOME,
    NO_COLOR, ...) goes cold here rather than to the server: there it would tell the server
    it is stale, the server would exit, and under `CI=true` no call starts another (the
    sandbox tests' HOME did that after a worker's 13th call, and the rest of its ~150 warm
    calls ran cold: the suite's 10 min became 30). A server gone all the same (idle, or
    stale after a reinstall) is started again."""
    if cold_now or _broken:
        return {"PICOBOT_SERVER": "0"}
    if _runtime is None or not _listening(_runtime):
        _start()  # first use, or the server is gone: again
        if _runtime is None or _broken:
            return {"PICOBOT_SERVER": "0"}
    warm = {"CI": "true", "XDG_RUNTIME_DIR": _runtime}
    names = _imports_differ(_runtime, {**base, **warm, **extra})
    if names is not None:
        tally["cold_for_env"] += 1
        for name in names:
            cold_names[name] = cold_names.get(name, 0) + 1
        return {"PICOBOT_SERVER": "0"}
    return warm


def _listening(runtime: str) -> bool:
    """A server's socket is there (a server removes its own when it exits)."""
    return any(Path(runtime, "picobot").glob("server-*.sock"))


def _imports_differ(runtime: str, env: Mapping[str, str]) -> list[str] | None:
    """None when `env` holds the values the server's imports read, else the names whose
    values differ from the server's (the names and their digest come in the hello every
    connection gets; closing after it costs the server nothing: a connection with no
    request is dropped). The client makes the same check."""
    from picobot_tui.warm import stamp, wire

    for sock_path in Path(runtime, "picobot").glob("server-*.sock"):
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(60)
                sock.connect(str(sock_path))
                hello = wire.recv(sock)
        except (OSError, wire.WireError):
            return None  # let the call find out, as a user's would
        names = [str(n) for n in hello.get("env_names", [])]
        if hello.get("env") == stamp.env_digest(names, env):
            return None
        server = _base_env(str(_home), runtime)
        return sorted(n for n in names if env.get(n) != server.get(n))
    return None


def served_total() -> int:
    """Calls this worker's servers ran: the gone ones' counts and the running one's
    (`served` in its status)."""
    served = served_before_restarts()
    if _runtime is not None and _home is not None and _listening(_runtime):
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
        served += int(found.group(1)) if found else 0
    return served


def record_served(directory: Path) -> None:
    """Write how many calls this worker's servers ran beside the call records: a warm run
    whose calls all fell back to cold would compare equal."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    directory.mkdir(parents=True, exist_ok=True)
    Path(directory, f"served-{worker}.json").write_text(json.dumps({"served": tally["served"]}))


def served_before_restarts() -> int:
    """Calls served by this worker's earlier servers (each logs its count as it exits)."""
    if _home is None:
        return 0
    log = Path(_home, "data", "logs", "server.log")
    text = log.read_text(errors="replace") if log.exists() else ""
    return sum(int(n) for n in re.findall(r"exit after (\d+) calls", text))


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
