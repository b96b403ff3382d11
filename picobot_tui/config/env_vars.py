"""The `PICOBOT_*` environment variables: which setting each names, which name none.

pydantic-settings reads `PICOBOT_` + the setting's path joined by `__` (case-insensitive)
and silently ignores a name that matches no setting (`PICOBOT_AGENTS__DEFAULTS__MAXTOKENS`),
so those are warned about here; a variable whose value is invalid is named in the error
instead of the config file (`variable_for`).
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from picobot_tui.core import json_input

PREFIX = "PICOBOT_"
DELIMITER = "__"
NOT_SETTINGS = frozenset({"PICOBOT_HOME"})
"""Documented `PICOBOT_` variables that are no setting (PICOBOT_HOME moves the tree)."""


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        for arg in typing.get_args(annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                return arg
    return None


def _is_mapping(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _names(model: type[BaseModel], prefix: str) -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        full = f"{prefix}{name.upper()}"
        out.append(full)
        sub = _model_of(field.annotation)
        if sub is not None:
            out.extend(_names(sub, full + DELIMITER))
    return out


def _known(model: type[BaseModel], parts: list[str]) -> bool:
    for i, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            return False
        sub = _model_of(field.annotation)
        if sub is None:  # a value: only a mapping's keys may follow
            return i == len(parts) - 1 or _is_mapping(field.annotation)
        model = sub
    return True  # a whole group, given as JSON


def settings_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The `PICOBOT_*` variables that pydantic-settings reads as settings."""
    env = os.environ if environ is None else environ
    return {
        k: v
        for k, v in env.items()
        if k.upper().startswith(PREFIX) and k.upper() not in NOT_SETTINGS
    }


def unknown_variables(
    model: type[BaseModel], environ: Mapping[str, str] | None = None
) -> list[str]:
    """One warning per `PICOBOT_*` variable that names no setting (with a close name)."""
    names: list[str] | None = None
    out = []
    for var in sorted(settings_variables(environ)):
        parts = var[len(PREFIX) :].lower().split(DELIMITER)
        if _known(model, parts):
            continue
        import difflib  # only when a name is unknown

        names = names if names is not None else _names(model, "")
        close = difflib.get_close_matches(var[len(PREFIX) :].upper(), names, n=1, cutoff=0.8)
        hint = f"; did you mean {PREFIX}{close[0]}?" if close else ""
        out.append(f"environment variable {var} names no setting (ignored){hint}")
    return out


def _holds(value: str, rest: tuple[str, ...]) -> bool:
    """Whether a group's JSON value sets the path `rest` (by field name, as pydantic reads
    it)."""
    try:
        data: Any = json_input.loads(value)
    except ValueError:
        return True  # not JSON: the error is about this variable anyway
    for part in rest:
        if not isinstance(data, dict):
            return False
        if part not in data:
            return False
        data = data[part]
    return True


def variable_for(loc: tuple[Any, ...], environ: Mapping[str, str] | None = None) -> str | None:
    """The environment variable that set the value at `loc`, if one did (it wins over the
    file): the setting's own variable, or a group's JSON that holds it."""
    env = settings_variables(environ)
    by_upper = {k.upper(): k for k in env}
    path = tuple(str(p) for p in loc)
    for i in range(len(path), 0, -1):
        var = by_upper.get(PREFIX + DELIMITER.join(path[:i]).upper())
        if var is not None and (i == len(path) or _holds(env[var], path[i:])):
            return var
    return None
