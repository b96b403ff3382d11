"""`python -m bench --write-docs`: the benchmark table of docs/performance.md, written from
the last run (bench/results/latest.json), so the figures live in one place.

The table sits between two markers in docs/performance.md. Each row keeps the date and the
machine's load of the run that measured it: a run of some figures (`--only 3,12`) replaces
those rows and leaves the others as they were.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bench.common import ROOT, fmt

DOC = ROOT / "docs" / "performance.md"
BEGIN = "<!-- bench table: written by `python -m bench --write-docs`; do not edit -->"
END = "<!-- end of bench table -->"
HEADER = [
    "| # | figure | value | baseline | ratio | target | met? | taken (load) |",
    "|---|---|---:|---:|---:|---|---|---|",
]


def _key(number: str) -> tuple[int, str]:
    m = re.match(r"(\d+)(.*)", number)
    return (int(m.group(1)), m.group(2)) if m else (10**6, number)


def row(result: dict[str, Any], taken: str) -> str:
    met = {True: "yes", False: "**no**", None: "—"}[result["met"]]
    unit = result["unit"]
    return (
        f"| {result['number']} | {result['name']} | {fmt(result['value'], unit)} | "
        f"{fmt(result['baseline'], unit)} | {result['ratio']:.2f}× | {result['target']} | "
        f"{met} | {taken} |"
    )


def _rows(text: str) -> dict[str, str]:
    """The rows already in the document's table, by figure number."""
    if BEGIN not in text:
        return {}
    body = text.split(BEGIN, 1)[1].split(END, 1)[0]
    out = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == len(HEADER[0].strip("|").split("|")) and cells[0] not in ("#", "---"):
            out[cells[0]] = line.strip()
    return out


def write_docs(latest: Path, doc: Path = DOC) -> int:
    """Merge the rows of `latest` (a run's JSON) into `doc`'s table; the number of rows
    written."""
    run = json.loads(latest.read_text())
    load = "/".join(f"{x:.1f}" for x in run.get("load", ()))
    taken = f"{run['date'][:10]} ({load})"
    text = doc.read_text() if doc.exists() else ""
    rows = _rows(text)
    for result in run["results"]:
        rows[result["number"]] = row(result, taken)
    table = "\n".join([BEGIN, *HEADER, *(rows[k] for k in sorted(rows, key=_key)), END])
    if BEGIN in text:
        before, rest = text.split(BEGIN, 1)
        after = rest.split(END, 1)[1] if END in rest else ""
        text = before + table + after
    else:
        text = text.rstrip("\n") + "\n\n" + table + "\n"
    doc.parent.mkdir(exist_ok=True)
    doc.write_text(text)
    return len(run["results"])
