"""Shared machinery for the benchmarks: hermetic homes, A/B alternation, statistics, results,
the local OpenAI-compatible server, and running a program in a real pseudo-terminal.

Every figure is measured against a baseline in the same run, alternating A and B (ABBA
order, so neither side always runs first), and reported as medians plus the median of the
per-repetition ratios. The machines are shared and noisy: the ratio is the figure that counts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # never fetch the price map

MODEL = "openai/bench-model"


# ---------------------------------------------------------------- environment


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for a measured subprocess: offline LiteLLM, a private PICOBOT_HOME,
    no provider keys or PICOBOT_* settings from the caller, the repo importable."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PICOBOT_") and not k.endswith("_API_KEY")
    }
    env.update(
        PICOBOT_HOME=str(home),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")])),
        TERM="xterm-256color",
        COLORTERM="truecolor",
        # Every figure but #15's is of a cold process: no warm server answers it.
        PICOBOT_SERVER="0",
    )
    env.pop("NO_COLOR", None)
    env.pop("TEXTUAL", None)
    # A user's second start finds picobot's .pyc files; with this set (as on some dev
    # machines) every run would compile the repo's edited modules again (~15 ms).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


def write_config(
    home: Path,
    server_url: str | None = None,
    *,
    mcp_servers: dict[str, dict[str, Any]] | None = None,
    **defaults: Any,
) -> Path:
    """A config for `home`: the bench model served by the local server (if given), and the
    MCP servers (`tools.mcpServers` entries) if given."""
    home.mkdir(parents=True, exist_ok=True)
    # Named, as a user's project would be: the benchmarks run from the repo, which must not
    # be the workspace, and an implicit one would open the TUI on the trust question.
    workspace = home / "workspace"
    workspace.mkdir(exist_ok=True)
    agent = {"model": MODEL, "workspace": str(workspace), **defaults}
    tools: dict[str, Any] = {"approval": "auto"}
    if mcp_servers:
        tools["mcpServers"] = mcp_servers
    cfg: dict[str, Any] = {"agents": {"defaults": agent}, "tools": tools}
    if server_url:
        cfg["providers"] = {"openai": {"apiBase": server_url, "apiKey": "sk-bench"}}
    path = home / "config.json"
    path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    return path


@contextlib.contextmanager
def temp_dir(prefix: str = "picobot-bench-") -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def console_script(name: str = "picobot") -> str:
    """The installed console script itself (not a pyenv shim, which adds ~0.5 s of bash)."""
    import sysconfig

    path = Path(sysconfig.get_path("scripts")) / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} is not installed: pip install -e .")
    return found


# ---------------------------------------------------------------- statistics and results


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def percentile(xs: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))
    return s[k]


def alternate(
    a: Callable[[], float],
    b: Callable[[], float],
    reps: int,
    *,
    warmup: int = 1,
    budget: float = 100.0,
    min_reps: int = 3,
) -> tuple[list[float], list[float]]:
    """Run A (the figure) and B (its baseline) `reps` times each in ABBA order, after
    `warmup` unrecorded rounds of both; returns (a_values, b_values) in pair order.

    Stops early (after at least `min_reps` pairs) once `budget` seconds have gone, so a
    benchmark stays under two minutes on a loaded machine; fewer pairs, same method."""
    start = time.monotonic()
    for _ in range(warmup):
        a()
        b()
    av: list[float] = []
    bv: list[float] = []
    for i in range(reps):
        if i >= min_reps and time.monotonic() - start > budget:
            print(f"    (time budget reached: {i} pairs instead of {reps})", flush=True)
            break
        if i % 2 == 0:
            av.append(a())
            bv.append(b())
        else:
            bv.append(b())
            av.append(a())
    return av, bv


def ratios(a: Sequence[float], b: Sequence[float]) -> list[float]:
    return [x / y for x, y in zip(a, b, strict=True) if y > 0]


@dataclass
class Result:
    """One row of the table: a figure, its baseline and the target."""

    number: str  # "1", "2a", ...
    name: str
    value: float
    baseline: float
    unit: str
    ratio: float
    target: str
    met: bool | None
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0  # how long the benchmark took

    def line(self) -> str:
        mark = {True: "met", False: "NOT MET", None: "reported"}[self.met]
        return (
            f"#{self.number:<4}{self.name}: {fmt(self.value, self.unit)} vs baseline "
            f"{fmt(self.baseline, self.unit)} -> ratio {self.ratio:.2f}x "
            f"(target {self.target}: {mark})"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "ms":
        if value < 0.1:
            return f"{value * 1000:.1f} µs"
        return f"{value:.2f} ms" if value < 10 else f"{value:.0f} ms"
    if unit == "us":
        return f"{value:.1f} µs"
    if unit == "MB":
        return f"{value:.0f} MB"
    return f"{value:.3g} {unit}"


def report(result: Result) -> Result:
    """Print a result (details first, then the summary line) and return it."""
    for name, values in result.samples.items():
        shown = ", ".join(f"{v:.4g}" for v in values)
        print(f"    {name}: [{shown}]", flush=True)
    for key, value in result.extra.items():
        print(f"    {key}: {value}", flush=True)
    if result.detail:
        print(f"    {result.detail}", flush=True)
    print("  " + result.line(), flush=True)
    return result


# ---------------------------------------------------------------- the local model server


@contextlib.contextmanager
def model_server(
    script: Sequence[dict[str, Any]] | None = None,
    default: dict[str, Any] | None = None,
    *,
    delay: float = 0.0,
) -> Iterator[str]:
    """Start `python -m tests.support.openai_server` in its own process (so its CPU is not
    counted in the measured process) and yield its base URL (…/v1)."""
    with temp_dir("picobot-bench-server-") as tmp:
        args = [sys.executable, "-m", "tests.support.openai_server", "--port", "0"]
        if script is not None or default is not None:
            path = tmp / "script.json"
            path.write_text(json.dumps({"steps": list(script or []), "default": default}))
            args += ["--script", str(path)]
        if delay:
            args += ["--delay", str(delay)]
        env = bench_env(tmp)
        proc = subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            if not url.startswith("http"):
                raise RuntimeError(f"the test server did not start: {url!r}")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ---------------------------------------------------------------- programs in a terminal


def run_in_pty(
    args: Sequence[str],
    env: dict[str, str],
    *,
    size: tuple[int, int] = (120, 40),
    timeout: float = 60.0,
    until: Callable[[], bool] | None = None,
    cwd: Path | None = None,
) -> tuple[int | None, float, float, bytes]:
    """Run `args` with a pseudo-terminal of `size` (columns, rows) as its stdin/out/err.

    Returns (exit code or None if it was killed, `time.monotonic()` just before the spawn,
    wall seconds from then until exit or `until()`, the bytes it wrote). When `until` turns
    true the process is terminated (the measured part is over). `time.monotonic()` is
    CLOCK_MONOTONIC, so a child's timestamps compare with the spawn time directly.
    """
    master, slave = pty.openpty()
    cols, rows = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    out = bytearray()

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            out.extend(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        list(args),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=cwd or ROOT,
        start_new_session=True,
        close_fds=True,
    )
    os.close(slave)
    code: int | None = None
    elapsed = 0.0
    try:
        deadline = t0 + timeout
        while True:
            code = proc.poll()
            if code is not None:
                elapsed = time.monotonic() - t0
                break
            if until is not None and until():
                elapsed = time.monotonic() - t0
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{args} did not finish within {timeout:.0f} s")
            time.sleep(0.002)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        code = proc.returncode if code is not None else None
        reader.join(2)
        with contextlib.suppress(OSError):
            os.close(master)
    return code, t0, elapsed, bytes(out)


def timed_run(
    args: Sequence[str], env: dict[str, str], *, stdin: str | None = None, timeout: float = 60
) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """Run a program to completion (output to pipes); return (wall s, child CPU s, result)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        list(args),
        env=env,
        cwd=ROOT,
        input=stdin.encode() if stdin is not None else None,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}"
        )
    return wall, cpu, proc


def run_driver(
    mode: str, env: dict[str, str], params: dict[str, Any], *, timeout: float = 90.0
) -> dict[str, Any]:
    """Run `bench/tui_driver.py` in a pseudo-terminal and return the JSON it reports."""
    with temp_dir("picobot-bench-out-") as tmp:
        out = tmp / "result.json"
        params = {**params, "parent": os.getpid()}  # the driver dies with this process
        args = [sys.executable, "-m", "bench.tui_driver", mode, str(out), json.dumps(params)]
        code, _, _, output = run_in_pty(args, env, timeout=timeout)
        if not out.exists():
            tail = output[-3000:].decode("utf-8", "replace")
            raise RuntimeError(f"tui_driver {mode} failed (exit {code}); output tail:\n{tail}")
        result = json.loads(out.read_text())
        if "error" in result:
            raise RuntimeError(f"tui_driver {mode}: {result['error']}")
        return result


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size from /proc, in MB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")
