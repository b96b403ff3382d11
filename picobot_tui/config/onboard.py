"""`picobot onboard`: a commented default config and the user's own templates.

Everything goes in `~/.picobot` (PICOBOT_HOME): config.json, AGENTS.md, SOUL.md, USER.md,
TOOLS.md and an empty skills/ folder, which every workspace's prompt starts from. The
workspace itself is not pinned: it stays the directory picobot is started in. An existing
file is replaced only after a yes (on a terminal) or with --force; no empty API key is
written (a missing key stays `null`, so "no key" is what picobot reports).
"""

from __future__ import annotations

import json
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


def run_onboard(*, force: bool = False) -> int:
    home = picobot_home()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    cfg = config_path()
    if _may_write(cfg, force):
        atomic_write(cfg, default_config_text().encode("utf-8"), 0o600, keep_mode=False)
        print(f"wrote {cfg}")
    (home / "skills").mkdir(exist_ok=True)
    source = resources.files("picobot_tui") / "templates"
    for name in TEMPLATES:
        dest = home / name
        if _may_write(dest, force):
            atomic_write(dest, (source / name).read_bytes())
            print(f"wrote {dest}")
    print(
        "\nNext: put your key in the config (providers.openai.apiKey) or export "
        f"{PROVIDER_ENV['openai']}, then run `picobot agent` in your project's directory. "
        "No key? Try `picobot agent --model demo`."
    )
    return 0
