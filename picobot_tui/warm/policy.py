"""Which calls go through the server, and when a server may be started.

- `PICOBOT_SERVER=0` (or false), or `server.enabled: false` in config.json: never
  (no connect, no start). `PICOBOT_SERVER=1`: always, CI included.
- Unset: `agent -m`, `agent --json` and `acp` attach to a running server; when there is none
  (or it is stale), the call runs cold and starts one in the background, except under
  `CI=true`, where a call never leaves a process running that it was not asked for (a CI
  job's runner waits for, or kills, what its steps leave behind). A server started by hand
  (`picobot server start`) is used under CI too.
Stdlib only: the client imports this.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import NamedTuple

IDLE_MINUTES = 15.0
"""A server with no call for this long exits (server.idleMinutes)."""
_OFF = frozenset({"0", "false"})
_ON = frozenset({"1", "true"})
"""What settings accept: PICOBOT_SERVER names the `server` group, its value is JSON."""
_CI_ON = frozenset({"1", "true", "yes", "on"})
_VALUE_OPTIONS = frozenset(
    {
        "-s",
        "--session",
        "--model",
        "--workspace",
        "--max-tokens",
        "-m",
        "--message",
        "--output-format",
        "--output-schema",
    }
)
"""`agent` options that take a value: the word after them is no flag."""
_ACP_OPTIONS = frozenset({"--logs", "--no-logs"})
"""What `picobot acp` takes; anything else (`--help`, a typo) runs cold, where Typer
answers it on the real stdout before the command's stdout guard runs."""


class Policy(NamedTuple):  # not a dataclass: `dataclasses` costs ~7 ms to import here
    attach: bool
    """Connect to a running server."""
    start: bool
    """Start one in the background when none answered."""
    idle_minutes: float


def is_acp_call(argv: Sequence[str]) -> bool:
    """`picobot acp` (with or without `--logs`): an editor's agent, served warm."""
    args = list(argv[1:])
    return bool(args) and args[0] == "acp" and set(args[1:]) <= _ACP_OPTIONS


def is_warm_call(argv: Sequence[str]) -> bool:
    """`agent … -m TEXT`, `agent … --json` or `acp`: the calls the server is for."""
    if is_acp_call(argv):
        return True
    args = list(argv[1:])
    if not args or args[0] != "agent":
        return False
    i = 1
    while i < len(args):
        word = args[i]
        if word == "--":
            return False
        if word in ("-m", "--message", "--json") or word.startswith("--message="):
            return True
        if word.startswith("-m") and not word.startswith("--"):
            return True  # -mTEXT
        i += 2 if word in _VALUE_OPTIONS else 1
    return False


def _config_server(environ: Mapping[str, str]) -> dict[str, object]:
    """The `server` group of config.json, or {} when absent or unreadable (the call itself
    reports a broken config, warm or cold)."""
    from picobot_tui.config.jsonc import strip_json_comments

    home = environ.get("PICOBOT_HOME") or os.path.join(os.path.expanduser("~"), ".picobot")
    try:
        with open(os.path.join(os.path.expanduser(home), "config.json"), encoding="utf-8") as f:
            text = f.read()
        if '"server"' not in text:
            return {}
        data = json.loads(strip_json_comments(text))
    except (OSError, ValueError):
        return {}
    group = data.get("server") if isinstance(data, dict) else None
    return group if isinstance(group, dict) else {}


def decide(environ: Mapping[str, str]) -> Policy:
    """What this call may do with the server."""
    env_switch = environ.get("PICOBOT_SERVER", "").strip().lower()
    if env_switch in _OFF:  # off: config.json is not even read here
        return Policy(False, False, IDLE_MINUTES)
    group = _config_server(environ)
    idle = group.get("idleMinutes", group.get("idle_minutes", IDLE_MINUTES))
    idle_minutes = float(idle) if isinstance(idle, int | float) and idle > 0 else IDLE_MINUTES
    enabled_var = environ.get("PICOBOT_SERVER__ENABLED", "").strip().lower()
    if enabled_var in _OFF or (not enabled_var and group.get("enabled") is False):
        return Policy(False, False, idle_minutes)
    under_ci = environ.get("CI", "").strip().lower() in _CI_ON
    return Policy(True, env_switch in _ON or not under_ci, idle_minutes)
