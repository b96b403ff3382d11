"""The words of a failed model call: library internals out, the URL and the cause in.

LiteLLM's texts carry what only its own developers can use: `litellm.InternalServerError:`
prefixes, `AnthropicException - `, aiohttp's `ssl:<ssl.SSLContext object at 0x7f…>` and
"Handle with `litellm.InternalServerError`". `clean()` takes them out of any text shown to
the user. `connection_cause()` reads the cause chain of a failed connection (refused, no
such host, TLS, reset) and says it with the URL that was tried: "nothing listening on
http://127.0.0.1:8000/v1".

No LiteLLM import: the chain's exceptions are the standard library's (OSError, ssl) or
named by their words.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import ssl
from collections.abc import Iterable
from urllib.parse import urlsplit

_REPR = re.compile(r"\s*(?:ssl:)?<[^<>]*\bobject at 0x[0-9a-fA-F]+>")
_HANDLE = re.compile(r"\s*Handle with `?litellm\.[A-Za-z_.]+`?\.?")
_LIB_PREFIX = re.compile(
    r"\b(?:litellm\.)?(?:[A-Z][A-Za-z]*)?(?:Error|Exception|Timeout)\s*(?::|- )\s*"
)
_LITELLM_NAME = re.compile(r"`?\blitellm\.[A-Za-z_][A-Za-z0-9_.]*`?")
_DEBUG_TIP = re.compile(r"\s*If you need to debug this error.*$", re.IGNORECASE)


def clean(text: str) -> str:
    """`text` without library class names, object reprs and LiteLLM's "Handle with" tips."""
    text = _DEBUG_TIP.sub("", text)
    text = _HANDLE.sub("", text)
    text = _REPR.sub("", text)
    previous = None
    while previous != text:
        previous = text
        text = _LIB_PREFIX.sub("", text)
    text = _LITELLM_NAME.sub("LiteLLM", text)
    return " ".join(text.split()).strip(" .")


def is_loopback(url: str | None) -> bool:
    """The URL's host is this machine (127.0.0.0/8, ::1, localhost)."""
    host = urlsplit(url or "").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def request_url(chain: Iterable[BaseException]) -> str | None:
    """The URL an httpx/openai error in the chain was sending to, without its query."""
    for exc in chain:
        request = getattr(exc, "_request", None) or getattr(exc, "request", None)
        url = getattr(request, "url", None)
        if url is not None:
            parts = urlsplit(str(url))
            if parts.scheme and parts.netloc:
                return f"{parts.scheme}://{parts.netloc}{parts.path}"
    return None


_REFUSED = ("connection refused", "connect call failed", "errno 111", "actively refused")
_NO_HOST = (
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "getaddrinfo failed",
    "no address associated",
)
_TLS = ("certificate verify failed", "ssl:", "tls", "wrong version number")
_RESET = ("connection reset", "errno 104", "server disconnected", "remote end closed")


def connection_failure(chain: list[BaseException]) -> str:
    """What went wrong with the connection: `refused`, `no_host`, `tls`, `reset` or ``."""
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "refused"
    if any(isinstance(e, socket.gaierror) for e in chain):
        return "no_host"
    if any(isinstance(e, ssl.SSLError | ssl.CertificateError) for e in chain):
        return "tls"
    if any(isinstance(e, ConnectionResetError) for e in chain):
        return "reset"
    text = " ".join(str(e) for e in chain).lower()
    for words, kind in ((_REFUSED, "refused"), (_NO_HOST, "no_host"), (_RESET, "reset")):
        if any(w in text for w in words):
            return kind
    # aiohttp's "Cannot connect to host … ssl:<…>" names ssl for every plain failure too:
    # TLS only when the words say a handshake went wrong.
    if any(w in text for w in _TLS[:1] + _TLS[3:]):
        return "tls"
    return ""


def _tls_reason(chain: list[BaseException]) -> str:
    for exc in chain:
        reason = getattr(exc, "verify_message", None) or getattr(exc, "reason", None)
        if isinstance(exc, ssl.SSLError) and reason:
            return str(reason).lower().replace("_", " ")
    return "the TLS handshake failed"


def connection_cause(chain: list[BaseException], url: str | None) -> tuple[str, str] | None:
    """(the one-line cause naming `url`, the failure's kind), or None when the chain does
    not say what went wrong."""
    failure = connection_failure(chain)
    where = url or "the provider"
    host = urlsplit(url or "").hostname
    if failure == "refused":
        return f"nothing listening on {where} (connection refused)", failure
    if failure == "no_host":
        return f"cannot resolve the host {host or where} (no such host, or no DNS)", failure
    if failure == "tls":
        return f"TLS with {where} failed: {_tls_reason(chain)}", failure
    if failure == "reset":
        return f"{where} closed the connection before answering", failure
    if url:
        return f"could not connect to {url}", failure
    return None


def connection_hint(failure: str, url: str | None, setting: str) -> str:
    """The hint for a failed connection: what to do, never the cause again."""
    if failure == "refused" and is_loopback(url):
        return f"Start the server, or point {setting} at the address it listens on."
    if failure == "refused":
        return f"Check that the server is up and {setting} is its address."
    if failure == "no_host":
        return f"Check the host name in {setting} and the network."
    if failure == "tls":
        return (
            "If a proxy or a private CA signs the certificate, point SSL_CERT_FILE at its bundle."
        )
    if failure == "reset":
        return f"If it keeps happening, check {setting} and the server's own log."
    if not url:
        return "Check the network (and HTTPS_PROXY, if you use a proxy)."
    return f"Check {setting} and the network (and HTTPS_PROXY, if you use a proxy)."
