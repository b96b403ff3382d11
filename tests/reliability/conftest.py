"""Reliability suites: `--slow` raises the hypothesis example counts (see fuzz.py). The
number of examples each target really ran is printed at the end of the run by the root
conftest (which also gathers the counts from pytest-xdist's workers)."""

from __future__ import annotations

import pytest

from tests.reliability import fuzz


def pytest_configure(config: pytest.Config) -> None:
    fuzz.SLOW = bool(config.getoption("--slow", default=False))
