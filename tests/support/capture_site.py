"""A tiny HTTP site on 127.0.0.1 that records every request path: the target of the
exfiltration attempts (web_fetch `.../?d=<data>`). `/redir?to=URL` answers a 302 to URL."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.requests.append(self.path)  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        if url.path == "/redir":
            self.send_response(302)
            self.send_header("Location", parse_qs(url.query)["to"][0])
            self.end_headers()
            return
        body = b"fetched"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class CaptureSite:
    """`with CaptureSite() as site:` — `site.url`, `site.port`, `site.requests` (paths)."""

    def __init__(self) -> None:
        self._srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._srv.requests = []  # type: ignore[attr-defined]
        self.port: int = self._srv.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[str]:
        return self._srv.requests  # type: ignore[attr-defined,no-any-return]

    def __enter__(self) -> CaptureSite:
        threading.Thread(target=self._srv.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._srv.shutdown()
        self._srv.server_close()
