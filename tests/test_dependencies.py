"""What pyproject lets an install take: releases known to be malicious are excluded, and the
environment the suite runs in holds none of them."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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


# -- the lock (requirements/test.lock, written by scripts/lock.py) -----------------------------

LOCK = ROOT / "requirements" / "test.lock"


def _locked(lock: Path = LOCK) -> dict[str, str]:
    """name -> version of every package pinned in a lock (names normalised)."""
    out = {}
    for line in lock.read_text().splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            req = Requirement(line.rstrip(" \\"))
            [spec] = req.specifier
            assert spec.operator == "==", line
            out[canonicalize_name(req.name)] = spec.version
    return out


def test_the_lock_satisfies_pyprojects_ranges() -> None:
    """Every requirement of the test environment is pinned, inside its range, with hashes;
    else CI would install something pyproject does not allow (or nothing at all)."""
    locked = _locked()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [
        Requirement(r)
        for r in (*project["dependencies"], *project["optional-dependencies"]["test"])
    ]
    for req in wanted:
        if req.marker is not None and not req.marker.evaluate():
            continue
        name = canonicalize_name(req.name)
        assert name in locked, f"{req} is not in {LOCK.name}: run `python scripts/lock.py`"
        assert locked[name] in req.specifier, (
            f"{LOCK.name} pins {name}=={locked[name]}, outside pyproject's {req}: "
            "run `python scripts/lock.py`"
        )
    for bad_name, bad in COMPROMISED.items():
        assert locked[bad_name] not in bad
    text = LOCK.read_text()
    blocks = [b for b in text.split("\n") if b and not b[0].isspace() and not b.startswith("#")]
    assert all(b.endswith("\\") for b in blocks), "a pin without hashes"
    assert "python scripts/lock.py" in text.splitlines()[1]  # how to refresh it


def test_ci_installs_from_the_lock() -> None:
    """The README's test command (which .ci/run runs) installs the lock, not the ranges."""
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = (
        "pip install -r requirements/test.lock && pip install --no-deps -e . && python -m pytest"
    )
    assert command in readme and command in ci


def test_the_app_lock_pins_the_tested_versions() -> None:
    """requirements/app.lock (what action.yml installs: pyproject's dependencies only) pins
    each package at the version the suite runs with, with hashes."""
    app_lock = ROOT / "requirements" / "app.lock"
    app, tested = _locked(app_lock), _locked()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for r in project["dependencies"]:
        req = Requirement(r)
        if req.marker is None or req.marker.evaluate():
            assert canonicalize_name(req.name) in app, f"{req} is not in app.lock"
    assert app and all(tested.get(name) == version for name, version in app.items()), (
        "app.lock and test.lock disagree: run `python scripts/lock.py app`"
    )
    text = app_lock.read_text()
    blocks = [b for b in text.split("\n") if b and not b[0].isspace() and not b.startswith("#")]
    assert all(b.endswith("\\") for b in blocks), "a pin without hashes"


# -- the real LiteLLM Proxy's lock (requirements/proxy.lock, `python scripts/lock.py proxy`) --

PROXY_LOCK = ROOT / "requirements" / "proxy.lock"


def test_the_proxy_lock_is_hashed_and_holds_the_tested_litellm() -> None:
    """The proxy the tests put in front runs the litellm the suite tests, never a
    compromised one, and installs only files whose hashes the lock names."""
    proxy = _locked(PROXY_LOCK)
    assert proxy["litellm"] == _locked()["litellm"]
    for bad_name, bad in COMPROMISED.items():
        assert proxy.get(bad_name) not in bad
    text = PROXY_LOCK.read_text()
    blocks = [b for b in text.split("\n") if b and not b[0].isspace() and not b.startswith("#")]
    assert all(b.endswith("\\") for b in blocks), "a pin without hashes"
    assert "python scripts/lock.py proxy" in text.splitlines()[1]


def test_ci_installs_the_proxy_into_its_own_venv() -> None:
    """Its ~100 packages would change the tested versions: .ci/run puts them in
    tests/proxy/.venv (where tests/support/litellm_proxy.py looks), never the test env."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "proxy_venv=tests/proxy/.venv" in ci
    assert '"$proxy_venv/bin/pip" install -q --no-deps --no-compile' in ci
    assert "-r requirements/proxy.lock >/dev/null" in ci
    pips = [line for line in ci.splitlines() if "pip" in line and "install" in line]
    assert sum('"$proxy_venv/bin/pip"' in line for line in pips) == 1
    assert all("proxy" not in line for line in pips if '"$proxy_venv/bin/pip"' not in line)
    assert "proxy.lock" not in (ROOT / "README.md").read_text()
