"""The exit-code table of docs/cli.md and `run/exit_codes` hold the same codes, so a changed
code can't silently break the documented contract scripts rely on (each row is run through
the console script in tests/headless/test_exit_table.py)."""

from __future__ import annotations

import re
from pathlib import Path

from picobot_tui.run import exit_codes

CLI_DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def test_the_cli_doc_documents_every_exit_code() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    start = text.index("### Exit codes")
    section = text[start : text.index("\n## ", start)]
    documented = {int(code) for code in re.findall(r"^\| `(\d+)` \|", section, re.M)}
    defined = {value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")}
    assert documented == defined == {0, 1, 2, 130, 143}
    assert {code for code, _, _ in exit_codes.TABLE} == defined
