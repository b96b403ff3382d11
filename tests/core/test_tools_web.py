"""web_fetch: schemes, the SSRF guard, redirects re-checked hop by hop, text conversion.

Only a local http.server on 127.0.0.1 is ever contacted; with allowPrivate off the guard must
refuse it, and the server's request log proves nothing was sent.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from picobot_tui.core.settings import ToolsConfig, WebConfig
from picobot_tui.core.tools import web_fetch
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.html_text import html_to_text
from picobot_tui.core.tools.registry import ToolRegistry, default_registry

PAGE = b"""<!doctype html><html><head><title>Test  Page</title>
<style>body { color: red }</style><script>var secret = "SCRIPT-TEXT";</script></head>
<body><h1>Hello</h1><p>First&nbsp;paragraph &amp; more.</p><ul><li>one</li><li>two</li></ul>
<noscript>NOSCRIPT-TEXT</noscript></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.server.requests.append(self.path)  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        q = parse_qs(url.query)
        if url.path == "/redir":
            self.send_response(302)
            self.send_header("Location", q["to"][0])
            self.end_headers()
        elif url.path == "/loop":
            n = int(q.get("n", ["0"])[0])
            self.send_response(301)
            self.send_header("Location", f"/loop?n={n + 1}")
            self.end_headers()
        elif url.path == "/big":
            body = ("word " * 20000).encode()
            self._send(200, "text/plain; charset=utf-8", body)
        elif url.path == "/img":
            self._send(200, "image/png", b"\x89PNG\r\n\x1a\n\x00\x00")
        elif url.path == "/missing":
            self._send(404, "text/plain", b"no such page")
        elif url.path == "/json":
            self._send(200, "application/json", b'{"a": 1}')
        else:
            self._send(200, "text/html; charset=utf-8", PAGE)

    def _send(self, code: int, ctype: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def base(srv: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}"


def make(tmp_path: Path, allow_private: bool) -> ToolRegistry:
    cfg = ToolsConfig(web=WebConfig(allow_private=allow_private, timeout=10))
    return default_registry(ToolContext(tmp_path, cfg))


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "ftp://127.0.0.1/x",
        "gopher://127.0.0.1:70/",
        "javascript:alert(1)",
        "data:text/plain,hi",
        "//127.0.0.1/no-scheme",
        "127.0.0.1/no-scheme",
    ],
)
async def test_non_http_schemes_refused(tmp_path, url):
    r = await make(tmp_path, allow_private=True).execute("web_fetch", {"url": url})
    assert not r.ok
    assert "only fetches http:// and https://" in r.content


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("localhost", "loopback"),
        ("[::1]", "loopback"),
        ("[::ffff:127.0.0.1]", "loopback"),
        ("2130706433", "loopback"),  # 127.0.0.1 as one decimal number
        ("169.254.169.254", "link-local"),
        ("[fe80::1]", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("[fd00::1]", "private"),
        ("0.0.0.0", "private"),
        ("100.64.0.1", "not a public address"),
        ("224.0.0.1", "multicast"),
    ],
)
async def test_private_addresses_refused_by_default(tmp_path, server, host, kind):
    port = server.server_address[1]
    r = await make(tmp_path, allow_private=False).execute(
        "web_fetch", {"url": f"http://{host}:{port}/"}
    )
    assert not r.ok
    assert "refused" in r.content and kind in r.content
    assert "allowPrivate is off" in r.content
    assert server.requests == []


async def test_allow_private_fetches_and_converts_html(tmp_path, server):
    r = await make(tmp_path, allow_private=True).execute("web_fetch", {"url": base(server) + "/"})
    assert r.ok, r.content
    assert "Status: 200" in r.content
    assert "# Test Page" in r.content
    assert "# Hello" in r.content
    assert "First paragraph & more." in r.content
    assert "- one\n- two" in r.content
    for hidden in ("SCRIPT-TEXT", "NOSCRIPT-TEXT", "color: red", "<p>"):
        assert hidden not in r.content


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("file:///etc/passwd", "only fetches http"),
        ("ftp://127.0.0.1/x", "only fetches http"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://[::1]/", "loopback"),
    ],
)
async def test_redirect_is_rechecked(tmp_path, server, monkeypatch, target, message):
    # Let exactly the test server's address through, as if it were public; every other
    # private address stays refused. A redirect there must be caught at the next hop.
    real = web_fetch.ip_block_reason
    monkeypatch.setattr(
        web_fetch,
        "ip_block_reason",
        lambda ip: None if ip == ipaddress.ip_address("127.0.0.1") else real(ip),
    )
    r = await make(tmp_path, allow_private=False).execute(
        "web_fetch", {"url": f"{base(server)}/redir?to={target}"}
    )
    assert not r.ok
    assert "redirect to" in r.content and "refused" in r.content
    assert message in r.content
    assert len(server.requests) == 1  # only the first hop reached a server


async def test_redirect_to_disallowed_scheme_with_private_allowed(tmp_path, server):
    r = await make(tmp_path, allow_private=True).execute(
        "web_fetch", {"url": f"{base(server)}/redir?to=file:///etc/passwd"}
    )
    assert not r.ok
    assert "redirect to file:///etc/passwd refused" in r.content
    assert "root:" not in r.content


async def test_redirects_followed_up_to_five(tmp_path, server):
    r = await make(tmp_path, allow_private=True).execute(
        "web_fetch", {"url": f"{base(server)}/redir?to=/json"}
    )
    assert r.ok, r.content
    assert '{"a": 1}' in r.content and "after 1 redirect" in r.content
    r = await make(tmp_path, allow_private=True).execute(
        "web_fetch", {"url": f"{base(server)}/loop"}
    )
    assert not r.ok
    assert "too many redirects (more than 5)" in r.content
    assert len([p for p in server.requests if p.startswith("/loop")]) == 6


async def test_connect_time_guard_catches_what_the_precheck_missed(tmp_path, server, monkeypatch):
    # Simulate DNS rebinding: the pre-check saw a public address, the connection dials loopback.
    original = web_fetch.checked_addresses
    calls = []

    async def rebinding(host, port, allow_private):
        calls.append(host)
        if len(calls) == 1:
            return [ipaddress.ip_address("93.184.216.34")]
        return await original(host, port, allow_private)

    monkeypatch.setattr(web_fetch, "checked_addresses", rebinding)
    r = await make(tmp_path, allow_private=False).execute("web_fetch", {"url": base(server) + "/"})
    assert not r.ok
    assert "loopback" in r.content
    assert len(calls) == 2
    assert server.requests == []


async def test_max_chars_caps_the_text(tmp_path, server):
    r = await make(tmp_path, allow_private=True).execute(
        "web_fetch", {"url": base(server) + "/big", "max_chars": 300}
    )
    assert r.ok
    assert "cut at 300 of 100000 chars" in r.content


async def test_binary_content_not_returned(tmp_path, server):
    r = await make(tmp_path, allow_private=True).execute(
        "web_fetch", {"url": base(server) + "/img"}
    )
    assert not r.ok and "image/png" in r.content and "only returns text" in r.content


async def test_http_error_status_is_an_error_with_body(tmp_path, server):
    r = await make(tmp_path, allow_private=True).execute(
        "web_fetch", {"url": base(server) + "/missing"}
    )
    assert not r.ok
    assert "Status: 404" in r.content and "no such page" in r.content


async def test_connection_refused_is_a_clear_error(tmp_path, server):
    port = server.server_address[1]
    server.shutdown()
    server.server_close()
    r = await make(tmp_path, allow_private=True).execute(
        "web_fetch", {"url": f"http://127.0.0.1:{port}/"}
    )
    assert not r.ok and "failed" in r.content


@pytest.mark.parametrize(
    "url", ["http://user:pw@127.0.0.1/", "http:///nohost", "http://127.0.0.1:99999/"]
)
async def test_malformed_or_credentialed_urls(tmp_path, url):
    r = await make(tmp_path, allow_private=True).execute("web_fetch", {"url": url})
    assert not r.ok
    assert r.content.startswith("Error:")


def test_html_to_text_is_robust():
    assert html_to_text("<p>unclosed <b>bold") == "unclosed bold"
    assert html_to_text("") == ""
    assert "x" in html_to_text("<pre>  x\n  y</pre>")
