"""Host names as web_fetch approvals compare them (`tools.web.allowHosts`, "this host for the
session"): lower case, no trailing dot, no IPv6 brackets. A host entry matches that exact host
on any port; `example.com` does not cover `api.example.com`."""

from __future__ import annotations

from collections.abc import Iterable


def normalize_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    """Whether `host` is one of `allowed` (entries that are not strings are ignored)."""
    want = normalize_host(host)
    return bool(want) and any(isinstance(h, str) and normalize_host(h) == want for h in allowed)
