"""A provider that keeps the stream open with SSE keep-alive comments (`: keep-alive`) but
sends nothing else: `requestTimeout` now bounds the call's silence, not each read, so the
turn ends (issue 10, point 14). Through the real console script, with requestTimeout 1 s.
"""

from __future__ import annotations

import json

import pytest

from tests.reliability.support import KEY, Proc, Router, write_config
from tests.support.openai_server import (
    OpenAITestServer,
    keep_alive_forever,
    slow,
    text_reply,
)

pytestmark = pytest.mark.e2e


def test_keep_alive_pings_no_longer_hang_a_turn(tmp_path) -> None:
    """Three runs at once against one server:
    - `hang`: pings forever, twice: retried once, then a timeout error, exit 1;
    - `recover`: pings forever once (after some text), then a real answer: exit 0;
    - `headers`: pings right after the headers, before any chunk, then an answer;
    - `steady`: a slow stream whose chunks come every 0.4 s for longer than its timeout
      (2 s) in total: every chunk starts the clock again, so it is not a timeout."""
    steps = {
        "hang": [keep_alive_forever(1), keep_alive_forever(0)],
        "recover": [keep_alive_forever(2), text_reply("recovered")],
        "headers": [keep_alive_forever(0), text_reply("after the headers")],
        "steady": [slow(0.4, text_reply("one two three four five six", chunk_size=3))],
    }
    router = Router()
    with OpenAITestServer(default=router) as srv:
        procs = {}
        for name, script in steps.items():
            home = tmp_path / name
            write_config(home, srv.url, requestTimeout=2.0 if name == "steady" else 1.0)
            router.add(name, script)
            procs[name] = Proc(home, ["agent", "-m", f"{name}: go"], OPENAI_API_KEY=KEY)
        for p in procs.values():
            p.finish(timeout=120)
    for name, p in procs.items():
        assert "Traceback" not in p.stderr, (name, p.stderr)
        trace = json.loads((tmp_path / name / "data/traces/traces.jsonl").read_text())
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
