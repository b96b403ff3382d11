"""#8 Session store: the time to append message 10,000, against appending message 10.

Each repetition opens a session through the real store (taking its lock, as the app does),
times single `Session.append` calls (the JSONL line, the listing-index line, and any index
compaction they trigger), and closes it. A: the session holds ~10,000 messages; B: ~10.
Appends are append-only writes, so the ratio should stay near 1.
"""

from __future__ import annotations

import sys
import time

from bench.common import Result, alternate, median, ratios, report, temp_dir
from bench.fixtures import long_session_messages, write_session

APPENDS = 200  # timed appends per repetition


def run(reps: int = 7) -> Result:
    from picobot_tui.core.sessions import SessionStore

    started = time.perf_counter()
    with temp_dir() as tmp:
        store = SessionStore(tmp / "sessions")
        pool = long_session_messages(2_000, 500)
        big = pool * 5  # 10,000 messages
        write_session(store.dir, "cli:bench-big", big[:9_999])
        write_session(store.dir, "cli:bench-small", big[:9])
        feed = [{k: v for k, v in m.items() if k != "ts"} for m in pool[: APPENDS * 2]]
        means: dict[str, list[float]] = {"a": [], "b": []}

        def timed(key: str, label: str) -> float:
            session = store.open(key, create=False)
            try:
                times = []
                for msg in feed[:APPENDS]:
                    t0 = time.perf_counter()
                    session.append(msg)
                    times.append(time.perf_counter() - t0)
            finally:
                session.close()
            means[label].append(sum(times) / len(times) * 1e6)
            return median(times) * 1e6  # µs

        a, b = alternate(
            lambda: timed("cli:bench-big", "a"), lambda: timed("cli:bench-small", "b"), reps
        )
    r = ratios(a, b)
    ratio = median(r)
    return report(
        Result(
            "8",
            "session store: append at message 10,000",
            median(a),
            median(b),
            "us",
            ratio,
            "≤ 1.2×",
            ratio <= 1.2,
            detail=(
                f"median of {APPENDS} single appends per repetition; mean per append incl. "
                f"index compactions: {median(means['a']):.1f} µs vs {median(means['b']):.1f} µs"
            ),
            samples={"A µs": a, "B µs": b, "ratio": r},
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
