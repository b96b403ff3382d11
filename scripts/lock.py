"""Write requirements/test.lock: every package of the test environment (pyproject's
dependencies and the `test` extra), pinned, with the hashes of every file PyPI has for it.

Run: pip install uv && python scripts/lock.py
CI installs from the lock (README, "Set-up"), so a new release of a dependency changes
CI only when this is run again and the change is committed. pyproject keeps the ranges
users install with; tests/test_dependencies.py checks that the lock stays inside them.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = "python scripts/lock.py"


def main() -> int:
    argv = [
        sys.executable, "-m", "uv", "pip", "compile", "pyproject.toml",
        "--extra", "test",
        "--generate-hashes",
        "--universal",  # markers kept, so one lock serves every platform
        "--python-version", "3.11",  # the oldest Python picobot supports
        "--custom-compile-command", COMMAND,
        "--output-file", "requirements/test.lock",
        *sys.argv[1:],  # e.g. --upgrade-package litellm
    ]  # fmt: skip
    if importlib.util.find_spec("uv") is None:
        print("scripts/lock.py needs uv: pip install uv", file=sys.stderr)
        return 1
    return subprocess.run(argv, cwd=ROOT).returncode


if __name__ == "__main__":
    raise SystemExit(main())
