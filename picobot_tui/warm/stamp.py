"""What the server imported, as one short string compared at every connect.

Rails' Spring watched files and still served old code; here nothing is watched: the
client computes the stamp afresh and refuses a server whose stamp differs. It covers
picobot's version, every installed file of picobot (path, mtime, size), the interpreter,
and the name (so the version) of every distribution installed beside it. Measured with
the editable install here: ~2 ms for ~300 files and ~170 dist-info folders.
Stdlib only: the client imports this.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Mapping
from types import ModuleType

_SUBPACKAGES = ("picobot_tui.widgets", "picobot_tui.styles")
"""Mapped in from the top level by setuptools' package-dir (an editable install leaves
them in the checkout, outside picobot_tui/)."""


def package() -> ModuleType:
    """The `picobot_tui` package (imported before this module, its parent). Looked up, not
    imported by name: its lazy `Agent` attribute makes a plain import count as one of
    `picobot_tui.api`, a peer this layer may not import (import-linter)."""
    return sys.modules[__name__.split(".", 1)[0]]


def interpreter() -> tuple[str, str]:
    """This interpreter, however it was spelled: `bin/python` and `bin/python3.11` are one
    file (pip writes a console script's shebang as python3.11 while pytest may run as
    python: keyed on the spelling, the two never found each other's server). The prefix
    keeps two virtualenvs over one base interpreter apart."""
    return sys.prefix, os.path.realpath(sys.executable)


def package_roots() -> list[str]:
    """The folders holding picobot's installed files."""
    roots = [os.path.dirname(os.path.abspath(str(package().__file__)))]
    from importlib.util import find_spec

    for name in _SUBPACKAGES:
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for loc in (spec.submodule_search_locations or []) if spec else []:
            loc = os.path.abspath(loc)
            if not any(loc == r or loc.startswith(r + os.sep) for r in roots):
                roots.append(loc)
    return roots


def _files(root: str, out: list[tuple[str, int, int]]) -> None:
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        if entry.name == "__pycache__":
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                _files(entry.path, out)
            elif entry.name.endswith((".py", ".tcss", ".md")):
                st = entry.stat()
                out.append((entry.path, st.st_mtime_ns, st.st_size))
        except OSError:
            continue


def _dists() -> list[str]:
    names: list[str] = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        try:
            names.extend(
                n for n in os.listdir(entry) if n.endswith((".dist-info", ".egg-info", ".pth"))
            )
        except OSError:
            continue
    return sorted(names)


def compute() -> str:
    """The stamp of what this interpreter would import now."""
    version = package().__version__
    files: list[tuple[str, int, int]] = []
    for root in package_roots():
        _files(root, files)
    parts = repr((version, interpreter(), sys.version, sorted(files), _dists()))
    return f"{version}:{zlib.crc32(parts.encode()):08x}:{len(files)}"


IMPORT_DEFAULTS = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
"""Set by picobot before it imports LiteLLM when the caller has not (core/llm/client.py)."""


def env_digest(names: list[str], environ: Mapping[str, str]) -> str:
    """The values (or absence) of the variables `names` as the imports would see them
    (picobot's own defaults applied), in one short string."""
    env = {**IMPORT_DEFAULTS, **environ}
    text = repr(sorted((n, env.get(n)) for n in names))
    return f"{zlib.crc32(text.encode()):08x}"
