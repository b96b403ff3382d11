"""Run every benchmark and print the table of figures.

    python -m bench                 # every figure (a full run's time: docs/performance.md)
    python -m bench --only 1,6,9    # some of them
    python -m bench --write-docs    # the last run's table into docs/performance.md
    python bench/run_all.py         # the same as python -m bench

Each benchmark prints its samples, medians and the median ratio against its baseline (run
in the same process or run, A/B alternating). The summary is written to
bench/results/latest.json and latest.md (not tracked by git).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from datetime import datetime
from pathlib import Path

if __package__ in (None, ""):  # `python bench/run_all.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from bench.common import ROOT, Result, fmt  # noqa: E402

MODULES = {
    "1": "bench.bench_01_cold_start",
    "2": "bench.bench_02_cli_start",
    "3": "bench.bench_03_headless",
    "4": "bench.bench_04_stream_throughput",
    "5": "bench.bench_05_input_latency",
    "6": "bench.bench_06_long_resume",
    "7": "bench.bench_07_token_cost",
    "8": "bench.bench_08_session_append",
    "9": "bench.bench_09_many_sessions",
    "10": "bench.bench_10_loop_overhead",
    "11": "bench.bench_11_compaction",
    "12": "bench.bench_12_mcp",  # 12a, 12b, 12c (issue 12)
    "13": "bench.bench_13_acp",  # 13a, 13b, 13c (issue 13)
    "14": "bench.bench_14_checkpoints",  # 14a, 14b, 14c (issue 14)
    "15": "bench.bench_15_warm_server",  # 15a, 15b, 15c, 15e (issue 23)
    "16": "bench.bench_16_caching",  # 16a-16d (issue 24)
    "17": "bench.bench_17_hooks",  # 17a (issue 27)
}


def markdown_table(results: list[Result]) -> str:
    rows = [
        "| # | figure | value | baseline | ratio | target | met? |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for r in results:
        met = {True: "yes", False: "**no**", None: "—"}[r.met]
        rows.append(
            f"| {r.number} | {r.name} | {fmt(r.value, r.unit)} | {fmt(r.baseline, r.unit)} | "
            f"{r.ratio:.2f}× | {r.target} | {met} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="comma-separated figure numbers, e.g. 1,6,9")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="write the last run's figures into docs/performance.md (runs nothing)",
    )
    args = parser.parse_args(argv)
    if args.write_docs:
        from bench.docs_table import DOC, write_docs

        latest = ROOT / "bench" / "results" / "latest.json"
        if not latest.exists():
            print("no run yet: python -m bench first", file=sys.stderr)
            return 1
        print(f"{write_docs(latest)} figures written to {DOC.relative_to(ROOT)}")
        return 0
    chosen = args.only.split(",") if args.only else list(MODULES)
    results: list[Result] = []
    failures: list[str] = []
    started = time.perf_counter()
    for number in chosen:
        name = MODULES[number.strip()]
        print(f"\n== #{number}: {name}", flush=True)
        t0 = time.perf_counter()
        try:
            out = importlib.import_module(name).run()
        except Exception as e:  # one broken benchmark must not hide the others
            failures.append(f"#{number}: {type(e).__name__}: {e}")
            print(f"  FAILED: {type(e).__name__}: {e}", flush=True)
            continue
        results.extend(out if isinstance(out, list) else [out])
        print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    table = markdown_table(results)
    stamp = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    print(f"\n== summary ({stamp}, {time.perf_counter() - started:.0f} s)\n\n{table}")
    for failure in failures:
        print(f"FAILED {failure}")
    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(exist_ok=True)
    meta = {
        "date": stamp,
        "python": sys.version.split()[0],
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "load": os.getloadavg(),
    }
    (out_dir / "latest.json").write_text(
        json.dumps(
            {**meta, "results": [r.to_json() for r in results], "failures": failures}, indent=2
        )
    )
    (out_dir / "latest.md").write_text(f"Taken {stamp}.\n\n{table}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
