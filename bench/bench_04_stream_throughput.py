"""#4 Streaming throughput: the TUI consuming a 20,000-token markdown answer (headings,
paragraphs, lists, fenced code, tables) that the local server sends as fast as it can;
against headless `--no-stream` consuming the same stream.

Both run in a pseudo-terminal with LiteLLM already imported. TUI: from Enter until the
answer is fully painted (turn finished and no frame for 0.5 s). Headless: from the start of
the run until it returns. CPU seconds of the measured process are reported too.
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
from bench.fixtures import markdown_answer

TOKENS = 20_000
CHUNK = 8


def run(reps: int = 3) -> Result:
    started = time.perf_counter()
    answer = markdown_answer(TOKENS)
    # 8 characters (~2 tokens) per SSE chunk: LiteLLM's per-chunk cost (~0.7 ms CPU here)
    # dominates both sides at 1 token per chunk and would make the run exceed 2 minutes.
    step = {"type": "text", "text": answer, "chunk_size": CHUNK}
    cpu: dict[str, list[float]] = {"a": [], "b": []}
    with temp_dir() as tmp, model_server(default=step) as url:
        home = tmp / "home"
        write_config(home, url)
        env = bench_env(home)

        def one(mode: str, side: str) -> float:
            result = run_driver(mode, env, {"message": "write the report"}, timeout=300)
            cpu[side].append(result["cpu"])
            return result["wall"]

        a, b = alternate(
            lambda: one("stream", "a"), lambda: one("headless", "b"), reps, warmup=0, budget=60
        )
    r = ratios(a, b)
    ratio = median(r)
    return report(
        Result(
            "4",
            f"streaming throughput: TUI consuming a {TOKENS:,}-token markdown answer",
            median(a),
            median(b),
            "s",
            ratio,
            "≤ 1.5× wall",
            ratio <= 1.5,
            detail=(
                f"{len(answer):,} chars in {len(answer) // CHUNK:,} chunks; CPU "
                f"{median(cpu['a']):.2f} s vs {median(cpu['b']):.2f} s "
                f"(ratio {median(ratios(cpu['a'], cpu['b'])):.2f}×)"
            ),
            samples={"A s": a, "B s": b, "ratio": r, "A cpu s": cpu["a"], "B cpu s": cpu["b"]},
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
