"""A hook for the hook tests, run by picobot as a real command:

    python hook_script.py --record DIR [--exit N] [--stderr TEXT] [--stdout TEXT]
                          [--sleep S] [--allow-when-active]

It appends the JSON it got on stdin to DIR/<hook_event_name>.jsonl (with its cwd and its
environment's names), then writes `--stdout` and `--stderr`, sleeps `--sleep` seconds and
exits `--exit`. `--allow-when-active`: a Stop hook that exits 0 when `stop_hook_active` is
set (the loop guard Claude Code's Stop hooks use).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--record", type=Path, required=True)
    p.add_argument("--exit", type=int, default=0)
    p.add_argument("--stderr", default="")
    p.add_argument("--stdout", default="")
    p.add_argument("--sleep", type=float, default=0.0)
    p.add_argument("--allow-when-active", action="store_true")
    a = p.parse_args()
    data = json.loads(sys.stdin.read())
    a.record.mkdir(parents=True, exist_ok=True)
    entry = {"input": data, "cwd": os.getcwd(), "env": sorted(os.environ)}
    with (a.record / f"{data['hook_event_name']}.jsonl").open("a") as f:
        f.write(json.dumps(entry) + "\n")
    if a.allow_when_active and data.get("stop_hook_active"):
        return 0
    sys.stdout.write(a.stdout)
    sys.stderr.write(a.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    time.sleep(a.sleep)
    return a.exit


if __name__ == "__main__":
    sys.exit(main())
