"""A signal the caller ignores (a shell without job control starts `picobot … &` with
SIGINT and SIGQUIT ignored; `nohup` ignores SIGHUP) stays ignored, cold and warm alike,
and a blocked one stays blocked: the warm child starts from the caller's dispositions, as
exec gives a cold run, not from the server's (run/inherited.py, warm/child.py)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import home_workspace, picobot_exe
from tests.server.support import Rig, children, wait_for
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e

LAUNCH = (
    "import os, signal, sys\n"
    "for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):\n"
    "    signal.signal(s, signal.SIG_IGN)\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])\n"
    "os.execvp(sys.argv[1], sys.argv[1:])\n"
)
"""What such a shell does before it execs the job (no preexec_fn: the test server's
threads make that unsafe)."""
IGNORED = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)


def _launch(rig: Rig, home: Path, warm: bool, *args: str) -> subprocess.Popen[str]:
    env = rig.env(home, PICOBOT_SERVER="1" if warm else "0")
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *picobot_exe(), *args],
        cwd=home_workspace(home), env=env, text=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def _bits(status: str, field: str) -> int:
    [line] = [x for x in status.splitlines() if x.startswith(field + ":")]
    return int(line.split()[1], 16)


def _mask(*sigs: int) -> int:
    return sum(1 << (s - 1) for s in sigs)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_ignored_signals_stay_ignored_and_do_not_end_a_headless_turn(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig, warm: bool
) -> None:
    """While a tool runs, the agent's process (cold: picobot; warm: the server's child)
    ignores SIGINT, SIGQUIT and SIGHUP with no handler of its own and blocks SIGUSR1, and
    so does the tool's; then those three signals are sent, and the turn goes on and
    answers. (Before: warm, the child had Python's defaults and the relayed SIGQUIT killed
    it; cold and warm, picobot's SIGINT handler cancelled the turn, exit 130.)"""
    status = rig.start(configured_home) if warm else {}
    served = rig.served() if warm else 0
    workspace = configured_home / "workspace"
    # In a script: exec's guard refuses a command naming a path outside the workspace.
    (workspace / "wait.sh").write_text(
        "grep -E '^Sig(Ign|Blk)' /proc/self/status\ntouch started\n"
        "while [ ! -e go ]; do sleep 0.05; done\n"
    )
    llm_server.script(
        [tool_call_reply("exec", {"command": "sh wait.sh"}), text_reply("carried on")]
    )
    proc = _launch(rig, configured_home, warm, "agent", "-m", "wait", "--yes")
    try:
        wait_for(lambda: (workspace / "started").exists(), "the tool to start")
        agent = (
            wait_for(lambda: children(status["pid"]), "the call's child")[0] if warm else proc.pid
        )
        own = Path(f"/proc/{agent}/status").read_text()
        for sig in IGNORED:
            proc.send_signal(sig)  # the client's pid: the launcher exec'd into it
        # The signals reach the agent while it waits for the tool; only then is it let go.
        (workspace / "go").touch()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert _bits(own, "SigIgn") & _mask(*IGNORED) == _mask(*IGNORED), own
    assert _bits(own, "SigCgt") & _mask(*IGNORED) == 0, own
    assert _bits(own, "SigBlk") & _mask(signal.SIGUSR1), own
    [tool] = [
        m["content"] for m in llm_server.completions[-1].body["messages"] if m["role"] == "tool"
    ]
    assert _bits(tool, "SigIgn") & _mask(signal.SIGQUIT), tool  # exec's reaper resets the others
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}{err}"
    assert "carried on" in out and "Traceback" not in err
    if warm:
        assert rig.served() == served + 1, "the call went cold"


@pytest.mark.parametrize("front", ["headless", "tui"])
def test_no_front_end_handler_is_installed_for_an_ignored_signal(
    monkeypatch: pytest.MonkeyPatch, front: str
) -> None:
    """In process: with SIGINT in the inherited set, the headless turn's and the TUI's
    handlers leave it as it was and still take SIGTERM."""
    from picobot_tui.run import inherited
    from picobot_tui.run.signals import install_signal_handlers
    from picobot_tui.tui.exit_signals import ExitSignals

    monkeypatch.setattr(inherited, "_ignored", frozenset({int(signal.SIGINT)}))
    watched = (signal.SIGINT, signal.SIGTERM)
    outside = {s: signal.getsignal(s) for s in watched}

    async def install() -> tuple[list[Any], list[Any]]:
        loop = asyncio.get_running_loop()
        before = [signal.getsignal(s) for s in watched]  # asyncio.run's own SIGINT handler
        if front == "headless":
            task = asyncio.current_task()
            assert task is not None
            install_signal_handlers(task, [])
        else:
            ExitSignals(lambda code: None).install()
        now = [signal.getsignal(s) for s in watched]
        for s in watched:
            loop.remove_signal_handler(s)
        return before, now

    try:
        before, now = asyncio.run(install())
    finally:
        for s, handler in outside.items():
            signal.signal(s, handler)
    assert now[0] is before[0], "a handler was installed for the ignored SIGINT"
    assert now[1] is not before[1], "SIGTERM is not ignored: its handler is installed"
