"""#9 Many sessions: `picobot sessions list` (spawn to exit) and opening the session browser
(Ctrl+S until its list is painted) with 10,000 sessions on disk; against 10 sessions.
Also: a content search in the browser over the 10,000 (last keystroke until the first hit
is painted, including the browser's 150 ms typing debounce), and the store's own
time-to-first-hit.

The fixtures are written in the store's format and indexed once by a first listing (the
"cold" figure, reported); the timed runs use the index, as every run after the first does.
"""

from __future__ import annotations

import sys
import time

from bench.common import (
    Result,
    alternate,
    bench_env,
    console_script,
    median,
    ratios,
    report,
    run_driver,
    temp_dir,
    timed_run,
    write_config,
)
from bench.fixtures import NEEDLE, build_index, write_many_sessions

MANY = 10_000
FEW = 10


def _store_first_hit(sessions_dir, reps: int = 5) -> float:  # type: ignore[no-untyped-def]
    from picobot_tui.core.sessions import SessionStore

    times = []
    for _ in range(reps):
        store = SessionStore(sessions_dir)  # a fresh process-like store each time
        t0 = time.perf_counter()
        hits = store.search(NEEDLE)
        next(hits)
        times.append(time.perf_counter() - t0)
        hits.close()
    return median(times)


def run(reps: int = 7) -> list[Result]:
    started = time.perf_counter()
    picobot = console_script()
    results = []
    with temp_dir() as tmp:
        homes = {}
        cold = 0.0
        for n in (MANY, FEW):
            home = tmp / f"home{n}"
            write_config(home, "http://127.0.0.1:9/v1")
            write_many_sessions(home / "sessions", n)
            if n == MANY:
                cold = build_index(home / "sessions")
            homes[n] = bench_env(home)
        timed_run([picobot, "sessions", "list"], homes[FEW])
        print(f"    fixtures written and indexed in {time.perf_counter() - started:.1f} s")

        def listing(n: int) -> float:
            return timed_run([picobot, "sessions", "list"], homes[n])[0]

        a, b = alternate(lambda: listing(MANY), lambda: listing(FEW), reps, budget=30)
        r = ratios(a, b)
        results.append(
            report(
                Result(
                    "9a",
                    f"`picobot sessions list` with {MANY:,} sessions",
                    median(a),
                    median(b),
                    "s",
                    median(r),
                    "≤ 3× and < 0.5 s",
                    median(r) <= 3 and median(a) < 0.5,
                    detail=f"cold (first listing builds the index): {cold:.2f} s in-process",
                    samples={"A s": a, "B s": b, "ratio": r},
                    seconds=time.perf_counter() - started,
                )
            )
        )

        search: list[float] = []

        def browser(n: int) -> float:
            params = {"needle": NEEDLE if n == MANY else None}
            result = run_driver("browser", homes[n], params, timeout=120)
            if n == MANY:
                search.append(result["search_first"])
            return result["open"]

        a, b = alternate(lambda: browser(MANY), lambda: browser(FEW), 3, warmup=0, budget=40)
        r = ratios(a, b)
        results.append(
            report(
                Result(
                    "9b",
                    f"session browser (Ctrl+S) until its list is painted, {MANY:,} sessions",
                    median(a),
                    median(b),
                    "s",
                    median(r),
                    "≤ 3× and < 0.5 s",
                    median(r) <= 3 and median(a) < 0.5,
                    samples={"A s": a, "B s": b, "ratio": r},
                    seconds=time.perf_counter() - started,
                )
            )
        )
        core = _store_first_hit(tmp / f"home{MANY}" / "sessions")
        results.append(
            report(
                Result(
                    "9c",
                    f"content search over {MANY:,} sessions: first hit painted in the browser",
                    median(search),
                    core,
                    "s",
                    median(search) / core if core else float("nan"),
                    "≤ 0.3 s",
                    median(search) <= 0.3,
                    detail=(
                        "baseline column: the store's own time to the first hit "
                        "(SessionStore.search, fresh store); the browser adds a 150 ms debounce"
                    ),
                    samples={"browser s": search},
                    seconds=time.perf_counter() - started,
                )
            )
        )
    return results


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
