"""The "Exit codes" line of docs/cli.md and `run/exit_codes` say the same thing, so a changed code
can't silently break the documented contract scripts rely on."""

from __future__ import annotations

import re
from pathlib import Path

from picobot_tui.run import exit_codes

CLI_DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def test_the_cli_doc_documents_every_exit_code() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    start = text.index("**Exit codes:**")
    paragraph = text[start : text.index("\n\n", start)]
    documented = {int(code) for code in re.findall(r"`(\d+)`", paragraph)}
    defined = {value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")}
    assert documented == defined == {0, 1, 2, 130, 143}
