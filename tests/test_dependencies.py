"""What pyproject lets an install take: releases known to be malicious are excluded, and the
environment the suite runs in holds none of them."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent

# Published with malicious code, then withdrawn (RELIABILITY.md, "Dependencies").
COMPROMISED = {"litellm": ("1.82.7", "1.82.8")}


def _requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra]
    return {r.name: r for r in reqs}


def test_compromised_releases_are_excluded_by_pyproject() -> None:
    reqs = _requirements()
    for name, bad in COMPROMISED.items():
        for release in bad:
            assert release not in reqs[name].specifier, f"{name} {reqs[name].specifier}"
        # The exclusion is not bought by shutting out the releases around them.
        assert "1.110.2" in reqs[name].specifier


def test_no_compromised_release_is_installed() -> None:
    for name, bad in COMPROMISED.items():
        assert version(name) not in bad
