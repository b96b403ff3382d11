"""The one place that reaches into httpx/httpcore internals: a connect-time address guard.

httpx's transport takes no ``network_backend=`` argument (httpx 0.28), but httpcore's
connection pool dials through one. We swap the pool's backend for one that re-checks
every dialled address, so DNS rebinding cannot slip past web_fetch's pre-check.
If httpx ever stops holding a ``httpcore.AsyncConnectionPool`` with that attribute,
``guard_transport`` raises instead of fetching unguarded (tests/core/test_net_guard.py).
"""

from __future__ import annotations

import ipaddress
import typing
from collections.abc import Awaitable, Callable, Iterable

import httpcore

from picobot_tui.core.tools.base import ToolError

if typing.TYPE_CHECKING:
    import httpx  # importing httpx loads rich (its CLI): the core stays free of it

Resolver = Callable[[str, int], Awaitable[list[ipaddress.IPv4Address | ipaddress.IPv6Address]]]
SocketOptions = Iterable[httpcore.SOCKET_OPTION] | None


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Dial only the addresses ``resolve`` returns (it raises for refused hosts)."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend, resolve: Resolver) -> None:
        self._inner = inner
        self._resolve = resolve

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: SocketOptions = None,
    ) -> httpcore.AsyncNetworkStream:
        ips = await self._resolve(host, port)
        last: Exception | None = None
        for ip in ips:
            try:
                return await self._inner.connect_tcp(
                    str(ip), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as e:
                last = e
        if last is None:
            raise httpcore.ConnectError(f"no address to dial for {host}")
        raise last

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: SocketOptions = None
    ) -> httpcore.AsyncNetworkStream:
        raise ToolError("refused: unix sockets are not fetched")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def guard_transport(transport: httpx.AsyncHTTPTransport, resolve: Resolver) -> None:
    """Make ``transport`` dial through ``GuardedBackend``; raise if httpx's internals moved."""
    pool = getattr(transport, "_pool", None)
    inner = getattr(pool, "_network_backend", None)
    if not isinstance(pool, httpcore.AsyncConnectionPool) or not isinstance(
        inner, httpcore.AsyncNetworkBackend
    ):
        # Fail closed: fetching without the connect-time check would reopen DNS rebinding.
        raise RuntimeError(
            "httpx/httpcore internals changed: cannot install the web_fetch address guard"
        )
    typing.cast(typing.Any, pool)._network_backend = GuardedBackend(inner, resolve)
