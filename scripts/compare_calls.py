"""Compare two `pytest --record-calls` runs call by call: one through the worker servers,
one cold (`PICOBOT_TEST_WARM=0`). Exit 0 when every call gave the same normalised exit
code, stdout, stderr and files both ways and the warm run's servers ran calls; else 1, with
each difference shown.

    python scripts/compare_calls.py WARM_DIR COLD_DIR
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

FIELDS = ("argv", "exit", "stdout", "stderr", "home", "cwd")

# Random ids, named in the order they first appear in a call (the sessions' index first: its
# lines are in the order the sessions were made), so a fork's parent stays its parent.
_IDS = (
    re.compile(r"\b[0-9a-f]{8}-\d{8}-\d{6}\b"),  # a session key's id
    re.compile(r"\bcall_demo_[0-9a-f]{8}\b"),  # the demo model's tool-call ids
)
# What differs between any two runs of one test, cold or warm.
_SAME: list[tuple[re.Pattern[str], str]] = [
    # pytest's folder for one test ends in a number that counts the worker's tests of
    # that name (a parametrised test's cases share a cut-off name)
    (
        re.compile(r"/tmp/pytest-of-[^/\s\"']+/pytest-\d+(/popen-gw\d+)?/([^/\s\"']*?)\d+\b"),
        r"<TMP>/\2",
    ),
    (re.compile(r"/tmp/pytest-of-[^/\s\"']+/pytest-\d+(/popen-gw\d+)?"), "<TMP>"),
    (re.compile(r"/tmp/pbw[-\w]*"), "<WORKER>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<PORT>"),
    (
        re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}:?\d{2})?"),
        "<T>",
    ),
    (re.compile(r"\bpid \d+"), "pid <N>"),
    (re.compile(r"\b\d{8}-\d{6}\b"), "<STAMP>"),
    (re.compile(r"\b\d{1,2}:\d{2}(:\d{2})?\b"), "<CLOCK>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<UUID>"),
    (
        re.compile(r"(\"(?:[a-z_]*_ms|[a-z_]*_s|pid|duration|elapsed)\"\s*:\s*)-?[\d.e+-]+"),
        r"\1<N>",
    ),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s)\b"), "<DUR>"),
]


def _protocol_errors_last(stdout: str) -> str:
    """`--json` answers a bad input line with an `error` of kind `protocol` as soon as its
    reader gets to the line, which may be before or during a turn that runs (the reader
    reads ahead, for approvals): those lines keep their order, after the others."""
    lines = stdout.splitlines(keepends=True)
    bad = [x for x in lines if x.startswith('{"type": "error"') and '"kind": "protocol"' in x]
    return "".join([x for x in lines if x not in bad] + bad)


def normalise(entry: dict[str, Any]) -> dict[str, Any]:
    """`entry` with what differs between any two runs of its test replaced."""
    home, cwd = entry["home"], entry["cwd"]
    order = [home.get("sessions/index.jsonl", ""), entry["stdout"], entry["stderr"]]
    order += entry["argv"] + [
        x for files in (home, cwd) for kv in sorted(files.items()) for x in kv
    ]
    names: dict[str, str] = {}
    for text in order:
        for kind, pattern in enumerate(_IDS):
            for found in pattern.findall(text):
                names.setdefault(found, f"<ID{kind}.{len(names) + 1}>")

    def same(text: str) -> str:
        for raw, name in names.items():
            text = text.replace(raw, name)
        for pattern, repl in _SAME:
            text = pattern.sub(repl, text)
        return text

    out = dict(entry)
    for field in ("stdout", "stderr"):
        out[field] = same(entry[field])
    out["stdout"] = _protocol_errors_last(out["stdout"])
    out["argv"] = [same(a) for a in entry["argv"]]
    for field in ("home", "cwd"):
        out[field] = dict(sorted((same(k), same(v)) for k, v in entry[field].items()))
    return out


def load(directory: Path) -> dict[tuple[str, int], dict[str, Any]]:
    calls: dict[tuple[str, int], dict[str, Any]] = {}
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = normalise(json.loads(line))
            calls[(entry["test"], entry["n"])] = entry
    return calls


def served(directory: Path) -> int:
    return sum(int(json.loads(p.read_text())["served"]) for p in directory.glob("served-*.json"))


def _text(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines(keepends=True)
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).splitlines(True)


def differences(warm: dict[str, Any], cold: dict[str, Any]) -> list[str]:
    out = []
    for field in FIELDS:
        if warm[field] != cold[field]:
            diff = difflib.unified_diff(
                _text(cold[field]), _text(warm[field]), f"cold {field}", f"warm {field}"
            )
            out.append("".join(diff))
    return out


def compare(warm_dir: Path, cold_dir: Path) -> tuple[list[str], dict[str, int]]:
    """(the problems found, the counts behind the verdict)."""
    warm, cold = load(warm_dir), load(cold_dir)
    problems = []
    for key in sorted(warm.keys() | cold.keys()):
        test, n = key
        if key not in cold or key not in warm:
            problems.append(f"{test} call {n}: only in the {'warm' if key in warm else 'cold'} run")
            continue
        if cold[key]["route"] != "cold":
            problems.append(f"{test} call {n}: the cold run routed it to a server")
            continue
        for diff in differences(warm[key], cold[key]):
            problems.append(f"{test} call {n} ({warm[key]['route']}):\n{diff}")
    counts = {
        "calls": len(warm.keys() & cold.keys()),
        "routed_warm": sum(1 for e in warm.values() if e["route"] == "warm"),
        "served": served(warm_dir),
    }
    if counts["served"] == 0:
        problems.append("the warm run's servers ran no call: nothing was compared warm")
    return problems, counts


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    problems, counts = compare(Path(argv[0]), Path(argv[1]))
    for problem in problems:
        print(problem)
    print(
        f"{counts['calls']} calls compared, {counts['routed_warm']} routed to a warm server, "
        f"{counts['served']} run by one; {len(problems)} differences"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
