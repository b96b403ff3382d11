"""#7 Per-token cost as the transcript grows: CPU seconds per streamed token with a resumed
2,000-message session (500 tool calls) on screen; against the same with an empty transcript.

Each sample is one TUI process in a pseudo-terminal: resume (or start empty), warm LiteLLM,
then send a message whose answer streams at ~200 tokens/s; the CPU of the process from
Enter until the answer is fully painted, divided by the tokens.
"""

from __future__ import annotations

import sys
import time

from bench.common import (
    Result,
    alternate,
    bench_env,
    median,
    model_server,
    ratios,
    report,
    run_driver,
    temp_dir,
    write_config,
)
from bench.fixtures import markdown_answer, write_long_session

TOKENS = 600
RATE = 200


def run(reps: int = 3) -> Result:
    started = time.perf_counter()
    answer = markdown_answer(TOKENS, seed=7)
    tokens = len(answer) // 4
    step = {
        "type": "slow",
        "delay": 1 / RATE,
        "step": {"type": "text", "text": answer, "chunk_size": 4},
    }
    blocks: list[int] = []
    with temp_dir() as tmp, model_server(default=step) as url:
        home = tmp / "home"
        write_config(home, url)
        long_key = write_long_session(home / "sessions")
        env = bench_env(home)

        def one(session: str | None) -> float:
            result = run_driver("token_cost", env, {"session": session}, timeout=180)
            if session:
                blocks.append(result["blocks_before"])
            return result["cpu"] / tokens * 1000  # ms per token

        a, b = alternate(lambda: one(long_key), lambda: one(None), reps, warmup=0, budget=70)
    r = ratios(a, b)
    ratio = median(r)
    return report(
        Result(
            "7",
            "CPU per streamed token with 2,000 messages shown",
            median(a),
            median(b),
            "ms",
            ratio,
            "≤ 1.2×",
            ratio <= 1.2,
            detail=(
                f"{tokens} tokens at ~{RATE}/s; {median(blocks) if blocks else 0:.0f} blocks "
                "mounted before the turn (resumed); baseline: a new, empty transcript"
            ),
            samples={"A ms/token": a, "B ms/token": b, "ratio": r},
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
