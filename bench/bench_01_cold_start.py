"""#1 TUI cold start: process spawn until the first frame is painted; against a bare Textual
app with one Static, measured the same way.

Both run through `bench/launch.py` in a pseudo-terminal (120×40): the program itself, plus a
post-import hook that timestamps the first frame handed to the terminal driver. picobot runs
as `picobot agent` with a configured provider, so the LiteLLM warm-up thread starts as it
does for a user: the first frame must not wait for `import litellm`. picobot paints its
first frame before it loads the settings, the core and the session; the time until a frame
shows them loaded is reported as well ("ready").
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from bench.common import (
    Result,
    alternate,
    bench_env,
    median,
    ratios,
    report,
    run_in_pty,
    temp_dir,
    write_config,
)


def first_frame(
    args: list[str], env: dict[str, str], tmp: Path, *, settle: bool = False, ready: bool = False
) -> dict:
    """Spawn `python -m bench.launch` with `args`; return its records with `t` relative to
    the spawn (seconds) and the RSS."""
    out = tmp / f"frame-{time.monotonic_ns()}.jsonl"
    need = 1 + settle + ready

    def have() -> bool:
        try:
            return out.read_text().count("\n") >= need
        except FileNotFoundError:
            return False

    launch = [sys.executable, "-m", "bench.launch", str(out)]
    if settle:
        launch.append("--settle")
    if ready:
        launch.append("--ready")
    _, t0, _, output = run_in_pty([*launch, *args], env, until=have, timeout=120)
    if not have():
        raise RuntimeError(f"no first frame: {output[-2000:].decode('utf-8', 'replace')}")
    records = {}
    for line in out.read_text().splitlines():
        rec = json.loads(line)
        rec["t"] -= t0
        records[rec["event"]] = rec
    out.unlink()
    return records


def run(reps: int = 9) -> Result:
    started = time.perf_counter()
    rss: list[float] = []
    ready: list[float] = []
    with temp_dir() as tmp:
        home = tmp / "home"
        write_config(home, "http://127.0.0.1:9/v1")  # a provider is configured; never called
        env = bench_env(home)

        def picobot() -> float:
            recs = first_frame(["--", "agent"], env, tmp, ready=True)
            rec = recs["first_frame"]
            rss.append(rec["rss_mb"])
            ready.append(recs["ready"]["t"])
            return rec["t"]

        def bare() -> float:
            return first_frame(["--bare"], env, tmp)["first_frame"]["t"]

        a, b = alternate(picobot, bare, reps, budget=90)
    r = ratios(a, b)
    ratio = median(r)
    return report(
        Result(
            "1",
            "TUI cold start: spawn to first frame",
            median(a),
            median(b),
            "s",
            ratio,
            "≤ 1.5×",
            ratio <= 1.5,
            detail=(
                f"RSS at the first frame {median(rss):.0f} MB (LiteLLM not yet imported); "
                f"settings, runtime and session loaded and painted at {median(ready) * 1000:.0f} ms"
            ),
            samples={"A s": a, "B s": b, "ratio": r, "ready s": ready},
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
