"""What every `picobot` command shares: the one-line failure. Only typer is imported."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: str, code: int) -> NoReturn:
    """Print `picobot: MESSAGE` on stderr and exit with `code` (run/exit_codes.py)."""
    typer.echo(f"picobot: {message}", err=True)
    raise typer.Exit(code)
