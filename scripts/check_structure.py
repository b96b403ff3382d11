"""The checked contracts: import-linter's import contracts and mypy over the package.

    python scripts/check_structure.py            # both; exit 1 when either fails
    python scripts/check_structure.py imports    # import-linter only
    python scripts/check_structure.py types      # mypy only

`widgets/` and `styles/` live at the repository's top level and are installed as
`picobot_tui.widgets` / `picobot_tui.styles` (setuptools package-dir). Neither grimp
(import-linter) nor mypy follows that mapping, so both run over a copy of the package as it
is installed, and mypy's paths are mapped back to the repository's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def _installed_copy(into: Path) -> Path:
    pkg = into / "picobot_tui"
    shutil.copytree(ROOT / "picobot_tui", pkg, ignore=IGNORE)
    shutil.copytree(ROOT / "widgets", pkg / "widgets", ignore=IGNORE)
    shutil.copytree(ROOT / "styles", pkg / "styles", ignore=IGNORE)
    return pkg


def _env(copy: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy), str(ROOT)])
    return env


def imports(copy: Path) -> int:
    print("== import contracts (lint-imports)", flush=True)
    return subprocess.run(
        ["lint-imports", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=copy,
        env=_env(copy),
    ).returncode


def types(copy: Path) -> int:
    print("== types (mypy)", flush=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "-p",
            "picobot_tui",
        ],
        cwd=copy,
        env=_env(copy),
        capture_output=True,
        text=True,
    )
    out = proc.stdout.replace("picobot_tui/widgets/", "widgets/")
    out = out.replace("picobot_tui/styles/", "styles/")
    sys.stdout.write(out)
    sys.stderr.write(proc.stderr)
    return proc.returncode


def main() -> int:
    which = sys.argv[1:] or ["imports", "types"]
    with tempfile.TemporaryDirectory(prefix="picobot-structure-") as tmp:
        copy = Path(tmp)
        _installed_copy(copy)
        codes = [imports(copy) if w == "imports" else types(copy) for w in which]
    return 1 if any(codes) else 0


if __name__ == "__main__":
    sys.exit(main())
