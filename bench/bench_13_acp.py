"""#13 `picobot acp` (issue 13): start-up and streaming through the Agent Client Protocol.

13a  Spawn → `initialize` response: `picobot acp` against a bare SDK echo agent
     (`bench/baselines/acp_echo.py`: `acp.run_agent` with an Agent that answers `initialize`,
     and nothing else imported). Both are fresh processes fed the same `initialize` line the
     moment they are spawned; the interval ends when its response line is read. picobot must
     answer before LiteLLM has loaded (it imports it in the background), so all it may add to
     the SDK's floor is its CLI, config and the front end's own imports. Target ≤ 1.3×.
13b  Per-chunk cost of streaming one answer through ACP against `picobot agent --json` for
     the same answer from the same local model server (a separate process): from the first
     text chunk the client reads (`agent_message_chunk` / `text_delta`) to the end of the turn
     (the `session/prompt` response / `turn_finished`), divided by the answer's model deltas.
     The same loop, LiteLLM and model stream run under both; the ratio is what the ACP front
     end (update building, JSON-RPC framing, the SDK's writer) costs per chunk against the
     JSON-lines one. Target ≤ 1.2×.
13c  Spawn → first `agent_message_chunk` (initialize, session/new, session/prompt sent as soon
     as each answer arrives, as an editor does), against `--json`'s spawn → first
     `text_delta`: reported, beside the TUI's spawn → first frame (#1's harness, measured in
     the same run) and `agent -m` (#3).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from bench.common import (
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

ECHO_AGENT = ROOT / "bench" / "baselines" / "acp_echo.py"
ANSWER_TOKENS = 1500
CHUNK = 4  # characters per model delta
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}},
        "clientInfo": {"name": "picobot-bench", "version": "1"},
    },
}


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _spawn(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _read_until(out: IO[bytes], needle: bytes) -> bytes:
    while True:
        line = out.readline()
        if not line:
            raise RuntimeError(f"the agent ended before {needle!r}")
        if needle in line:
            return line


def _finish(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.close()
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def spawn_to_initialize(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = _spawn(argv, env, cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_line(INIT))
    proc.stdin.flush()
    line = _read_until(proc.stdout, b'"id":')
    elapsed = time.perf_counter() - t0
    if b'"protocolVersion"' not in line:
        raise RuntimeError(f"unexpected initialize answer: {line[:300]!r}")
    _finish(proc)
    return elapsed


def acp_turn(argv: list[str], env: dict[str, str], cwd: Path, deltas: int) -> tuple[float, float]:
    """(spawn → first agent_message_chunk, seconds per model delta from there to the end)."""
    t0 = time.perf_counter()
    proc = _spawn(argv, env, cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_line(INIT))
    proc.stdin.flush()
    _read_until(proc.stdout, b'"id":0')
    new = {"cwd": str(cwd), "mcpServers": []}
    proc.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}))
    proc.stdin.flush()
    sid = json.loads(_read_until(proc.stdout, b'"id":1'))["result"]["sessionId"]
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]}
    proc.stdin.write(
        _line({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
    )
    proc.stdin.flush()
    _read_until(proc.stdout, b'"agent_message_chunk"')
    first = time.perf_counter()
    end = _read_until(proc.stdout, b'"stopReason"')
    done = time.perf_counter()
    if b"end_turn" not in end:
        raise RuntimeError(f"the ACP turn did not end normally: {end[:300]!r}")
    _finish(proc)
    return first - t0, (done - first) / (deltas - 1)


def json_turn(argv: list[str], env: dict[str, str], cwd: Path, deltas: int) -> tuple[float, float]:
    """The same for `picobot agent --json`: first `text_delta`, then `turn_finished`."""
    t0 = time.perf_counter()
    proc = _spawn(argv, env, cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_line({"type": "message", "content": "hello"}))
    proc.stdin.flush()
    _read_until(proc.stdout, b'"text_delta"')
    first = time.perf_counter()
    end = _read_until(proc.stdout, b'"turn_finished"')
    done = time.perf_counter()
    if b'"final"' not in end:
        raise RuntimeError(f"the --json turn did not end normally: {end[:300]!r}")
    _finish(proc)
    return first - t0, (done - first) / (deltas - 1)


def run(reps: int = 8) -> list[Result]:
    from bench.bench_01_cold_start import first_frame

    results: list[Result] = []
    answer = markdown_answer(ANSWER_TOKENS, seed=13)
    deltas = -(-len(answer) // CHUNK)
    step = {"type": "text", "text": answer, "chunk_size": CHUNK}
    with temp_dir() as tmp, model_server(default=step) as url:
        home = tmp / "home"
        write_config(home, url)
        env = bench_env(home)
        ws = home / "workspace"
        picobot = console_script()

        # 13a
        started = time.perf_counter()
        a, b = alternate(
            lambda: spawn_to_initialize([picobot, "acp"], env, ws),
            lambda: spawn_to_initialize([sys.executable, str(ECHO_AGENT)], env, ws),
            reps + 2,
        )
        r = ratios(a, b)
        results.append(
            report(
                Result(
                    "13a",
                    "`picobot acp` spawn → initialize response, vs a bare SDK agent",
                    median(a),
                    median(b),
                    "s",
                    median(r),
                    "≤ 1.30×",
                    median(r) <= 1.30,
                    detail="both fed `initialize` at spawn; picobot imports LiteLLM after answering",
                    samples={"A s": a, "B s": b, "ratio": r},
                    seconds=time.perf_counter() - started,
                )
            )
        )

        # 13b and 13c, from the same turns
        started = time.perf_counter()
        first: dict[str, list[float]] = {"acp": [], "json": []}

        def side(name: str, fn: Any, argv: list[str]) -> float:
            spawn_first, per_chunk = fn(argv, env, ws, deltas)
            first[name].append(spawn_first)
            return per_chunk * 1000

        a, b = alternate(
            lambda: side("acp", acp_turn, [picobot, "acp"]),
            lambda: side("json", json_turn, [picobot, "agent", "--json", "--yes"]),
            reps,
        )
        r = ratios(a, b)
        n = len(a)
        results.append(
            report(
                Result(
                    "13b",
                    "streaming through ACP, per chunk, vs `agent --json`",
                    median(a),
                    median(b),
                    "ms",
                    median(r),
                    "≤ 1.20×",
                    median(r) <= 1.20,
                    detail=(
                        f"one {ANSWER_TOKENS}-token answer in {deltas} model deltas of "
                        f"{CHUNK} characters; first chunk → end of turn, per delta"
                    ),
                    samples={"A ms/chunk": a, "B ms/chunk": b, "ratio": r},
                    seconds=time.perf_counter() - started,
                )
            )
        )
        frames = [first_frame(["--", "agent"], env, tmp)["first_frame"]["t"] for _ in range(3)]
        fa, fb = first["acp"][-n:], first["json"][-n:]
        fr = ratios(fa, fb)
        results.append(
            report(
                Result(
                    "13c",
                    "`picobot acp` spawn → first agent_message_chunk, vs `--json` first text_delta",
                    median(fa),
                    median(fb),
                    "s",
                    median(fr),
                    "reported",
                    None,
                    detail=(
                        f"spawn → initialize response {median(results[0].samples['A s']):.3f} s; "
                        f"TUI spawn → first frame {median(frames):.3f} s in the same run (#1's "
                        "harness); the first chunk waits for LiteLLM's import, as -m and --json do"
                    ),
                    samples={"A s": fa, "B s": fb, "ratio": fr, "TUI first frame s": frames},
                    seconds=time.perf_counter() - started,
                )
            )
        )
    return results


if __name__ == "__main__":
    for result in run():
        print(result.line())
