"""A provider that keeps the stream open with SSE keep-alive comments (`: keep-alive`) but
sends nothing else: `requestTimeout` now bounds the call's silence, not each read, so the
turn ends (issue 10, point 14). Through the real console script, with requestTimeout 1 s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.reliability.support import KEY, Proc, Router, write_config
from tests.support.openai_server import (
    OpenAITestServer,
    keep_alive_forever,
    slow,
    text_reply,
)

pytestmark = pytest.mark.e2e


STEPS: dict[str, Callable[[], list[Any]]] = {
    "hang": lambda: [keep_alive_forever(1), keep_alive_forever(0)],
    "recover": lambda: [keep_alive_forever(2), text_reply("recovered")],
    "headers": lambda: [keep_alive_forever(0), text_reply("after the headers")],
    "steady": lambda: [slow(0.4, text_reply("one two three four five six", chunk_size=3))],
}
"""Each case's server script (made afresh for its test):
- `hang`: pings forever, twice: retried once, then a timeout error, exit 1;
- `recover`: pings forever once (after some text), then a real answer: exit 0;
- `headers`: pings right after the headers, before any chunk, then an answer;
- `steady`: a slow stream whose chunks come every 0.4 s for longer than its timeout (2 s) in
  total: every chunk starts the clock again, so it is not a timeout."""


@pytest.fixture(scope="module")
def server_router() -> Iterator[tuple[OpenAITestServer, Router]]:
    router = Router()
    with OpenAITestServer(default=router) as srv:
        yield srv, router


@pytest.mark.parametrize("name", list(STEPS))
def test_keep_alive_pings_no_longer_hang_a_turn(tmp_path, server_router, name: str) -> None:
    """One case a test (the four ran at once in one test; pytest-xdist spreads them now),
    against the module's server, whose router serves each case its own script."""
    srv, router = server_router
    home = tmp_path / name
    write_config(home, srv.url, requestTimeout=2.0 if name == "steady" else 1.0)
    router.add(name, STEPS[name]())
    p = Proc(home, ["agent", "-m", f"{name}: go"], OPENAI_API_KEY=KEY)
    p.finish(timeout=120)
    assert "Traceback" not in p.stderr, (name, p.stderr)
    trace = json.loads((home / "data/traces/traces.jsonl").read_text())
    if name == "hang":
        assert p.popen.returncode == 1, p.stderr
        assert "did not answer in time" in p.stderr
        assert "no content, tool call or usage for 1 s" in p.stderr
        assert "requestTimeout" in p.stderr
        assert (router.count(name), trace["retries"], trace["outcome"]) == (2, 1, "error")
    elif name == "steady":
        assert p.popen.returncode == 0, p.stderr
        assert p.stdout == "one two three four five six\n"
        assert (router.count(name), trace["retries"]) == (1, 0)
    else:
        assert p.popen.returncode == 0, (name, p.stderr)
        answer = {"recover": "recovered", "headers": "after the headers"}[name]
        assert p.stdout.endswith(answer + "\n"), p.stdout
        assert "retrying" in p.stderr and "did not answer in time" in p.stderr
        assert (router.count(name), trace["retries"], trace["outcome"]) == (2, 1, "final")
