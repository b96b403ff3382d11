"""The checked contracts (CONTRIBUTING.md) as part of the suite, so the README's one test
command is all of CI: ruff lint and format, the import contracts, no import cycles, and mypy at zero errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_lint_and_format_are_clean() -> None:
    lint = _run(sys.executable, "-m", "ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_import_contracts_are_kept() -> None:
    """Layers (core < widgets < config < run < front ends < cli), peers independent."""
    proc = _run(sys.executable, "scripts/check_structure.py", "imports")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " kept, 0 broken." in proc.stdout


def test_no_import_cycles() -> None:
    """No two modules import each other, even through a chain, in-function or
    TYPE_CHECKING imports included (they are app methods kept in another file)."""
    proc = _run(sys.executable, "scripts/structure.py", "--cycles")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "\n0 pairs" in proc.stdout


def test_mypy_finds_no_error() -> None:
    proc = _run(sys.executable, "scripts/check_structure.py", "types")
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout


def test_the_core_is_checked_with_every_strict_flag() -> None:
    """`mypy --strict` cannot be set per module; the core's override must set each flag it
    implies that can be, so the suite's one mypy run holds the core to --strict."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    core = [o for o in conf.get("overrides", []) if o.get("module") == "picobot_tui.core.*"]
    assert len(core) == 1, "one override for picobot_tui.core.*"
    strict_per_module = {
        "disallow_any_generics",
        "disallow_subclassing_any",
        "disallow_untyped_calls",
        "disallow_untyped_defs",
        "disallow_incomplete_defs",
        "disallow_untyped_decorators",
        "warn_return_any",
        "no_implicit_reexport",
        "strict_equality",
        "extra_checks",
    }
    missing = sorted(f for f in strict_per_module if core[0].get(f) is not True)
    assert not missing, f"the core's mypy override lacks {missing}"
    loosened = sorted(k for k, v in core[0].items() if k.startswith("ignore") or v is False)
    assert not loosened, f"the core's override hides errors: {loosened}"


MAX_MODULE_LINES = 600  # CONTRIBUTING: split a module before it holds more than one job


def test_no_module_is_over_600_lines() -> None:
    sources = [*(ROOT / "picobot_tui").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")]
    long = {
        str(p.relative_to(ROOT)): n
        for p in sources
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"split these modules (lines): {long}"
