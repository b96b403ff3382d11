"""Baseline for #2: a minimal two-command Typer app (`python typer_app.py --help`)."""

import typer

app = typer.Typer(help="A minimal two-command Typer app.", add_completion=False)


@app.command()
def hello(name: str = "world") -> None:
    """Say hello."""
    typer.echo(f"hello {name}")


@app.command()
def bye() -> None:
    """Say goodbye."""
    typer.echo("bye")


if __name__ == "__main__":
    app()
