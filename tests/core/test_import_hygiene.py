"""The core stays free of textual and rich, and nothing on the start-up path imports litellm."""

from __future__ import annotations

import subprocess
import sys

import pytest

WALK_CORE = (
    "import importlib, pkgutil, sys\n"
    "import picobot_tui.core as core\n"
    "for m in pkgutil.walk_packages(core.__path__, 'picobot_tui.core.'):\n"
    "    importlib.import_module(m.name)\n"
    "print(sorted(k for k in ('textual', 'rich', 'litellm', 'openai') if k in sys.modules))\n"
)


def loaded_after(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return res.stdout.strip().splitlines()[-1]


def test_every_core_module_imports_without_textual_rich_or_litellm() -> None:
    assert loaded_after(WALK_CORE) == "[]"


@pytest.mark.parametrize(
    "module",
    [
        "picobot_tui.cli",
        "picobot_tui.run.runtime",
        "picobot_tui.headless.text",
        "picobot_tui.tui.app",
    ],
)
def test_front_ends_do_not_import_litellm_at_import_time(module: str) -> None:
    code = f"import sys, {module}\nprint('litellm' in sys.modules)"
    assert loaded_after(code) == "False"


FIRST_FRAME_HEAVY = ("pydantic", "pydantic_settings", "markdown_it", "rich.markdown", "litellm")


def test_the_tui_paints_its_first_frame_without_settings_or_markdown() -> None:
    """What the TUI imports before its first frame (the CLI, the app, its widgets) leaves
    out pydantic (settings, and typer>=0.29's option parsing) and markdown-it (bench #1)."""
    code = (
        "import sys, typer, picobot_tui.cli, picobot_tui.tui.app, picobot_tui.tui.launch\n"
        "from picobot_tui.cli import app\n"
        "from typer.testing import CliRunner\n"
        "import picobot_tui.tui.launch as tui\n"
        "tui.run_app = lambda opts, **kw: print('run_app', opts.model)\n"
        "res = CliRunner().invoke(app, ['agent', '--model', 'demo'])\n"
        "print(res.output.strip(), res.exception)\n"
        f"print(sorted(m for m in {FIRST_FRAME_HEAVY!r} if m in sys.modules))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # The stand-in ran (an exception before it would leave the heavy modules out, too).
    assert res.stdout.strip().splitlines() == ["run_app demo None", "[]"], res.stdout


MCP_MODULES = (
    "mcp",
    "mcp_types",
    "picobot_tui.headless.mcp_commands",
    "picobot_tui.core.mcp.server",
)


@pytest.mark.parametrize("argv", [["--help"], ["sessions", "list"], ["mcp", "--help"]])
def test_help_and_sessions_list_load_no_mcp(argv: list[str], tmp_path) -> None:
    """The MCP SDK (~0.9 s) and the `picobot mcp` commands load only when those run."""
    code = (
        "import os, sys\n"
        f"os.environ['PICOBOT_HOME'] = {str(tmp_path)!r}\n"
        "from picobot_tui import cli\n"
        f"sys.argv = ['picobot', *{argv!r}]\n"
        "try:\n    cli.app()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {MCP_MODULES!r} if m in sys.modules))\n"
    )
    assert loaded_after(code) == "[]"
