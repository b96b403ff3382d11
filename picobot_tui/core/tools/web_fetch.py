"""web_fetch: GET an http(s) URL and return it as readable text.

SSRF guard (unless tools.web.allowPrivate): the host is resolved and *every* address must be
public; loopback, private, link-local (cloud metadata 169.254.169.254), CGNAT, multicast,
reserved and unspecified addresses are refused, IPv4-mapped IPv6 included. Redirects are
followed by hand, at most 5, and each hop is checked again. The same check runs once more
when the connection is made, against the address actually dialled, so a DNS answer that
changes between the check and the connect (rebinding) is refused too. Proxy settings from the
environment are ignored (a proxy would hide the real destination).
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

from picobot_tui.core.tools.base import Tool, ToolContext, ToolError
from picobot_tui.core.tools.hosts import host_allowed, normalize_host
from picobot_tui.core.tools.html_text import html_to_text
from picobot_tui.core.visible import has_invisible

MAX_REDIRECTS = 5
MAX_BYTES = 2_000_000
DEFAULT_MAX_CHARS = 50_000
_USER_AGENT = "picobot/0.1 (+web_fetch)"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class WebFetchTool(Tool):
    name = "web_fetch"
    description = (
        "Fetch an http:// or https:// URL and return its text (HTML is converted to plain "
        "text). Private, loopback and link-local addresses are refused unless the user "
        "allowed them. Binary content is not returned."
    )
    parameters = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "minLength": 1, "description": "An http(s) URL."},
            "max_chars": {
                "type": "integer",
                "minimum": 100,
                "maximum": 1_000_000,
                "description": "Most characters of text to return (default: the result cap).",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    }

    def approval_host(self, args: dict[str, Any]) -> str | None:
        """The host approval is asked for; None for a URL `run` refuses before connecting."""
        try:
            host, _ = check_url(args["url"])
        except ToolError:
            return None
        return normalize_host(host)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str:
        host = self.approval_host(args) or "?"
        return f"GET {args['url']}\n(host {host})"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        web = ctx.config.web
        default = max(100, min(DEFAULT_MAX_CHARS, ctx.config.tool_result_max_chars - 300))
        max_chars = int(args.get("max_chars") or default)
        first = self.approval_host(args)

        def may_follow(host: str) -> bool:
            # The approval covered one host: a redirect elsewhere (an open redirect carrying
            # the query on) needs its own call, unless nothing is asked (auto, allowHosts).
            return (
                ctx.config.approval == "auto"
                or normalize_host(host) == first
                or host_allowed(host, web.allow_hosts)
                or host_allowed(host, ctx.saved.hosts)
            )

        try:
            async with asyncio.timeout(web.timeout):
                return await _fetch(
                    args["url"], max_chars, web.allow_private, web.timeout, may_follow, ctx.scrub
                )
        except TimeoutError:
            raise ToolError(f"fetching {args['url']} timed out after {web.timeout:g} s") from None


def ip_block_reason(ip: IPAddress) -> str | None:
    """Why this address may not be fetched by default, or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for attr, why in (
        ("is_loopback", "loopback"),
        ("is_link_local", "link-local"),
        ("is_private", "private"),
        ("is_multicast", "multicast"),
        ("is_unspecified", "unspecified"),
        ("is_reserved", "reserved"),
    ):
        if getattr(ip, attr):
            return why
    if not ip.is_global:
        return "not a public address"
    return None


async def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to (an IP literal resolves to itself)."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as e:
        raise ToolError(f"cannot resolve host {host!r}: {e}") from None
    out: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in out:
            out.append(ip)
    if not out:
        raise ToolError(f"cannot resolve host {host!r}: no addresses")
    return out


async def checked_addresses(host: str, port: int, allow_private: bool) -> list[IPAddress]:
    ips = await resolve_host(host, port)
    if not allow_private:
        for ip in ips:
            why = ip_block_reason(ip)
            if why:
                what = f"{ip} is" if host.strip("[]") == str(ip) else f"{host} resolves to {ip},"
                raise ToolError(
                    f"refused: {what} a {why} address; web_fetch only fetches public "
                    "addresses (tools.web.allowPrivate is off)"
                )
    return ips


def check_url(url: str) -> tuple[str, int]:
    """(host, port) of an http(s) URL, or ToolError."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise ToolError(f"invalid URL {url!r}: {e}") from None
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"}:
        shown = f"{scheme}://" if scheme else "no scheme"
        raise ToolError(
            f"refused: {url!r} has {shown}; web_fetch only fetches http:// and https:// URLs"
        )
    host = parts.hostname
    if not host:
        raise ToolError(f"invalid URL {url!r}: it has no host")
    if has_invisible(host) or any(c.isspace() for c in host):
        # Such a host is never a real one, and would be shown oddly in an approval prompt.
        raise ToolError(f"invalid URL {url!r}: its host has control or invisible characters")
    if parts.username or parts.password:
        raise ToolError(f"refused: {url!r} carries credentials in the URL")
    return host, port or (443 if scheme == "https" else 80)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """Built once: loading the CA bundle costs ~50 ms per client otherwise."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


async def _fetch(
    url: str,
    max_chars: int,
    allow_private: bool,
    timeout: float,
    may_follow: Callable[[str], bool] = lambda host: True,
    scrub: Callable[[str], str] | None = None,
) -> str:
    check_url(url)  # refuse bad schemes before loading httpx
    import httpx

    from picobot_tui.core.tools.net_guard import guard_transport

    transport = httpx.AsyncHTTPTransport(retries=0, verify=_ssl_context())
    guard_transport(transport, lambda host, port: checked_addresses(host, port, allow_private))
    async with httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(timeout),
        headers={
            "User-Agent": _USER_AGENT,
            "Accept": "text/html,text/*,application/json;q=0.9,*/*;q=0.5",
        },
    ) as client:
        current = url
        for hop in range(MAX_REDIRECTS + 1):
            try:
                host, port = check_url(current)
                await checked_addresses(host, port, allow_private)
                if hop and not may_follow(host):
                    raise ToolError(
                        f"it is on another host ({normalize_host(host)}), which this call was "
                        "not approved for; call web_fetch with that URL to ask for it"
                    )
            except ToolError as e:
                if hop:
                    raise ToolError(f"redirect to {current} refused: {e}") from None
                raise
            try:
                async with client.stream("GET", current) as resp:
                    if resp.is_redirect:
                        location = resp.headers.get("location", "")
                        if not location:
                            raise ToolError(
                                f"{current} answered {resp.status_code} without a Location"
                            )
                        current = urljoin(current, location)
                        continue
                    body, complete = await _read_capped(resp)
                    return _render(current, resp, body, complete, max_chars, hop, scrub)
            except httpx.HTTPError as e:
                raise ToolError(f"fetching {current} failed: {type(e).__name__}: {e}") from None
        raise ToolError(f"too many redirects (more than {MAX_REDIRECTS}); last was to {current}")


async def _read_capped(resp: Any) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_BYTES:
            return b"".join(chunks)[:MAX_BYTES], False
    return b"".join(chunks), True


def _render(
    url: str,
    resp: Any,
    body: bytes,
    complete: bool,
    max_chars: int,
    hops: int,
    scrub: Callable[[str], str] | None = None,
) -> str:
    ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
    textual = (
        not ctype
        or ctype.startswith("text/")
        or ctype.endswith(("+xml", "+json", "/json", "/xml", "/javascript"))
    )
    if not textual or b"\x00" in body[:8192]:
        raise ToolError(
            f"{url} returned {ctype or 'binary'} content ({len(body)} bytes); web_fetch only returns text"
        )
    text = body.decode(resp.encoding or "utf-8", errors="replace")
    if ctype in {"text/html", "application/xhtml+xml"} or (
        not ctype and "<html" in text[:1000].lower()
    ):
        text = html_to_text(text)
    if scrub is not None:  # mask before the max_chars cut: no key kept in pieces
        margin = getattr(scrub, "longest", 0)
        if not complete and margin:  # the byte cap cut it too: drop what may be a key's start
            text = text[:-margin]
        text = scrub(text)
    total = len(text)
    if total > max_chars:
        text = f"{text[:max_chars]}\n… [cut at {max_chars} of {total} chars; pass max_chars to get more]"
    elif not complete:
        text += f"\n… [download stopped at {MAX_BYTES} bytes]"
    head = (
        f"URL: {url}\nStatus: {resp.status_code} {resp.reason_phrase}\nContent-Type: {ctype or '?'}"
    )
    if hops:
        head += f"\n(after {hops} redirect{'s' if hops > 1 else ''})"
    if resp.status_code >= 400:
        raise ToolError(f"{head}\n\n{text}")
    return f"{head}\n\n{text}"
