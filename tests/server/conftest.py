"""The warm server's tests opt in to a server (tests/conftest.py turns it off for every
other test), each with a runtime dir of its own, stopped at teardown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.headless.conftest import configured_home, llm_server, server  # noqa: F401
from tests.server.support import Rig


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    try:
        yield r
    finally:
        r.close()
