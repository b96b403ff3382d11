"""`picobot onboard`: a commented default config and the user's own templates.

Everything goes in `~/.picobot` (PICOBOT_HOME): config.json, AGENTS.md, SOUL.md, USER.md,
TOOLS.md and an empty skills/ folder, which every workspace's prompt starts from. The
workspace itself is not pinned: it stays the directory picobot is started in. An existing
file is replaced only after a yes (on a terminal) or with --force; no empty API key is
written (a missing key stays `null`, so "no key" is what picobot reports).

The key: on a terminal onboard asks for it (hidden, Enter skips); without one it says how to
set it. While there is none, the model line stays a comment, so the model is not "chosen"
and the TUI opens on the offline demo (with a banner naming the variable) instead of on a
model that cannot answer.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from picobot_tui.config.settings import Settings
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.paths import config_path, picobot_home
from picobot_tui.core.shapes.providers import PROVIDER_ENV

TEMPLATES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")


def _jsonc(model: BaseModel, indent: int = 1) -> str:
    """The model's defaults as JSON with a `//` comment above each key (its docstring)."""
    pad = "  " * indent
    lines = ["{"]
    fields = list(type(model).model_fields.items())
    for i, (name, field) in enumerate(fields):
        value: Any = getattr(model, name)
        if field.description:
            for doc_line in field.description.splitlines():
                lines.append(f"{pad}// {doc_line.strip()}")
        key = json.dumps(to_camel(name))
        if isinstance(value, BaseModel):
            rendered = _jsonc(value, indent + 1)
        else:
            dumped = type(model).model_validate(model).model_dump(mode="json")[name]
            rendered = json.dumps(dumped)
        comma = "," if i < len(fields) - 1 else ""
        lines.append(f"{pad}{key}: {rendered}{comma}")
    lines.append("  " * (indent - 1) + "}")
    return "\n".join(lines)


def default_config_text() -> str:
    header = (
        "// picobot configuration. Keys are camelCase (snake_case works too).\n"
        "// Environment variables override it: PICOBOT_AGENTS__DEFAULTS__MODEL=...\n"
        "// The workspace is the directory you start picobot in (or --workspace DIR). Your own\n"
        "// AGENTS.md, SOUL.md, USER.md, TOOLS.md and skills/ live next to this file.\n"
    )
    return header + _jsonc(Settings.model_construct()) + "\n"


def _may_write(path: Path, force: bool) -> bool:
    if not path.exists() or force:
        return True
    if not sys.stdin.isatty():
        print(f"kept {path} (exists; pass --force to overwrite)")
        return False
    try:
        answer = input(f"{path} exists. Overwrite? [y/N] ").strip().lower()
    except EOFError:
        answer = ""
    if answer not in ("y", "yes"):
        print(f"kept {path}")
        return False
    return True


DEFAULT_MODEL_LINE = '"model": "openai/gpt-4o-mini",'
_KEY_VAR = PROVIDER_ENV["openai"]


def _ask_key() -> str:
    """The OpenAI key typed on a terminal (not echoed), or `` (skipped, or no terminal)."""
    if not sys.stdin.isatty():
        return ""
    prompt = (
        "OpenAI API key for openai/gpt-4o-mini (not shown as you type; Enter skips: "
        f"picobot opens on the offline demo until {_KEY_VAR} is set): "
    )
    try:
        return _read_hidden(prompt).strip()
    except (EOFError, KeyboardInterrupt):
        print()
        return ""


def _read_hidden(prompt: str) -> str:
    """A line from stdin with echo off. Not getpass: it reads /dev/tty, the controlling
    terminal, which need not be the stdin onboard was given."""
    try:
        import termios
    except ImportError:  # no termios (Windows): getpass does the same there
        return getpass.getpass(prompt)
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    quiet = termios.tcgetattr(fd)
    quiet[3] &= ~termios.ECHO
    try:
        # Echo off before the prompt shows: a key typed (or pasted) at once is not echoed.
        termios.tcsetattr(fd, termios.TCSADRAIN, quiet)
        print(prompt, end="", flush=True)
        line = sys.stdin.readline()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
        print()
    if not line:
        raise EOFError
    return line


def config_text(key: str, has_key: bool) -> str:
    """The default config: with `key` in providers.openai.apiKey; without any key (none
    given, none in the environment) the model line commented out (see the docstring)."""
    text = default_config_text()
    if key:
        head, sep, rest = text.partition('"openai": {')
        rest = rest.replace('"apiKey": null', f'"apiKey": {json.dumps(key)}', 1)
        text = head + sep + rest
    elif not has_key:
        text = text.replace(
            DEFAULT_MODEL_LINE,
            f"// {DEFAULT_MODEL_LINE} (the default: a comment until there is a key, so "
            "picobot opens on the demo)",
            1,
        )
    return text


def run_onboard(*, force: bool = False) -> int:
    home = picobot_home()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    cfg = config_path()
    in_env = bool(os.environ.get(_KEY_VAR))
    key = ""
    if _may_write(cfg, force):
        key = "" if in_env else _ask_key()
        text = config_text(key, in_env)
        atomic_write(cfg, text.encode("utf-8"), 0o600, keep_mode=False)
        print(f"wrote {cfg}" + (" (with your key, 0600)" if key else ""))
    (home / "skills").mkdir(exist_ok=True)
    source = resources.files("picobot_tui") / "templates"
    for name in TEMPLATES:
        dest = home / name
        if _may_write(dest, force):
            atomic_write(dest, (source / name).read_bytes())
            print(f"wrote {dest}")
    if key or in_env:
        where = "the config" if key else f"{_KEY_VAR} in the environment"
        print(f"\nThe key comes from {where}. Next: run `picobot agent` in your project.")
    else:
        print(
            f"\nNo key yet: export {_KEY_VAR}=sk-... (or set providers.openai.apiKey in "
            f"{cfg}). Until then `picobot agent` opens on the offline demo model; then run "
            "it in your project's directory."
        )
    return 0
