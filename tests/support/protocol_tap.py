"""Every protocol line every test receives is checked against the published schema.

Installed for the whole suite by tests/conftest.py: `subprocess.Popen` (which
`subprocess.run` uses) is replaced by `TappedPopen`. A console-script call that speaks the
protocol on stdout (`agent --json`, `agent -m --output-format json|stream-json`) and whose
stdout is a pipe gets a tee between the child and the test: the test reads exactly the
bytes it read before (through `communicate`, `readline` or `os.read` on the fd), and each
complete line is validated on the way with `jsonschema` against
`docs/protocol.schema.json` (the file that ships). A line that is not JSON, or does not
match, fails the test that received it (`finish`, at its teardown).

`--json` writes only events; the json formats end with a `result` line.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"

_REAL_POPEN = subprocess.Popen
_lock = threading.Lock()
_problems: list[str] = []
_tees: list[tuple[subprocess.Popen[Any], threading.Thread]] = []
validated = 0
"""Lines checked in this process so far (the terminal summary adds up the workers')."""
_validators: dict[str, Any] = {}


def _schema() -> dict[str, Any]:
    if not _validators:
        _validators["schema"] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return _validators["schema"]


def _validator(name: str) -> Any:
    """A validator of one `$defs` object (its errors name the field, where the union's
    would only say "not valid under any of the given schemas")."""
    if name not in _validators:
        from jsonschema import Draft202012Validator

        schema = _schema()
        _validators[name] = Draft202012Validator({**schema, "anyOf": [{"$ref": f"#/$defs/{name}"}]})
    return _validators[name]


def problem_of(line: bytes, *, result_allowed: bool = True) -> str | None:
    """Why one output line breaks the schema, or None when it fits."""
    try:
        value = json.loads(line)
    except ValueError as e:
        return f"not JSON ({e}): {line[:200]!r}"
    kind = value.get("type") if isinstance(value, dict) else None
    mapping = _schema()["$defs"]["event"]["discriminator"]["mapping"]
    if kind == "result":
        if not result_allowed:
            return "a result object in --json output"
        name = "RunResult"
    elif kind in mapping:
        name = mapping[kind].rsplit("/", 1)[1]
    else:
        return f"no event type {kind!r} in the schema: {json.dumps(value)[:300]}"
    errors = list(_validator(name).iter_errors(value))
    if errors:
        from jsonschema.exceptions import best_match

        best = best_match(errors)
        while best.context:  # the anyOf wrapper: the error inside it names the field
            best = best_match(best.context)
        return f"{best.message} in {json.dumps(value)[:300]}"
    return None


def protocol_mode(args: Sequence[Any]) -> str | None:
    """ "json" (`agent --json`), "format" (`-m --output-format json|stream-json`), or None
    for any other command line."""
    words = [str(a) for a in args]
    if "agent" not in words or not any("picobot" in w for w in words[: words.index("agent")]):
        return None
    rest = words[words.index("agent") + 1 :]
    if "--json" in rest:
        return "json"
    for i, word in enumerate(rest):
        value = word.split("=", 1)[1] if word.startswith("--output-format=") else None
        if word == "--output-format" and i + 1 < len(rest):
            value = rest[i + 1]
        if value in ("json", "stream-json"):
            return "format"
    return None


def _tee(source: int, sink: int, mode: str, label: str) -> None:
    global validated
    pending = b""
    try:
        while chunk := os.read(source, 65536):
            view = memoryview(chunk)
            try:
                while view:  # the reader may be slow: write it all
                    view = view[os.write(sink, view) :]
            except BrokenPipeError:
                # The test closed its end: so does the tee, and the child meets the closed
                # pipe on its next write, as it would without the tee.
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                problem = problem_of(line, result_allowed=mode == "format")
                with _lock:
                    validated += 1
                    if problem:
                        _problems.append(f"{label}: {problem}")
    finally:
        os.close(source)
        with contextlib.suppress(OSError):
            os.close(sink)


class TappedPopen(_REAL_POPEN):
    def __init__(self, args: Any, *a: Any, **kw: Any) -> None:
        argv = [args] if isinstance(args, (str, bytes)) else list(args)
        mode = protocol_mode(argv)
        if mode is None or kw.get("stdout") is not subprocess.PIPE or a:
            super().__init__(args, *a, **kw)
            return
        child_r, child_w = os.pipe()
        test_r, test_w = os.pipe()
        kw["stdout"] = child_w
        try:
            super().__init__(args, **kw)
        except BaseException:
            for fd in (child_r, child_w, test_r, test_w):
                os.close(fd)
            raise
        os.close(child_w)
        # As Popen opens its own pipe; the test (or Popen's __del__) closes it.
        raw = open(test_r, "rb", kw.get("bufsize", -1))  # noqa: SIM115
        text = bool(kw.get("text") or kw.get("universal_newlines") or kw.get("encoding"))
        self.stdout = (
            io.TextIOWrapper(raw, encoding=kw.get("encoding"), errors=kw.get("errors"))
            if text
            else raw
        )
        label = " ".join(str(w) for w in argv[1:])[:120]
        thread = threading.Thread(
            target=_tee, args=(child_r, test_w, mode, label), daemon=True, name="protocol-tap"
        )
        thread.start()
        with _lock:
            _tees.append((self, thread))


def install() -> None:
    subprocess.Popen = TappedPopen  # type: ignore[misc]


def start() -> None:
    """A test begins: nothing of an earlier test's is held against it."""
    with _lock:
        _problems.clear()
        _tees.clear()


def finish() -> list[str]:
    """The lines this test received that break the schema. A tee whose process ended is
    drained first (its pipe's end is near: the process closed its side)."""
    with _lock:
        tees = list(_tees)
    for proc, thread in tees:
        if proc.poll() is not None:
            thread.join(timeout=30)
    with _lock:
        found = list(_problems)
        _problems.clear()
        _tees.clear()
    return found
