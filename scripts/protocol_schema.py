"""Write the headless protocol's JSON Schema, built from the code's types
(picobot_tui/headless/schema.py), to the package and to docs/.

Run: python scripts/protocol_schema.py           (writes both files)
     python scripts/protocol_schema.py --check   (exit 1 when either is out of date)
tests/headless/test_protocol_schema.py fails when a file and the code disagree, and when
the shape changed without a new PROTOCOL_VERSION and its docs/protocol-changelog.md entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

from picobot_tui.headless import schema

ROOT = Path(__file__).resolve().parent.parent
TARGETS = (
    ROOT / "picobot_tui" / "headless" / schema.SCHEMA_FILE,
    ROOT / "docs" / schema.SCHEMA_FILE,
)


def main(argv: list[str]) -> int:
    text = schema.dump(schema.build())
    stale = [p for p in TARGETS if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date: run python scripts/protocol_schema.py")
        return 1 if stale else 0
    for p in stale:
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    print(f"shape sha256 {schema.shape_digest(schema.build())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
