"""#2 `picobot --help` and `picobot sessions list` (10 sessions): wall time from spawn to
exit, against a minimal two-command Typer app answering `--help`.

The installed console script is run directly (not through a pyenv shim), with stdout on a
pipe. The child CPU time is reported too: it is steadier than wall time on a busy machine.
"""

from __future__ import annotations

import sys
import time

from bench.common import (
    ROOT,
    Result,
    alternate,
    bench_env,
    console_script,
    median,
    ratios,
    report,
    temp_dir,
    timed_run,
    write_config,
)
from bench.fixtures import write_many_sessions


def run(reps: int = 15) -> list[Result]:
    started = time.perf_counter()
    picobot = console_script()
    baseline = [sys.executable, str(ROOT / "bench" / "baselines" / "typer_app.py"), "--help"]
    results = []
    with temp_dir() as tmp:
        home = tmp / "home"
        write_config(home)
        write_many_sessions(home / "sessions", 10)
        env = bench_env(home)
        timed_run([picobot, "sessions", "list"], env)  # builds the listing index once
        for label, args in (
            ("2a", [picobot, "--help"]),
            ("2b", [picobot, "sessions", "list"]),
        ):
            cpu: dict[str, list[float]] = {"a": [], "b": []}

            def one(argv: list[str], side: str, cpu: dict[str, list[float]] = cpu) -> float:
                wall, used, _ = timed_run(argv, env)
                cpu[side].append(used)
                return wall

            a, b = alternate(lambda: one(args, "a"), lambda: one(baseline, "b"), reps)  # noqa: B023
            r = ratios(a, b)
            ratio = median(r)
            name = " ".join(args[1:])
            results.append(
                report(
                    Result(
                        label,
                        f"`picobot {name}` wall time"
                        + (" (10 sessions)" if "list" in name else ""),
                        median(a),
                        median(b),
                        "s",
                        ratio,
                        "≤ 1.3×",
                        ratio <= 1.3,
                        detail=(
                            f"child CPU {median(cpu['a']) * 1000:.0f} ms vs "
                            f"{median(cpu['b']) * 1000:.0f} ms "
                            f"(ratio {median(ratios(cpu['a'], cpu['b'])):.2f}×)"
                        ),
                        samples={"A s": a, "B s": b, "ratio": r},
                        seconds=time.perf_counter() - started,
                    )
                )
            )
    return results


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
