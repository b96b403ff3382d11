"""The client path loads the stdlib and picobot's own stdlib-only modules, nothing else:
no Typer, pydantic, Rich or LiteLLM before the call is handed over (the point of it)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

ALLOWED = {
    "picobot_tui",
    "picobot_tui.entry",
    "picobot_tui.config",
    "picobot_tui.config.jsonc",
    *(f"picobot_tui.warm.{m}" for m in ("place", "stamp", "wire", "policy", "client")),
    "picobot_tui.warm",
    "picobot_tui.run",  # its __init__ is a docstring
    "picobot_tui.run.inherited",
}

PROBE = """
import json, os, sys
before = set(sys.modules)
sys.argv = ["picobot", "agent", "-m", "hi"]
import picobot_tui.entry as entry
entry._try_warm()  # no server there: it returns to run cold (CI: none is started)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_the_client_path_imports_only_the_stdlib_and_its_own_modules() -> None:
    runtime = tempfile.mkdtemp(prefix="pbr", dir="/tmp")
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": runtime, "CI": "true", "HOME": runtime}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout)
    foreign = [
        m for m in loaded if m.split(".")[0] not in sys.stdlib_module_names and m not in ALLOWED
    ]
    assert foreign == []
    assert "picobot_tui.warm.client" in loaded  # it did go down the client path
