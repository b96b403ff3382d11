"""Configuration: ~/.picobot/config.json (camelCase keys) overridden by PICOBOT_* env vars.

The file may hold `//` line comments (`picobot onboard` writes a commented file); they are
stripped before parsing, keeping line numbers so errors can point at the right line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasGenerator, BaseModel, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel, to_snake
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from picobot_tui.config.env_vars import unknown_variables, variable_for
from picobot_tui.config.jsonc import strip_json_comments
from picobot_tui.core import json_input
from picobot_tui.core.paths import config_path
from picobot_tui.core.settings import CoreSettings, Section


class UiConfig(Section):
    """The `ui` group (TUI only)."""

    bell: Literal["never", "unfocused", "always"] = "unfocused"
    """Ring the terminal bell when a turn ends or approval is needed."""
    theme: str = "textual-dark"
    """Textual theme name."""
    show_timeline: bool = True
    """Show the tool-call timeline pane at start (ctrl+t toggles it)."""
    show_gauge: bool = True
    """Show the token-budget gauge at start (ctrl+g toggles it)."""
    keys: dict[str, Any] = {}
    """Move the TUI's keys, e.g. `{"toggle_gauge": "f5"}`: sessions, new_session,
    toggle_timeline, toggle_gauge, interrupt, interrupt_or_quit, quit, cycle_mode
    (docs/tui.md's key table). A bad entry is warned about and keeps its default."""


class ServerConfig(Section):
    """The `server` group: the warm start server (docs/server.md). Read by the stdlib-only
    client (`warm/policy.py`) straight from the file, before these settings are loaded."""

    enabled: bool = True
    """Answer `agent -m` and `agent --json` from a warm server (started on demand; under
    `CI=true` only one started by `picobot server start`). `PICOBOT_SERVER=0` turns it
    off too."""
    idle_minutes: float = Field(default=15.0, gt=0)
    """A server with no call for this long exits."""


# Maps whose keys are names of the user's (HTTP headers, environment variables), not fields.
_VERBATIM = frozenset({"extra_headers", "headers", "env"})


def _snake_keys(value: Any) -> Any:
    """Rename camelCase keys to field names, recursively (header and env maps, and MCP
    server names, keep their keys)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = to_snake(k) if isinstance(k, str) else k
            if key in _VERBATIM:
                out[key] = v
            elif key == "mcp_servers" and isinstance(v, dict):
                # Server names are the user's (`myGit` stays `myGit`); their entries are ours.
                out[key] = {name: _snake_keys(entry) for name, entry in v.items()}
            else:
                out[key] = _snake_keys(v)
        return out
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value


class ConfigError(Exception):
    """A config problem the user must fix; the message says where and what."""


def _user_named(loc: tuple[Any, ...], i: int) -> bool:
    """Whether `loc[i]` is a name of the user's (an MCP server, a header, an env variable),
    kept as written, not one of our field names."""
    return i > 0 and loc[i - 1] in ("mcp_servers", *_VERBATIM)


def _key_path(loc: tuple[Any, ...]) -> str:
    """`tools.mcpServers.my_git.toolTimeout`: field names in camelCase, the user's as is."""
    return ".".join(
        str(p) if not isinstance(p, str) or _user_named(loc, i) else to_camel(p)
        for i, p in enumerate(loc)
    )


def _line_of_key(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line number of the last key of `loc` in the raw file: each key is looked
    for after the line of the one before it (`trust` under its own server, not another's)."""
    lines = text.splitlines()
    start, found = 0, None
    for i, part in enumerate(loc):
        if not isinstance(part, str):
            continue
        names = {part} if _user_named(loc, i) else {part, to_camel(part)}
        for n in range(start, len(lines)):
            if any(f'"{name}"' in lines[n] for name in names):
                start, found = n, n + 1
                break
    return found


def _message(err: Any) -> str:
    """pydantic's message, without the "Value error, " its validators' messages get."""
    msg = str(err.get("msg", ""))
    if err.get("type") == "value_error":
        msg = msg.removeprefix("Value error, ")
    if err.get("type") == "model_type":
        msg = "Input should be an object {...}"
    loc = tuple(err.get("loc", ()))
    if err.get("type") == "extra_forbidden" and len(loc) > 2 and loc[-3] == "mcp_servers":
        import difflib

        from picobot_tui.core.shapes.mcp_server import McpServerConfig

        key = str(loc[-1])
        keys = [to_camel(f) for f in McpServerConfig.model_fields]
        close = difflib.get_close_matches(to_camel(key), keys, 1)
        guess = f"; did you mean `{close[0]}`?" if close else ""
        msg = f"unknown key{guess} (an MCP server's keys: {', '.join(keys)})"
    return msg


def _read_config_file(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, ""
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config file: {e}") from None
    if not text.strip():
        return {}, text
    try:
        data = json_input.loads(strip_json_comments(text))
    except json_input.JsonInputError as e:
        where = f"{path}, line {e.line}, column {e.column}" if e.line else str(path)
        raise ConfigError(
            f"{where}: invalid JSON: {e.detail}.\n"
            "Fix the file, or move it away and run `picobot onboard` to write a fresh one."
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}, line 1: the config must be a JSON object {{...}}.")
    return _snake_keys(data), text


class _JsoncFileSource(PydanticBaseSettingsSource):
    """The (commented, camelCase) config file, already read and snake-cased by the loader.

    The loader reads it itself (from a path chosen at run time) so that a broken file gets
    a message with its line and column; this source only hands the result to pydantic.
    """

    def __init__(self, settings_cls: type[BaseSettings], data: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._data = data

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._data)


class Settings(BaseSettings, CoreSettings):
    """All of picobot's configuration: the core's groups (`CoreSettings`) and the TUI's `ui`."""

    model_config = SettingsConfigDict(
        env_prefix="PICOBOT_",
        env_nested_delimiter="__",
        extra="ignore",
        alias_generator=AliasGenerator(serialization_alias=to_camel),
        populate_by_name=True,
        use_attribute_docstrings=True,
    )

    ui: UiConfig = UiConfig()
    server: ServerConfig = ServerConfig()

    @field_validator("server", mode="before")
    @classmethod
    def _server_switch(cls, value: Any) -> Any:
        """`PICOBOT_SERVER=0` (or 1, true, false) is the switch `server.enabled`: the
        variable names the group, so pydantic-settings hands its JSON value here."""
        if isinstance(value, bool | int):
            return {"enabled": bool(value)}
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        data = _FILE_DATA.get("data", {})
        return (init_settings, env_settings, _JsoncFileSource(settings_cls, data))


# The file's data is handed to the source through this slot because pydantic-settings
# builds sources from the class, not from an instance.
_FILE_DATA: dict[str, dict[str, Any]] = {}


def _unknown_keys(data: dict[str, Any], model: type[BaseModel], prefix: str = "") -> list[str]:
    """`key` or `key`; did you mean `close`? for each key of `data` no field of `model` has."""
    out: list[str] = []
    for key, value in data.items():
        field = model.model_fields.get(key)
        path = f"{prefix}{to_camel(key)}"
        if field is None:
            import difflib  # only when a key is unknown

            names = [to_camel(f) for f in model.model_fields]
            close = difflib.get_close_matches(to_camel(key), names, 1, cutoff=0.7)
            guess = f"; did you mean `{prefix}{close[0]}`?" if close else ""
            out.append(f"`{path}` (ignored){guess}")
            continue
        ann = field.annotation
        if isinstance(value, dict) and isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_unknown_keys(value, ann, path + "."))
    return out


def load_settings(path: Path | None = None) -> tuple[Settings, list[str]]:
    """Load config from file + env. Returns the settings and warnings (e.g. unknown keys).

    Raises ConfigError with the file, line and key when the config is invalid.
    """
    path = path or config_path()
    data, text = _read_config_file(path)
    warnings = [f"{path}: unknown config key {k}" for k in _unknown_keys(data, Settings)]
    warnings += unknown_variables(Settings)
    _FILE_DATA["data"] = data
    try:
        settings = Settings()
    except ValidationError as e:
        lines = []
        for err in e.errors():
            loc = tuple(err.get("loc", ()))
            key = _key_path(loc)
            var = variable_for(loc)  # the environment wins over the file
            line = _line_of_key(text, loc) if text else None
            where = f"{path}, line {line}" if line else f"{path} (or PICOBOT_* env)"
            if var is not None:
                where = f"environment variable {var}"
            lines.append(f"{where}: `{key}`: {_message(err)}")
        raise ConfigError("Invalid configuration:\n  " + "\n  ".join(lines)) from None
    except SettingsError as e:
        # An env value pydantic-settings cannot even parse (a list or object field needs JSON).
        m = re.search(r'field "(\w+)"', str(e))
        prefix = f"PICOBOT_{m.group(1).upper()}" if m else "PICOBOT_"
        names = sorted(k for k in os.environ if k.upper().startswith(prefix)) or [prefix + "*"]
        raise ConfigError(
            f"Invalid configuration in the environment ({', '.join(names)}): {e}. Values of "
            "list and object settings must be JSON, e.g. "
            "PICOBOT_TOOLS__ALWAYS_ALLOW='[\"read_file\"]'."
        ) from None
    finally:
        _FILE_DATA.pop("data", None)
    return settings, warnings
