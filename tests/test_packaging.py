"""The package list in pyproject is explicit (widgets/ and styles/ are mapped in from the
top level), so a new subpackage is easy to forget: an editable install still works, a
wheel silently lacks it. Every folder of Python code must be listed."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _code_folders() -> set[str]:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    mapped = {v: k for k, v in conf["setuptools"]["package-dir"].items()}
    found: set[str] = set()
    for top, name in [("picobot_tui", "picobot_tui"), *mapped.items()]:
        for folder in [ROOT / top, *(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            if "__pycache__" in folder.parts or not any(folder.glob("*.py")):
                continue
            rel = folder.relative_to(ROOT / top).parts
            found.add(".".join([name, *rel]))
    return found


def test_every_folder_of_code_is_a_listed_package() -> None:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(conf["setuptools"]["packages"])
    missing = sorted(_code_folders() - listed)
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    gone = sorted(p for p in listed if p not in _code_folders() and p != "picobot_tui.styles")
    assert not gone, f"listed but no such folder of code: {gone}"
