"""The Scrubber's spellings, the tool-argument guard, the streaming delta masker, and masking
before cutting in exec's capture, read_file and web_fetch (a key planted across every cut
position through the real tools)."""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from picobot_tui.core.secret_guard import DeltaMasker, mask_arguments
from picobot_tui.core.secrets import MASK, Scrubber, env_secrets, spellings
from picobot_tui.core.settings import ToolsConfig
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.exec.output import OutputCapture
from picobot_tui.core.tools.read_file import MAX_LINE_CHARS
from picobot_tui.core.tools.registry import default_registry
from tests.reliability.fuzz import fuzz

KEY = "sk-cut-SECRET-a1b2c3d4e5f60718293a4b5c"


def scrubber() -> Scrubber:
    return Scrubber([KEY], include_env=False)


def pieces(text: str, secret: str = KEY, n: int = 4) -> list[str]:
    """Every n-char piece of `secret` still in `text` once the masks are taken out."""
    rest = text.replace(MASK, "\0")
    return sorted({secret[i : i + n] for i in range(len(secret) - n + 1)} & _grams(rest, n))


def _grams(text: str, n: int) -> set[str]:
    return {text[i : i + n] for i in range(len(text) - n + 1)}


# -- spellings ------------------------------------------------------------------------------


def test_every_cheap_spelling_is_masked_and_found() -> None:
    s = scrubber()
    data = KEY.encode()
    forms = {
        "raw": KEY,
        "quote": urllib.parse.quote(KEY, safe=""),
        "every byte %XX": "".join(f"%{b:02X}" for b in data),
        "every byte %xx": "".join(f"%{b:02x}" for b in data),
        "hex": data.hex(),
        "HEX": data.hex().upper(),
    }
    for lead in ("", "a", "ab", "abc"):  # base64 of the key inside longer data
        blob = (lead + KEY + "tail").encode()
        forms[f"base64 lead {len(lead)}"] = base64.b64encode(blob).decode()
        forms[f"urlsafe lead {len(lead)}"] = base64.urlsafe_b64encode(blob).decode()
    for name, form in forms.items():
        text = f"before {form} after"
        assert s.found(text), name
        assert form not in s(text), name
    # Percent-encoded twice, mixed case: only decoding finds it; deep() masks it.
    mixed = "".join(f"%{b:02x}" if i % 2 else f"%{b:02X}" for i, b in enumerate(data))
    twice = urllib.parse.quote(mixed, safe="")
    assert s.found(f"http://x/?k={twice}")
    assert not s.found(s.deep(f"http://x/?k={twice}"))
    assert KEY in spellings(KEY)


def test_no_false_alarm_on_ordinary_text_and_short_values() -> None:
    s = Scrubber([KEY, "short"], include_env=False)
    for text in ("hello world", "sk-cut-SECRET", KEY[:-1], "a%20b+c", base64.b64encode(b"x" * 50)):
        text = text if isinstance(text, str) else text.decode()
        assert not s.found(text) and s(text) == text


def test_credential_like_environment_variables_are_secrets() -> None:
    env = {
        "AWS_SECRET_ACCESS_KEY": "aws-secret-0123456789",
        "GITHUB_TOKEN": "ghp_0123456789abcdef",
        "DB_PASSWORD": "hunter2hunter2",
        "MY_API_KEY": "key-0123456789",
        "GOOGLE_APPLICATION_CREDENTIALS": "/home/u/creds.json",  # a path, not a secret
        "SOME_TOKEN": "short",
        "HOME": "/home/u/not-a-secret",
        "LANG": "en_US.UTF-8-long-enough",
    }
    assert env_secrets(env) == {
        "aws-secret-0123456789",
        "ghp_0123456789abcdef",
        "hunter2hunter2",
        "key-0123456789",
    }


# -- tool arguments -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {"url": f"https://x.example/?k={KEY}"},
        {"url": f"https://x.example/?k={urllib.parse.quote(KEY, safe='')}"},
        {"url": "https://x.example/?k=" + "".join(f"%{b:02x}" for b in KEY.encode())},
        {"url": f"https://x.example/?d={base64.b64encode(('a' + KEY).encode()).decode()}"},
        {"command": f"curl -H 'x: {KEY}' example.com"},
        {"nested": [{"deep": KEY}]},
        {KEY: "as a key"},
    ],
    ids=["raw", "quoted", "all-escaped", "base64", "command", "nested", "dict-key"],
)
def test_arguments_with_a_secret_are_flagged_and_masked(args) -> None:
    s = scrubber()
    raw = json.dumps(args)
    masked, leaked = mask_arguments(s, raw)
    assert leaked
    assert not s.found(masked) and KEY not in masked
    json.loads(masked)  # still valid JSON


def test_json_escaped_secret_is_found_and_the_text_re_encoded() -> None:
    s = scrubber()
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    raw = '{"url": "https://x.example/?k=' + escaped + '"}'
    assert KEY not in raw
    masked, leaked = mask_arguments(s, raw)
    assert leaked and json.loads(masked) == {"url": f"https://x.example/?k={MASK}"}


def test_arguments_without_a_secret_are_left_exactly_as_sent() -> None:
    s = scrubber()
    for raw in ('{"path": "a.txt"}', '{"url": "https://x.example/?q=a%20b"}', "not json", ""):
        assert mask_arguments(s, raw) == (raw, False)
    assert mask_arguments(s, f"not json {KEY}") == (f"not json {MASK}", True)


def test_delta_masker_joined_equals_scrubbed_for_every_split() -> None:
    s = scrubber()
    raw = json.dumps({"url": f"https://x.example/?k={KEY}&more=1"})
    for i in range(len(raw) + 1):
        for j in range(i, len(raw) + 1, 7):
            m = DeltaMasker(s)
            out = [m.feed(raw[:i]), m.feed(raw[i:j]), m.feed(raw[j:]), m.flush()]
            assert "".join(out) == s(raw), (i, j)
            assert not any(KEY[k : k + 6] in d for d in out for k in range(len(KEY) - 5))


@fuzz(ci=300, slow=3000)
@given(
    before=st.text(st.characters(codec="ascii", exclude_characters="%\\"), max_size=200),
    after=st.text(st.characters(codec="ascii", exclude_characters="%\\"), max_size=200),
    cuts=st.lists(st.integers(0, 500), max_size=8),
    twice=st.booleans(),
)
def test_delta_masker_any_split_any_place(before, after, cuts, twice) -> None:
    s = scrubber()
    raw = before + KEY + after + (KEY if twice else "")
    m = DeltaMasker(s)
    bounds = sorted({0, len(raw), *(c for c in cuts if c <= len(raw))})
    out = [m.feed(raw[i:j]) for i, j in zip(bounds, bounds[1:], strict=False)] + [m.flush()]
    assert "".join(out) == s(raw)
    assert not s.found("".join(out))


def test_delta_masker_stops_at_escapes_that_could_spell_a_key() -> None:
    m = DeltaMasker(scrubber())
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    assert m.feed('{"url": "' + escaped[:30]) == ""
    assert m.feed(escaped[30:] + '"}') == "" and m.flush() == ""


# -- exec's capture -------------------------------------------------------------------------


def _capture(stream: str, limit: int, chunk: int) -> str:
    cap = OutputCapture(limit, scrubber())
    data = stream.encode()
    for i in range(0, len(data), chunk):
        cap.feed(data[i : i + chunk])
    cap.feed(b"", final=True)
    return cap.text()


@fuzz(ci=300, slow=3000)
@given(
    before=st.integers(0, 700),
    after=st.integers(0, 700),
    chunk=st.integers(1, 97),
    second=st.booleans(),
)
def test_capture_never_keeps_a_key_in_pieces(before, after, chunk, second) -> None:
    """A key anywhere (across the head's end, the tail's start, both cut positions of a
    stream that just fits) is masked whole or cut whole: never a piece of it."""
    stream = "." * before + KEY + "." * after + (KEY + "..." if second else "")
    out = _capture(stream, 200, chunk)
    assert not pieces(out), (before, after, chunk)


def test_capture_planted_at_every_offset_around_both_cuts() -> None:
    limit, n = 200, 1000
    for at in [*range(100 - len(KEY) - 2, 102), *range(n - 100 - len(KEY) - 2, n - 98)]:
        stream = "." * at + KEY + "." * (n - at)
        out = _capture(stream, limit, 13)
        assert not pieces(out), at
        assert "chars of output cut" in out


def test_capture_without_secrets_keeps_head_and_tail_as_before() -> None:
    cap = OutputCapture(10)
    cap.feed(b"0123456789abcdefghij", final=True)
    assert cap.text() == "01234\n… [10 chars of output cut; 20 in all] …\nfghij"
    small = OutputCapture(100)
    small.feed(b"short", final=True)
    assert small.text() == "short"


# -- through the real tools -----------------------------------------------------------------


def _registry(ws: Path, **config: object):
    return default_registry(ToolContext(ws, ToolsConfig(**config)), scrub=scrubber())


async def test_exec_key_across_each_cut_is_never_kept_in_pieces(tmp_path) -> None:
    reg = _registry(tmp_path, exec={"max_output_chars": 400})  # head 200, tail 200
    n = 2000
    offsets = [*range(200 - len(KEY) - 1, 202, 3), *range(n - 200 - len(KEY) - 1, n - 198, 3)]
    for at in offsets:
        script = f"import sys; sys.stdout.write('.'*{at} + {KEY!r} + '.'*{n - at})"
        r = await reg.execute("exec", {"command": f'python3 -c "{script}"'})
        assert "chars of output cut" in r.content, r.content[:300]
        assert not pieces(r.content), (at, r.content)


async def test_read_file_key_across_the_long_line_cut(tmp_path) -> None:
    reg = _registry(tmp_path)
    for at in range(MAX_LINE_CHARS - len(KEY) - 1, MAX_LINE_CHARS + 2):
        (tmp_path / "long.txt").write_text("." * at + KEY + "." * 3000 + "\nnext\n")
        r = await reg.execute("read_file", {"path": "long.txt"})
        assert r.ok and "cut:" in r.content, r.content[-200:]
        assert not pieces(r.content), at


class _Body(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *a: object) -> None:
        pass


@pytest.fixture
def page() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Body)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


async def test_web_fetch_key_across_the_max_chars_cut(tmp_path, page) -> None:
    reg = _registry(tmp_path, web={"allow_private": True})
    at = 500
    _Body.body = ("." * at + KEY + "." * 2000).encode()
    for max_chars in range(at - 1, at + len(KEY) + 2):
        r = await reg.execute("web_fetch", {"url": page, "max_chars": max_chars})
        assert r.ok and "cut at" in r.content, r.content[-200:]
        assert not pieces(r.content), max_chars


# -- logs -----------------------------------------------------------------------------------


def test_log_records_are_scrubbed_in_message_traceback_and_stack() -> None:
    import io
    import logging

    from picobot_tui.run.logs import ScrubFilter

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(ScrubFilter(scrubber()))
    logger = logging.getLogger("picobot.test-secrets")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise RuntimeError(f"provider said: you sent {KEY}")
        except RuntimeError:
            logger.exception("call failed with %s", KEY, stack_info=True)
    finally:
        logger.removeHandler(handler)
    text = out.getvalue()
    assert "RuntimeError: provider said: you sent [REDACTED]" in text
    assert "call failed with [REDACTED]" in text and "Stack (most recent call last)" in text
    assert KEY not in text
