"""`python -m bench --write-docs`: the table of docs/performance.md comes from a run's JSON,
and a run of some figures replaces only their rows."""

from __future__ import annotations

import json
from pathlib import Path

from bench.docs_table import BEGIN, END, write_docs


def _run(path: Path, date: str, *numbers: str, ratio: float = 1.0) -> Path:
    results = [
        {"number": n, "name": f"figure {n}", "value": 0.5, "baseline": 0.25, "unit": "s",
         "ratio": ratio, "target": "≤ 2×", "met": True}
        for n in numbers
    ]  # fmt: skip
    path.write_text(json.dumps({"date": date, "load": [1.5, 2.0, 2.5], "results": results}))
    return path


def test_rows_are_merged_by_figure_and_the_prose_is_kept(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nProse before.\n\n" + BEGIN + "\nold\n" + END + "\n\nAfter.\n")
    assert write_docs(_run(tmp_path / "a.json", "2026-12-01 10:00 UTC", "10", "2", "1"), doc) == 3
    assert write_docs(_run(tmp_path / "b.json", "2026-12-03 09:00 UTC", "2", ratio=3.0), doc) == 1
    text = doc.read_text()
    assert text.startswith("# Performance\n\nProse before.\n\n") and text.endswith("\n\nAfter.\n")
    table = text.split(BEGIN)[1].split(END)[0]
    rows = [r for r in table.splitlines() if r.startswith("| ") and "| figure " in r][1:]
    assert [r.split("|")[1].strip() for r in rows] == ["1", "2", "10"]  # by number, not text
    assert "3.00×" in rows[1] and "2026-12-03 (1.5/2.0/2.5)" in rows[1]
    assert "1.00×" in rows[0] and "2026-12-01" in rows[0]
    assert "500 ms" in rows[0] and "250 ms" in rows[0]
    assert "old" not in table
