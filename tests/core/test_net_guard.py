"""The web_fetch address guard reaches into httpx internals: these fail loudly if they move."""

from __future__ import annotations

import asyncio
import ipaddress

import httpx
import pytest

from picobot_tui.core.tools.base import ToolError
from picobot_tui.core.tools.net_guard import GuardedBackend, guard_transport


async def _refuse(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    raise ToolError(f"refused: {host}")


def test_guard_is_installed_on_the_real_httpx_transport() -> None:
    transport = httpx.AsyncHTTPTransport(retries=0)
    guard_transport(transport, _refuse)
    assert isinstance(transport._pool._network_backend, GuardedBackend)


def test_guarded_transport_refuses_at_connect_time() -> None:
    async def go() -> None:
        transport = httpx.AsyncHTTPTransport(retries=0)
        guard_transport(transport, _refuse)
        async with httpx.AsyncClient(transport=transport) as client:
            await client.get("http://example.invalid/")

    with pytest.raises(ToolError, match="refused: example.invalid"):
        asyncio.run(go())


def test_guard_fails_closed_when_internals_are_missing() -> None:
    transport = httpx.AsyncHTTPTransport(retries=0)
    del transport._pool
    with pytest.raises(RuntimeError, match="internals changed"):
        guard_transport(transport, _refuse)
