"""Write requirements/test.lock: every package of the test environment (pyproject's
dependencies and the `test` extra), pinned, with the hashes of every file PyPI has for it.
`app` writes requirements/app.lock: pyproject's dependencies only, what the GitHub action
(action.yml) installs. `proxy` instead writes requirements/proxy.lock from requirements/proxy.in: the real LiteLLM
Proxy, which .ci/run installs into its own venv (tests/proxy/.venv) for
tests/support/litellm_proxy.py, apart from the test environment.

Run: pip install uv && python scripts/lock.py [proxy]
CI installs from the lock (README, "Set-up"), so a new release of a dependency changes
CI only when this is run again and the change is committed. pyproject keeps the ranges
users install with; tests/test_dependencies.py checks that the lock stays inside them.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = "python scripts/lock.py"
LOCKS = {
    "test": (["pyproject.toml", "--extra", "test"], "requirements/test.lock"),
    "proxy": (["requirements/proxy.in"], "requirements/proxy.lock"),
    # Pinned to the versions the suite runs with: test.lock as constraints.
    "app": (["pyproject.toml", "-c", "requirements/test.lock"], "requirements/app.lock"),
}


def main() -> int:
    args = sys.argv[1:]
    which = args.pop(0) if args and args[0] in LOCKS else "test"
    sources, output = LOCKS[which]
    argv = [
        sys.executable, "-m", "uv", "pip", "compile", *sources,
        "--generate-hashes",
        "--universal",  # markers kept, so one lock serves every platform
        "--python-version", "3.11",  # the oldest Python picobot supports
        "--custom-compile-command", COMMAND if which == "test" else f"{COMMAND} {which}",
        "--output-file", output,
        *args,  # e.g. --upgrade-package litellm
    ]  # fmt: skip
    if importlib.util.find_spec("uv") is None:
        print("scripts/lock.py needs uv: pip install uv", file=sys.stderr)
        return 1
    return subprocess.run(argv, cwd=ROOT).returncode


if __name__ == "__main__":
    raise SystemExit(main())
