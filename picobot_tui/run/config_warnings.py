"""The settings' warnings (e.g. an unknown key) as the headless front ends show them."""

from __future__ import annotations

from typing import IO


def print_warnings(warnings: list[str], err: IO[str]) -> None:
    """One `picobot: warning: ...` line per warning on `err`."""
    for warning in warnings:
        err.write(f"picobot: warning: {warning}\n")
    err.flush()
