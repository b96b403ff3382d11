"""Every kind of `notice` event the agent can emit is described in docs/cli.md's protocol
section (issue 25: the `session` notice of `"session": "latest"` was emitted but not
documented, nor were `tools` and `checkpoints`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def emitted_kinds() -> set[str]:
    kinds: set[str] = set()
    for path in (ROOT / "picobot_tui").rglob("*.py"):
        kinds |= set(re.findall(r'\bNotice\(\s*"([a-z_]+)"', path.read_text()))
    return kinds


def test_every_notice_kind_is_documented() -> None:
    kinds = emitted_kinds()
    assert {"context", "compaction", "session"} <= kinds  # the scan finds them
    docs = " ".join((ROOT / "docs" / "cli.md").read_text().split())
    missing = sorted(k for k in kinds if f"kind `{k}`" not in docs)
    assert missing == [], f"notice kinds not in docs/cli.md: {missing}"
