"""#3 Headless `picobot agent -m` against the local server, spawn to exit, one streamed
answer; against a minimal script making the same streamed `litellm.acompletion` call.

Both import LiteLLM (about 3 s here), so the ratio shows what picobot adds around it:
config, session file, system prompt, tools, the loop, tracing and rendering.
"""

from __future__ import annotations

import sys
import time

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
    timed_run,
    write_config,
)
from bench.fixtures import markdown_answer

ANSWER_TOKENS = 300


def run(reps: int = 6) -> Result:
    started = time.perf_counter()
    answer = markdown_answer(ANSWER_TOKENS, seed=3)
    step = {"type": "text", "text": answer, "chunk_size": 8}
    with temp_dir() as tmp, model_server(default=step) as url:
        home = tmp / "home"
        write_config(home, url)
        env = bench_env(home)
        picobot = [console_script(), "agent", "-m", "hello", "--no-show-tools"]
        script = ROOT / "bench" / "baselines" / "litellm_stream.py"
        baseline = [sys.executable, str(script), url, MODEL, "hello"]
        cpu: dict[str, list[float]] = {"a": [], "b": []}
        frozen: list[float] = []  # the baseline plus gc.freeze(), after each B run

        def one(argv: list[str], side: str) -> float:
            wall, used, proc = timed_run(argv, env)
            if answer[:40] not in proc.stdout.decode():
                raise RuntimeError(f"unexpected output: {proc.stdout[:200]!r}")
            cpu[side].append(used)
            return wall

        def base() -> float:
            wall = one(baseline, "b")
            frozen.append(timed_run([*baseline, "--freeze"], env)[0])
            return wall

        a, b = alternate(lambda: one(picobot, "a"), base, reps)
    r = ratios(a, b)
    ratio = median(r)
    return report(
        Result(
            "3",
            "headless `agent -m`, spawn to exit, one streamed answer",
            median(a),
            median(b),
            "s",
            ratio,
            "≤ 1.10×",
            ratio <= 1.10,
            detail=(
                f"{ANSWER_TOKENS}-token answer; child CPU {median(cpu['a']):.2f} s vs "
                f"{median(cpu['b']):.2f} s (ratio {median(ratios(cpu['a'], cpu['b'])):.2f}×); "
                f"against the baseline with picobot's gc.freeze() after the import "
                f"({median(frozen[-len(a) :]):.2f} s): {median(ratios(a, frozen[-len(a) :])):.2f}×"
            ),
            samples={"A s": a, "B s": b, "ratio": r, "B+freeze s": frozen[-len(a) :]},
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
