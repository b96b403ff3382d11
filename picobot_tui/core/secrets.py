"""Keeps API keys out of everything picobot writes or sends (sessions, traces, logs, errors,
the system prompt, tool arguments).

A secret is matched in the spellings a careless or hostile prompt would cheaply produce:
as is, percent-encoded (`quote`, `quote_plus`, upper- and lower-case escapes), as hex, and
in base64 (standard and URL-safe alphabets) at each of the three byte alignments it can
have inside a longer base64 text. `found()` also percent-decodes the text (up to three
times) before looking, which catches a URL that encodes every character. Reversed,
split, XOR-ed or otherwise re-encoded keys are not caught: that is what approvals and the
exec environment without keys are for.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable, Iterator
from urllib.parse import quote, quote_plus, unquote_plus

MASK = "[REDACTED]"
MIN_SECRET_CHARS = 8
"""Shorter values are not treated as secrets: masking them would garble ordinary text."""

# Credential-like environment variable names (OPENAI_API_KEY, GITHUB_TOKEN,
# AWS_SECRET_ACCESS_KEY, DB_PASSWORD, ...).
_ENV_KEY_RE = re.compile(
    r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL", re.IGNORECASE
)
_DECODE_ROUNDS = 3
_PCT_RE = re.compile(r"%[0-9A-F]{2}")


def env_secrets(environ: dict[str, str] | None = None) -> set[str]:
    """Values of credential-like variables. Absolute paths are left out: a variable such as
    GOOGLE_APPLICATION_CREDENTIALS names a file, and masking a path would only confuse."""
    env = os.environ if environ is None else environ
    return {
        v
        for k, v in env.items()
        if _ENV_KEY_RE.search(k) and len(v) >= MIN_SECRET_CHARS and not os.path.isabs(v)
    }


def _base64_fragments(data: bytes) -> Iterator[str]:
    """The part of base64(prefix + data + suffix) that depends on `data` alone, for each
    of the 3 lengths the prefix can have modulo 3, in both alphabets."""
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + data).decode("ascii")
        start = 4 if lead else 0  # the first quantum mixes in prefix bytes
        end = len(encoded) - 4 if (lead + len(data)) % 3 else len(encoded)
        fragment = encoded[start:end]
        for text in (fragment, fragment.replace("+", "-").replace("/", "_")):
            if len(text) >= MIN_SECRET_CHARS:
                yield text


def spellings(secret: str) -> set[str]:
    """Every form of `secret` the scrubber masks (including the secret itself)."""
    data = secret.encode("utf-8")
    hexed = binascii.hexlify(data).decode("ascii")
    forms = {secret, quote(secret, safe=""), quote_plus(secret), hexed, hexed.upper()}
    forms |= {_PCT_RE.sub(lambda m: m.group().lower(), f) for f in list(forms)}
    forms |= {"".join(f"%{b:02X}" for b in data), "".join(f"%{b:02x}" for b in data)}
    forms |= set(_base64_fragments(data))
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


class Scrubber:
    """Replaces known secret strings (in every spelling of `spellings`) with a mask."""

    def __init__(self, secrets: Iterable[str] = (), *, include_env: bool = True) -> None:
        self._secrets: set[str] = {s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}
        if include_env:
            self._secrets |= env_secrets()
        self._compile()

    def _compile(self) -> None:
        forms = set().union(*(spellings(s) for s in self._secrets)) if self._secrets else set()
        # Longest first so a key that contains another is masked whole.
        ordered = sorted(forms, key=lambda f: (-len(f), f))
        self._re = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._forms = tuple(ordered)
        self.longest = len(ordered[0]) if ordered else 0
        """Length of the longest spelling: how far a match can reach past a cut point."""

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset(self._secrets)

    def add(self, secret: str) -> None:
        if secret and len(secret) >= MIN_SECRET_CHARS and secret not in self._secrets:
            self._secrets.add(secret)
            self._compile()

    def __call__(self, text: str) -> str:
        # Plain substring tests first: ~8x faster than the regex on text with no secret,
        # which is nearly every session line and log record.
        if self._re is None or not text or not any(f in text for f in self._forms):
            return text
        return self._re.sub(MASK, text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every match `__call__` would mask, in order."""
        if self._re is None:
            return []
        return [m.span() for m in self._re.finditer(text)]

    def found(self, text: str) -> bool:
        """True when `text` carries a secret, also once percent-decoded."""
        if self._re is None:
            return False
        return any(self._re.search(t) for t in _decodings(text))

    def deep(self, text: str) -> str:
        """`text` with no secret left even once percent-decoded (a masked decoding when
        the encoded text hid one, MASK alone when even that fails)."""
        out = self(text)
        if not self.found(out):
            return out
        decoded = list(_decodings(out))[-1]
        out = self(decoded)
        return out if not self.found(out) else MASK

    def scrub_obj(self, value: object) -> object:
        """Scrub every string inside a JSON-like structure (keys too)."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {
                self(k) if isinstance(k, str) else k: self.scrub_obj(v) for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.scrub_obj(v) for v in value]
        return value


def _decodings(text: str) -> Iterator[str]:
    yield text
    for _ in range(_DECODE_ROUNDS):
        if "%" not in text and "+" not in text:
            return
        decoded = unquote_plus(text)
        if decoded == text:
            return
        yield decoded
        text = decoded
