"""SIGINT and SIGTERM at varied moments: picobot ends cleanly with 130 / 143, no traceback,
and the session is consistent as written (every started tool call has a result, a partial
answer is kept and marked interrupted) without any repair on resume."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.fuzz import tally
from tests.reliability.support import (
    Proc,
    Router,
    check_session_file,
    conversation_problems,
    provider_view,
    session_paths,
    write_config,
)
from tests.support.openai_server import (
    OpenAITestServer,
    slow,
    text_reply,
    tool_call_reply,
)

pytestmark = pytest.mark.e2e

EXPECTED = {signal.SIGINT: 130, signal.SIGTERM: 143}


@dataclass
class SignalCase:
    id: str
    moment: str
    sig: signal.Signals
    mode: str
    steps: list[Any]
    wait: Callable[[Proc, Router], Any]
    yes: bool = True


def _event(kind: str) -> Callable[[Proc, Router], bool]:
    return lambda p, r: any(e["type"] == kind for e in p.events())


def cases() -> list[SignalCase]:
    # Distinct words (LiteLLM aborts a stream of 100 identical chunks), for minutes.
    long = slow(0.03, text_reply(" ".join(f"w{i}" for i in range(3000)), chunk_size=5))
    out: list[SignalCase] = []
    here = Path.cwd()  # the case's picobot runs here (its home has no workspace)
    for sig in (signal.SIGINT, signal.SIGTERM):
        n = sig.name.lower()
        out += [
            SignalCase(f"{n}-stream-text", "stream", sig, "text", [long],
                       lambda p, r: len(p.out) >= 20),
            SignalCase(f"{n}-stream-json", "stream", sig, "json", [long], _event("text_delta")),
            SignalCase(  # signalled once the command runs (it made its marker) + 50 ms
                f"{n}-tool", "tool", sig, "json" if sig == signal.SIGINT else "text",
                [tool_call_reply("exec", {"command": f"touch {n}.ran && sleep 30"}, id=f"{n}_x"),
                 text_reply("x")],
                lambda p, r, ran=here / f"{n}.ran": ran.exists(),
            ),
            SignalCase(
                f"{n}-between", "between", sig, "text",
                [tool_call_reply("list_dir", {}, id=f"{n}_l"),
                 slow(0, text_reply("late"), first_byte=30)],
                lambda p, r, c=f"{n}-between": r.count(c) >= 2,
            ),
            SignalCase(
                f"{n}-approval", "approval", sig, "json",
                [tool_call_reply("write_file", {"path": "f.txt", "content": "x"}, id=f"{n}_w"),
                 text_reply("x")],
                _event("approval_requested"), yes=False,
            ),
        ]  # fmt: skip
    return out


def run_case(case: SignalCase, home: Path, router: Router) -> tuple[Proc, int]:
    router.add(case.id, case.steps)
    message = f"{case.id}: go"
    args = ["--yes"] if case.yes else []
    if case.mode == "json":
        proc = Proc(home, ["agent", "--json", *args], stdin=True)
        proc.send({"type": "message", "content": message})
    else:
        proc = Proc(home, ["agent", "-m", message, *args], tty=True)  # tokens stream to a tty
    try:
        proc.wait_until(lambda: case.wait(proc, router), timeout=120)
        time.sleep(0.05)
        proc.popen.send_signal(case.sig)
        code = proc.finish(timeout=60)
    finally:
        if proc.popen.poll() is None:
            proc.popen.kill()
            proc.finish()
    return proc, code


@pytest.fixture(scope="module")
def server_router() -> Iterator[tuple[OpenAITestServer, Router]]:
    router = Router()
    with OpenAITestServer(default=router) as server:
        yield server, router


CASE_IDS = [c.id for c in cases()]
"""The ten cases (SIGINT and SIGTERM x five moments), one test each."""


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_sigint_and_sigterm_end_cleanly_at_every_moment(
    tmp_path, server_router, case_id: str
) -> None:
    """One case a test (the ten used to run in one test, two at a time): pytest-xdist
    spreads them over its workers instead of one worker holding them all."""
    server, router = server_router
    # Built here, not at collection: the cases name files in this test's current directory.
    [case] = [c for c in cases() if c.id == case_id]
    write_config(tmp_path / case.id, server.url)
    proc, code = run_case(case, tmp_path / case.id, router)
    tally(f"{case.sig.name} at a moment (subprocess)")
    home = tmp_path / case.id
    why = []
    if code != EXPECTED[case.sig]:
        why.append(f"exit {code}, expected {EXPECTED[case.sig]}")
    if "Traceback" in proc.stderr:
        why.append("traceback on stderr")
    [path] = session_paths(home)
    check = check_session_file(path)
    if check.warnings or check.damaged:
        why.append(f"session file: {check.warnings + check.damaged}")
    msgs = check.messages
    why += conversation_problems(provider_view(msgs))
    if case.moment == "stream":
        last = msgs[-1]
        if not (
            last["role"] == "assistant"
            and last.get("interrupted")
            and last["content"].startswith("w0 w1")
        ):
            why.append(f"partial answer not kept as interrupted: {last}")
    if case.moment in ("tool", "approval"):
        statuses = [m.get("status") for m in msgs if m["role"] == "tool"]
        if statuses != ["cancelled"]:
            why.append(f"tool results {statuses}, expected one cancelled")
    if case.moment == "between":  # the round is kept, then the interrupted marker
        last = msgs[-1]
        if [m["role"] for m in msgs][-3:] != ["assistant", "tool", "assistant"] or not (
            last.get("interrupted") and last["content"] == ""
        ):
            why.append(f"roles {[m['role'] for m in msgs]}, last {last}")
    traces = (home / "data/traces/traces.jsonl").read_text().splitlines()
    if json.loads(traces[-1])["outcome"] != "cancelled":
        why.append(f"trace outcome {json.loads(traces[-1])['outcome']}")
    if case.moment in ("tool", "approval"):
        # Its real duration: the call ran (or waited to be approved) for the 50 ms slept
        # before the signal, at least (it was traced as 0.0).
        [call] = json.loads(traces[-1])["tool_calls"]
        if call["status"] != "cancelled" or call["duration_ms"] < 50:
            why.append(f"traced tool call {call}")
    if case.mode == "json":
        finished = [e for e in proc.events() if e["type"] == "turn_finished"]
        if [e["outcome"] for e in finished] != ["cancelled"]:
            why.append(f"turn_finished events {finished}")
    assert not why, f"{case.id}: {why}\n{proc.stderr[-500:]}"


@pytest.mark.parametrize("server", ["0", "1"], ids=["cold", "warm-client"])
def test_sigterm_before_the_loop_starts_still_exits_143(tmp_path, server: str) -> None:
    """SIGTERM while picobot is still starting (here: blocked reading a config.json that is
    a FIFO, before the loop's handlers exist) ends it with 143 too, not by the default
    action (killed by signal 15), and without a traceback. (SIGINT there is turned into a
    cancellation by asyncio, which lands once the blocking read returns.) With the warm
    server on, the stdlib client reads config.json first (`server.enabled`): a CI run got
    -15 there."""
    sig = signal.SIGTERM
    home = tmp_path / "home"
    home.mkdir()
    fifo = home / "config.json"
    os.mkfifo(fifo)
    proc = Proc(home, ["agent", "-m", "hello"], PICOBOT_SERVER=server)
    try:
        deadline = time.monotonic() + 60
        while True:  # opening the write end succeeds once picobot is reading the config
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert time.monotonic() < deadline and proc.popen.poll() is None, proc.stderr
                time.sleep(0.01)
        try:
            proc.popen.send_signal(sig)
            code = proc.finish(timeout=60)
        finally:
            os.close(fd)
    finally:
        if proc.popen.poll() is None:
            proc.popen.kill()
            proc.finish()
    assert code == EXPECTED[sig], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (home / "sessions").exists()


@pytest.mark.e2e
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_tui_sigterm_mid_stream_exits_143_restores_the_terminal_and_keeps_the_answer(
    tmp_path, sig, code
) -> None:
    """The full-screen app in a pseudo-terminal, killed with SIGTERM (or `kill -INT`) while
    an answer streams: exit 143 (130), the terminal is given back (alternate screen left),
    the partial answer is in the session marked interrupted."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    from tests.headless.conftest import cli_env, picobot_exe

    router = Router()
    words = " ".join(f"w{i}" for i in range(600))
    router.add("tui", [slow(0.05, text_reply(words, chunk_size=5))])
    with OpenAITestServer(default=router) as server:
        write_config(tmp_path, server.url)
        env = cli_env(tmp_path, TERM="xterm-256color")
        # Named, so trusted: an implicit workspace would open on the trust question first.
        workspace = tmp_path / "workspace"
        workspace.mkdir(exist_ok=True)
        argv = [*picobot_exe(), "agent", "--workspace", str(workspace)]
        pid, fd = pty.fork()
        if pid == 0:  # pragma: no cover - the child
            os.execvpe(argv[0], argv, env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        out = bytearray()

        def pump(until, timeout: float = 60) -> None:
            deadline = time.monotonic() + timeout
            while not until() and time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.05)
                if ready:
                    try:
                        out.extend(os.read(fd, 65536))
                    except OSError:
                        return

        try:
            pump(lambda: b"\x1b[?1049h" in out and len(out) > 2000)  # the app is up
            os.write(fd, b"tui: talk to me")
            pump(lambda: False, 0.5)
            os.write(fd, b"\r")
            pump(lambda: router.count("tui") >= 1)
            pump(lambda: b"w20" in out)
            mark = len(out)
            os.kill(pid, sig)
            pump(lambda: b"\x1b[?1049l" in out[mark:], 30)
            deadline = time.monotonic() + 30
            while (status := os.waitpid(pid, os.WNOHANG))[0] == 0:
                assert time.monotonic() < deadline, "the app did not exit"
                pump(lambda: False, 0.1)
        finally:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            os.close(fd)
    tally(f"{sig.name} to the TUI mid-stream (pty)")
    assert os.waitstatus_to_exitcode(status[1]) == code
    assert b"\x1b[?1049l" in out[mark:], "the alternate screen was not left"
    assert b"Traceback" not in out
    [path] = session_paths(tmp_path)
    check = check_session_file(path)
    assert not check.warnings and not check.damaged
    last = check.messages[-1]
    assert (
        last["role"] == "assistant"
        and last.get("interrupted")
        and last["content"].startswith("w0 ")
    )
