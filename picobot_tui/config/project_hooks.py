"""A project's own hooks: the `hooks` key of `<workspace>/.picobot/config.json`.

Read only in a trusted workspace (the runtime drops them when the TUI's trust prompt is
answered no) and confined like a context file: the resolved path inside the workspace, a
regular file, at most MAX_BYTES. Only `hooks` is read from that file; its other keys are
ignored (the user's config holds the rest).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from picobot_tui.config.settings import ConfigError, _key_path, _message, _read_config_file
from picobot_tui.core.hooks.config import HooksConfig

PROJECT_CONFIG = Path(".picobot") / "config.json"
MAX_BYTES = 256 * 1024


def project_hooks(workspace: Path) -> HooksConfig:
    """The project's hooks (none when it has no such file); ConfigError for a bad one."""
    path = workspace / PROJECT_CONFIG
    if not path.exists() and not path.is_symlink():
        return HooksConfig()
    resolved = path.resolve()
    if not resolved.is_relative_to(workspace.resolve()):
        raise ConfigError(f"{path}: links outside the workspace ({resolved}); not read.")
    if not resolved.is_file():
        raise ConfigError(f"{path}: not a regular file; not read.")
    if resolved.stat().st_size > MAX_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_BYTES // 1024} KiB; not read.")
    data, _ = _read_config_file(resolved)
    try:
        return HooksConfig.model_validate(data.get("hooks") or {})
    except ValidationError as e:
        err = e.errors()[0]
        where = _key_path(("hooks", *err.get("loc", ())))
        raise ConfigError(f"{path}: {where}: {_message(err)}") from None
