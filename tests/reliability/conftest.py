"""Reliability suites: `--slow` raises the hypothesis example counts (see fuzz.py), and the
number of examples each target really ran is printed at the end."""

from __future__ import annotations

import pytest

from tests.reliability import fuzz


def pytest_configure(config: pytest.Config) -> None:
    fuzz.SLOW = bool(config.getoption("--slow", default=False))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if fuzz.RAN:
        terminalreporter.section("reliability: examples run per target")
        for target, n in sorted(fuzz.RAN.items()):
            terminalreporter.write_line(f"{target:<60} {n:>7}")
    if fuzz.NOTES:
        terminalreporter.section("reliability: figures")
        for line in fuzz.NOTES:
            terminalreporter.write_line(line)
