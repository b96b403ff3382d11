"""A quick look at the `ui` settings the first frame depends on (theme, which side panes
show), read before pydantic-settings is imported so the first frame already looks right.

Best effort: anything unreadable is ignored here. The app applies the validated settings
(and reports any config error) right after the first frame.
"""

from __future__ import annotations

import os
from typing import Any

from picobot_tui.config.jsonc import strip_json_comments
from picobot_tui.core import json_input
from picobot_tui.core.paths import config_path

_FIELDS = {
    "theme": ("theme",),
    "show_timeline": ("showTimeline", "show_timeline"),
    "show_gauge": ("showGauge", "show_gauge"),
}
_TRUE = {"1", "true", "t", "yes", "y", "on"}
_FALSE = {"0", "false", "f", "no", "n", "off"}


def _from_env(field: str) -> str | None:
    # pydantic-settings matches env names case-insensitively.
    wanted = f"PICOBOT_UI__{field}".upper()
    for name, value in os.environ.items():
        if name.upper() == wanted:
            return value
    return None


def peek_ui() -> dict[str, Any]:
    """The `ui` values that config.json and PICOBOT_UI__* set, those that look valid."""
    out: dict[str, Any] = {}
    try:
        data = json_input.loads(strip_json_comments(config_path().read_text(encoding="utf-8")))
        ui = data.get("ui") if isinstance(data, dict) else None
    except (OSError, UnicodeDecodeError, ValueError):
        ui = None
    for field, keys in _FIELDS.items():
        value: Any = None
        if isinstance(ui, dict):
            value = next((ui[k] for k in keys if k in ui), None)
        env = _from_env(field)
        if env is not None:
            value = env
        if field == "theme":
            if isinstance(value, str):
                out[field] = value
        elif isinstance(value, bool):
            out[field] = value
        elif isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            out[field] = value.strip().lower() in _TRUE
    return out
