"""The one parser of JSON that picobot did not write itself: protocol frames (`picobot acp`,
`agent --json`), session and index lines, a model's tool-call arguments, provider error
bodies, config files.

`json.loads` alone is not safe on such text:

- nesting: its C scanner recurses once per `[` or `{`, so one 400 KB line of `[[[…` raises
  RecursionError (which `except ValueError` does not catch, and which killed `picobot acp`),
  and a value nested 900 deep parses but then breaks whatever walks it next (a pretty printer,
  a scrubber, pydantic). Here nesting is checked *before* parsing, by a scan of the bracket
  skeleton outside strings, and capped at MAX_DEPTH;
- numbers: an integer of more than 4,300 digits raises a bare ValueError (Python's int limit),
  `1e400` loads as `inf` and `NaN`/`Infinity` load at all, and `json.dumps` then writes
  `Infinity`/`NaN`, which is not JSON (a JSON-RPC answer echoing such an id broke the client's
  parser). Here each is refused;
- lone surrogates: `"\\ud800"` loads as a str that cannot be encoded as UTF-8, so writing it
  back (an echoed id, a stored message) raised. Here they become U+FFFD.

Every refusal is a `JsonInputError` (a ValueError) whose message says what was wrong, and
whose `kind` lets a caller word it its own way.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any, Literal

from picobot_tui.core.textsafe import clean_strings

MAX_DEPTH = 128
"""Arrays and objects nested deeper than this are refused. serde_json's default recursion
limit; what picobot parses nests at most ~8 deep (a JSON-RPC frame with its params), a
model's tool arguments rarely 10. CPython's own scanner gives up near 1,000 (the recursion
limit) and its indenting encoder near 300, so 128 leaves room for the walks that follow."""

Kind = Literal["size", "utf8", "depth", "number", "syntax"]


class JsonInputError(ValueError):
    """Text that is not JSON picobot accepts; `kind` says why, the message says how. A
    syntax error also has the parser's own `detail` and its `line` and `column`."""

    def __init__(
        self, kind: Kind, message: str, detail: str = "", line: int = 0, column: int = 0
    ) -> None:
        super().__init__(message)
        self.kind: Kind = kind
        self.detail = detail or message
        self.line = line
        self.column = column


# Of the bytes outside strings only the brackets are kept, as `[` and `]`.
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_ESCAPED_SURROGATE_RE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _has_surrogate(data: str | bytes | bytearray) -> bool:
    """A str may hold lone surrogates itself (from undecodable argv bytes)."""
    return isinstance(data, str) and _SURROGATE_RE.search(data) is not None


def nesting_depth(data: str | bytes, limit: int | None = None) -> int:
    """How deeply `data`'s arrays and objects nest, counting brackets outside strings only;
    with `limit`, any figure over it means "deeper than `limit`".

    Exact for JSON; for text that is not JSON, an upper bound of how deep a parser would go
    before it finds the error. All of it runs in C bytes methods: with the escaped
    backslashes and quotes deleted (left to right, as JSON pairs them), the text between
    every other `"` is outside the strings; of that, only the brackets are kept, and each
    pass deletes every innermost `[]`, so a document `d` deep takes `d` passes over a
    skeleton that shrinks each time. A text with few brackets is answered from two counts.
    Measured: a 400 KB `[[[…` line 2 ms; a 70 KB frame of source code 0.1 ms (its parse
    0.15 ms); 500 KB of index lines about as long as their parse (which `loads_lines`
    avoids).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    openers = raw.count(b"[") + raw.count(b"{")
    if limit is not None and openers <= limit:
        return openers  # an upper bound, and within the limit: nothing more to learn
    if b'\\"' in raw:  # only an escaped quote can make a `"` that is not a delimiter
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = b"".join(raw.split(b'"')[::2]).translate(_ONE_KIND, _NOT_BRACKETS)
    depth = 0
    while skeleton:
        shorter = skeleton.replace(b"[]", b"")
        if len(shorter) == len(skeleton):
            break  # no pair left: the rest is `]]…[[…`, not JSON
        skeleton = shorter
        depth += 1
        if limit is not None and depth > limit:
            return depth
    # Brackets never closed nest as deep as they are many (`[[[[…`, the 400 KB attack).
    return depth + skeleton.count(b"[")


def _no_constant(name: str) -> Any:
    raise JsonInputError("number", f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JsonInputError("number", f"the number {text[:24]}… is too large")
    return value


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


def loads(
    data: str | bytes | bytearray,
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """Parse untrusted JSON; JsonInputError (a ValueError) when it is not acceptable.

    `max_bytes` caps the size (of the UTF-8 bytes, or of the str's characters); nesting
    deeper than `max_depth` is refused before parsing; NaN, Infinity, numbers that overflow
    a float and integers over Python's digit limit are refused; lone surrogates become
    U+FFFD.
    """
    if max_bytes is not None and len(data) > max_bytes:
        raise JsonInputError("size", f"{len(data):,} bytes is over the limit of {max_bytes:,}")
    if isinstance(data, str):
        text, raw = data, data.encode("utf-8", "surrogatepass")
    else:
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise JsonInputError("utf8", f"not UTF-8 ({e.reason} at byte {e.start})") from None
    depth = nesting_depth(raw, max_depth)
    if depth > max_depth:
        raise JsonInputError("depth", f"nested more than {max_depth} levels deep")
    try:
        value = _DECODER.decode(text)
    except JsonInputError:
        raise
    except json.JSONDecodeError as e:
        where = f"{e.msg} at line {e.lineno} column {e.colno}"
        raise JsonInputError("syntax", where, e.msg, e.lineno, e.colno) from None
    except ValueError:  # Python's int digit limit (a bare ValueError)
        limit = f"{sys.get_int_max_str_digits():,}"
        raise JsonInputError("number", f"an integer of more than {limit} digits") from None
    except RecursionError:  # not expected after the depth check; never let it escape
        raise JsonInputError("depth", "nested too deeply") from None
    if _ESCAPED_SURROGATE_RE.search(raw) or _has_surrogate(data):
        value = clean_strings(value)
    return value


def loads_lines(lines: Sequence[bytes], *, max_depth: int = MAX_DEPTH) -> list[Any]:
    """The values of those `lines` (one JSON document each) that `loads` accepts, in order;
    the others are left out.

    When no line holds more than `max_depth` brackets at all, the batch is parsed by one C
    call (about twice as fast as a call per line: the session index is read this way);
    otherwise, or when that parse fails or gives another count of values than of lines (a
    line `1,2`), line by line. (Lines that are not JSON alone can still, in rare layouts,
    join up in the batch: this is for picobot's own files, whose lines it wrote.)
    """
    if all(raw.count(b"[") + raw.count(b"{") <= max_depth for raw in lines):
        batch = b"[" + b",".join(lines) + b"]"
        try:
            values = _DECODER.decode(batch.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            values = None  # one bad line: find it below
        # A line like `1,2` parses in the batch but not alone: then count them one by one.
        if isinstance(values, list) and len(values) == len(lines):
            return list(clean_strings(values)) if _ESCAPED_SURROGATE_RE.search(batch) else values
    out = []
    for raw in lines:
        try:
            out.append(loads(raw, max_depth=max_depth))
        except JsonInputError:
            continue
    return out
