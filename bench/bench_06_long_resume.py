"""#6 Long transcript: `picobot agent --session ID` for a session of 2,000 messages
(500 tool calls, ~105k tokens) until the first frame showing the transcript is painted, and
the RSS once it has loaded (and LiteLLM has been warmed); against resuming a 10-message
session the same way. Measured like #1 (bench/launch.py in a pseudo-terminal).
"""

from __future__ import annotations

import sys
import time

from bench.bench_01_cold_start import first_frame
from bench.common import (
    Result,
    alternate,
    bench_env,
    median,
    ratios,
    report,
    temp_dir,
    write_config,
)
from bench.fixtures import write_long_session, write_short_session

RSS_LIMIT = 300.0


def run(reps: int = 5) -> Result:
    started = time.perf_counter()
    rss_first: dict[str, list[float]] = {"a": [], "b": []}
    rss_settled: dict[str, list[float]] = {"a": [], "b": []}
    with temp_dir() as tmp:
        home = tmp / "home"
        write_config(home, "http://127.0.0.1:9/v1")
        long_key = write_long_session(home / "sessions")
        short_key = write_short_session(home / "sessions")
        env = bench_env(home)

        def resume(key: str, side: str) -> float:
            recs = first_frame(
                ["--when", "history", "--", "agent", "--session", key], env, tmp, settle=True
            )
            rss_first[side].append(recs["first_frame"]["rss_mb"])
            rss_settled[side].append(recs["settled"]["rss_mb"])
            return recs["first_frame"]["t"]

        a, b = alternate(
            lambda: resume(long_key, "a"), lambda: resume(short_key, "b"), reps, budget=80
        )
    r = ratios(a, b)
    ratio = median(r)
    rss = median(rss_settled["a"])
    return report(
        Result(
            "6",
            "resume a 2,000-message session (500 tool calls) to first frame; RSS",
            median(a),
            median(b),
            "s",
            ratio,
            f"≤ 3× time; RSS ≤ {RSS_LIMIT:.0f} MB",
            ratio <= 3 and rss <= RSS_LIMIT,
            detail=(
                f"RSS loaded + LiteLLM warmed {rss:.0f} MB (10-message session "
                f"{median(rss_settled['b']):.0f} MB); at the first frame "
                f"{median(rss_first['a']):.0f} MB vs {median(rss_first['b']):.0f} MB"
            ),
            samples={"A s": a, "B s": b, "ratio": r},
            extra={"rss_mb": rss},
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
