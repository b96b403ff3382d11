"""#15 The warm start server (issue 23): a short call costs a fork, not an import.

- **15a** `agent -m` spawn → exit with a warm server, one streamed answer, against a plain
  httpx script streaming the same answer (`baselines/httpx_stream.py`); target ≤ 1.5×.
- **15b** the same runs' peak RSS of the process spawned (the client; the child that
  answers lives in the server), against the script's; ≤ 1.5×.
- **15c** `agent -m` when no server runs yet (the first call: it runs cold, and starts a
  server as it exits) against today's cold call (`PICOBOT_SERVER=0`); ≤ 1.05×. Each such
  server is stopped, and gone, before the next run, so none shares the CPU with one.
- **15d** `picobot acp` spawn → first `agent_message_chunk`, warm (initialize,
  session/new and session/prompt each sent as the previous answer arrives, as an editor
  does: #13c's client), against #13a's bare SDK agent (`baselines/acp_echo.py`) spawn →
  `initialize` response; ≤ 1.5×.
- **15e** `agent --json` spawn → first `text_delta` line, warm, against 15a's baseline
  (the script, spawn → exit); ≤ 1.5×.

- **15g** the TUI (`picobot agent` on a pty): the message typed as soon as the first frame
  shows → the answer's first words painted, with a warm server running (the TUI's
  first calls are relayed to it while its own LiteLLM imports: warm/relay.py) against the
  same with no server (`PICOBOT_SERVER=0`: the call waits for the import); ≤ 0.5×.

Not measured: 15f (the TUI's first frame through the server; it does not go through it):
docs/server.md says why.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_13_acp import ECHO_AGENT, acp_turn, spawn_to_initialize
from bench.common import (
    MODEL,
    ROOT,
    Result,
    alternate,
    bench_env,
    console_script,
    median,
    model_server,
    ratios,
    report,
    temp_dir,
    write_config,
)
from bench.fixtures import markdown_answer

ANSWER_TOKENS = 300
DEADLINE = 120.0


def _spawn_to_exit(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """(wall s, peak RSS MB of the spawned process, stdout) of one run to its exit. Reaped
    with wait4: the peak RSS of exactly this child (ru_maxrss, KiB on Linux), which
    RUSAGE_CHILDREN cannot tell apart from the other children's."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err
        )
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{argv} exited {proc.returncode}: {err.read()[-2000:]!r}")
    return wall, usage.ru_maxrss / 1024, out.decode()


def _first_delta(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Spawn `agent --json`, send one message: seconds to the first `text_delta` line."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps({"type": "message", "content": "hello"}).encode() + b"\n")
    proc.stdin.flush()
    took = float("nan")
    for line in proc.stdout:
        if json.loads(line).get("type") == "text_delta":
            took = time.perf_counter() - t0
            break
    proc.stdin.close()
    proc.stdout.read()
    proc.wait(timeout=DEADLINE)
    return took


def _tui_first_answer(env: dict[str, str], cwd: Path, marker: bytes) -> float:
    """`picobot agent` on a pty: seconds from typing the message (as soon as the first frame
    shows) until `marker`, the answer's first words, is written. From the message, not
    the spawn: the first frame (bench #1) comes before and is the same either way."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [console_script(), "agent", "--workspace", str(cwd)],
        stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
        start_new_session=True, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    out, sent = bytearray(), False
    try:
        while time.monotonic() - t0 < DEADLINE:
            if select.select([master], [], [], 0.5)[0]:
                out += os.read(master, 65536)
            if not sent and b"Message picobot" in out:
                os.write(master, b"hello\r")
                sent, out, t0 = True, bytearray(), time.monotonic()
            elif sent and marker in out:
                return time.monotonic() - t0
        raise RuntimeError(f"no answer in the TUI: {bytes(out[-300:])!r}")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)


def _servers(runtime: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if entry.name.isdigit() and b"server\0run" in cmd and str(runtime).encode() in cmd:
            pids.append(int(entry.name))
    return pids


def _stop_servers(runtime: Path) -> None:
    """SIGTERM every server of this runtime dir and wait until they are gone."""
    pids = _servers(runtime)
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + DEADLINE
    while any(Path(f"/proc/{p}").exists() for p in pids) and time.monotonic() < end:
        time.sleep(0.02)  # another process's exit


def _server_memory(runtime: Path) -> str:
    pids = _servers(runtime)
    if len(pids) != 1:
        raise RuntimeError(f"expected one server, found {pids}")
    [pid] = pids
    fields: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                fields[name] = int(rest.split()[0])
    uss = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return f"idle server: RSS {fields['Rss'] / 1024:.0f} MB, USS {uss / 1024:.0f} MB"


def run(reps: int = 8) -> list[Result]:
    started = time.perf_counter()
    answer = markdown_answer(ANSWER_TOKENS, seed=15)
    step = {"type": "text", "text": answer, "chunk_size": 8}
    results: list[Result] = []
    with temp_dir() as tmp, model_server(default=step) as url:
        home, runtime = tmp / "home", Path(f"/tmp/pb15-{os.getpid()}")
        runtime.mkdir(mode=0o700, exist_ok=True)
        (home / "workspace").mkdir(parents=True)
        write_config(home, url)
        ws = home / "workspace"
        warm_env = bench_env(home, PICOBOT_SERVER="1", XDG_RUNTIME_DIR=str(runtime))
        cold_env = bench_env(home, PICOBOT_SERVER="0", XDG_RUNTIME_DIR=str(runtime))
        picobot = [console_script(), "agent", "-m", "hello", "--no-show-tools"]
        script = [sys.executable, str(ROOT / "bench/baselines/httpx_stream.py"), url, MODEL]
        script.append("hello")
        try:
            start = subprocess.run(
                [console_script(), "server", "start"], env=warm_env, cwd=ws,
                capture_output=True, text=True, timeout=DEADLINE,
            )  # fmt: skip
            if start.returncode != 0:
                raise RuntimeError(f"server start: {start.stdout}{start.stderr}")
            rss: dict[str, list[float]] = {"a": [], "b": []}

            def measured(argv: list[str], env: dict[str, str], side: str) -> float:
                wall, peak, out = _spawn_to_exit(argv, env, ws)
                if answer[:40] not in out:
                    raise RuntimeError(f"unexpected output: {out[:200]!r}")
                rss[side].append(peak)
                return wall

            a, b = alternate(
                lambda: measured(picobot, warm_env, "a"),
                lambda: measured(script, warm_env, "b"),
                reps,
            )
            try:
                memory = _server_memory(runtime)
            except RuntimeError:
                print((home / "data/logs/server.log").read_text()[-3000:])
                raise
            r = ratios(a, b)
            results.append(
                report(
                    Result(
                        "15a",
                        "`agent -m` spawn to exit, warm server, one streamed answer",
                        median(a),
                        median(b),
                        "s",
                        median(r),
                        "≤ 1.5×",
                        median(r) <= 1.5,
                        detail=f"{ANSWER_TOKENS}-token answer; baseline: httpx script; {memory}",
                        samples={"A s": a, "B s": b, "ratio": r},
                        seconds=time.perf_counter() - started,
                    )  # fmt: skip
                )
            )
            ra, rb = rss["a"][-len(a) :], rss["b"][-len(b) :]
            rr = ratios(ra, rb)
            results.append(
                report(
                    Result(
                        "15b",
                        "`agent -m` warm: peak RSS of the process spawned",
                        median(ra),
                        median(rb),
                        "MB",
                        median(rr),
                        "≤ 1.5×",
                        median(rr) <= 1.5,
                        detail="the client's ru_maxrss (wait4) vs the httpx script's",
                        samples={"A MB": ra, "B MB": rb, "ratio": rr},
                    )  # fmt: skip
                )
            )
            t1 = time.perf_counter()
            d, b2 = alternate(
                lambda: _first_delta([console_script(), "agent", "--json"], warm_env, ws),
                lambda: measured(script, warm_env, "b"),
                reps,
            )
            r = ratios(d, b2)
            results.append(
                report(
                    Result(
                        "15e",
                        "`agent --json` spawn to first text_delta, warm server",
                        median(d),
                        median(b2),
                        "s",
                        median(r),
                        "≤ 1.5×",
                        median(r) <= 1.5,
                        detail="baseline: 15a's (the httpx script, spawn to exit)",
                        samples={"A s": d, "B s": b2, "ratio": r},
                        seconds=time.perf_counter() - t1,
                    )  # fmt: skip
                )
            )
            t3 = time.perf_counter()
            deltas = -(-len(answer) // step["chunk_size"])
            echo = [sys.executable, str(ECHO_AGENT)]
            f, i = alternate(
                lambda: acp_turn([console_script(), "acp"], warm_env, ws, deltas)[0],
                lambda: spawn_to_initialize(echo, warm_env, ws),
                reps,
            )
            r = ratios(f, i)
            results.append(
                report(
                    Result(
                        "15d",
                        "`picobot acp` spawn to first agent_message_chunk, warm server",
                        median(f),
                        median(i),
                        "s",
                        median(r),
                        "≤ 1.5×",
                        median(r) <= 1.5,
                        detail="baseline: #13a's bare SDK agent, spawn to initialize response; "
                        "initialize, session/new, session/prompt as each answer arrives",
                        samples={"A s": f, "B s": i, "ratio": r},
                        seconds=time.perf_counter() - t3,
                    )  # fmt: skip
                )
            )
            t4 = time.perf_counter()
            # Three words of the first paragraph: drawn in one style, so written together.
            marker = " ".join(answer.split("\n\n")[1].split()[1:4]).encode()
            g, g0 = alternate(
                lambda: _tui_first_answer(warm_env, ws, marker),
                lambda: _tui_first_answer(cold_env, ws, marker),
                max(3, reps // 2),
            )
            r = ratios(g, g0)
            results.append(
                report(
                    Result(
                        "15g",
                        "TUI: message sent at the first frame to the answer's first words",
                        median(g),
                        median(g0),
                        "s",
                        median(r),
                        "≤ 0.5×",
                        median(r) <= 0.5,
                        detail="warm server running (first calls relayed) vs none "
                        "(PICOBOT_SERVER=0: the call waits for the TUI's LiteLLM import)",
                        samples={"A s": g, "B s": g0, "ratio": r},
                        seconds=time.perf_counter() - t4,
                    )  # fmt: skip
                )
            )
            _stop_servers(runtime)
            t2 = time.perf_counter()

            def first_call() -> float:
                wall = measured(picobot, warm_env, "a")
                _stop_servers(runtime)  # the one it started, before anything else runs
                return wall

            c, cold = alternate(
                first_call, lambda: measured(picobot, cold_env, "b"), max(3, reps // 2)
            )
            r = ratios(c, cold)
            results.append(
                report(
                    Result(
                        "15c",
                        "`agent -m`, no server yet (the first call)",
                        median(c),
                        median(cold),
                        "s",
                        median(r),
                        "≤ 1.05×",
                        median(r) <= 1.05,
                        detail="baseline: the cold call, PICOBOT_SERVER=0; the server the "
                        "first call starts is stopped before the next run",
                        samples={"A s": c, "B s": cold, "ratio": r},
                        seconds=time.perf_counter() - t2,
                    )  # fmt: skip
                )
            )
        finally:
            _stop_servers(runtime)
            import shutil

            shutil.rmtree(runtime, ignore_errors=True)
    return results


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
