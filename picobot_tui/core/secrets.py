"""Keeps API keys out of everything picobot writes (sessions, traces, logs, errors)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

MASK = "[REDACTED]"
_ENV_KEY_RE = re.compile(r"(API_KEY|_TOKEN|_SECRET)$")


class Scrubber:
    """Replaces known secret strings with a mask."""

    def __init__(self, secrets: Iterable[str] = (), *, include_env: bool = True) -> None:
        found = {s for s in secrets if s and len(s) >= 8}
        if include_env:
            found |= {
                v for k, v in os.environ.items() if _ENV_KEY_RE.search(k) and v and len(v) >= 8
            }
        # Longest first so a key that contains another is masked whole.
        self._secrets = sorted(found, key=len, reverse=True)

    def add(self, secret: str) -> None:
        if secret and len(secret) >= 8 and secret not in self._secrets:
            self._secrets.append(secret)
            self._secrets.sort(key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for s in self._secrets:
            if s in text:
                text = text.replace(s, MASK)
        return text

    def scrub_obj(self, value: object) -> object:
        """Scrub every string inside a JSON-like structure."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.scrub_obj(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub_obj(v) for v in value]
        return value
