"""#5 Input latency while streaming: with ~200 tokens/s arriving, the time from a key press
to its character being painted in the prompt; against the same app idle.

One TUI process in a pseudo-terminal alternates idle and streaming phases (ABBA). In each
phase it types characters ~80 ms apart, injected the way Textual's input thread delivers
them; a key's latency ends at the first frame painted after the prompt holds it.
Target: p95 while streaming ≤ 50 ms and ≤ 2× the idle p95.
"""

from __future__ import annotations

import sys
import time

from bench.common import (
    Result,
    bench_env,
    median,
    model_server,
    percentile,
    report,
    run_driver,
    temp_dir,
    write_config,
)
from bench.fixtures import markdown_answer

RATE = 200  # tokens per second
KEYS = 25  # per phase
INTERVAL = 0.08


def run(reps: int = 4, processes: int = 2) -> Result:
    started = time.perf_counter()
    answer = markdown_answer(3_000, seed=5)  # longer than any phase needs: ~15 s at 200/s
    step = {
        "type": "slow",
        "delay": 1 / RATE,
        "step": {"type": "text", "text": answer, "chunk_size": 4},
    }
    idle: list[float] = []
    streaming: list[float] = []
    per_pair: list[tuple[float, float]] = []
    with temp_dir() as tmp, model_server(default=step) as url:
        home = tmp / "home"
        write_config(home, url)
        env = bench_env(home)
        for _ in range(processes):
            params = {"rounds": reps, "keys": KEYS, "interval": INTERVAL}
            result = run_driver("latency", env, params, timeout=150)
            for i_lat, s_lat in zip(result["idle"], result["stream"], strict=True):
                idle.extend(i_lat)
                streaming.extend(s_lat)
                per_pair.append((percentile(s_lat, 95), percentile(i_lat, 95)))
    p95_s = percentile(streaming, 95) * 1000
    p95_i = percentile(idle, 95) * 1000
    ratio = median([s / i for s, i in per_pair if i > 0])
    return report(
        Result(
            "5",
            f"input latency while streaming ({RATE} tokens/s), p95",
            p95_s,
            p95_i,
            "ms",
            ratio,
            "p95 ≤ 50 ms and ≤ 2× idle",
            p95_s <= 50 and ratio <= 2,
            detail=(
                f"{len(streaming)} keys while streaming, {len(idle)} idle; medians "
                f"{median(streaming) * 1000:.1f} ms vs {median(idle) * 1000:.1f} ms; "
                f"max {max(streaming) * 1000:.0f} ms; ratio = median of per-phase-pair p95 ratios"
            ),
            samples={
                "p95 pairs ms (stream, idle)": [
                    round(x * 1000, 1) for pair in per_pair for x in pair
                ]
            },
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
