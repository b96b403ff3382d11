"""Crash safety: the real `picobot agent -m` / `--json` killed at varied moments.

Each kill case runs the console script against one shared local server (a `Router` serves
every case its own script, so runs overlap), kills it with SIGKILL when the chosen moment
comes, then checks:

- every session file loads (the store reads it, opens it, and nothing but a torn last line
  is skipped);
- no message that was complete before the kill is lost: everything the provider was sent,
  every tool result the front end reported finished, and a finished answer are in the file;
- `--session latest` resumes, and the request the server then receives is a valid
  conversation (no `tool_calls` without results, no orphan `tool` message) that still holds
  every message sent before the kill.

CI runs one case of each (moment x mode) pair, one test each (so pytest-xdist spreads them;
their figures are added up in the end-of-run counts); `--slow` runs all 50 in one test, two at
a time. SIGINT and SIGTERM get their own tests: exit 130 / 143, and a session that is
consistent without any repair.
"""

from __future__ import annotations

import json
import random
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core.sessions.files import is_answer
from tests.reliability import fuzz
from tests.reliability.support import (
    KEY,
    Proc,
    Router,
    check_session_file,
    conversation_problems,
    prefix_lost,
    provider_view,
    saved_logging,
    session_paths,
    write_config,
)
from tests.support.openai_server import (
    OpenAITestServer,
    ToolCall,
    slow,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)
from tests.support.sent import as_stored

pytestmark = pytest.mark.e2e

MOMENTS = ("stream", "tool", "between", "append", "args", "parallel")
MODES = ("text", "json")
TOTAL_KILLS = 50
WORKERS = 2  # concurrent picobot processes: each pays a CPU-bound LiteLLM import


@dataclass
class KillCase:
    id: str
    moment: str
    mode: str
    seed: int
    steps: list[Any] = field(default_factory=list)
    wait: Callable[[Proc, Router], Any] | None = None
    jitter: float = 0.0
    cli_resume: bool = False


def _has_event(kind: str, n: int = 1) -> Callable[[Proc, Router], bool]:
    return lambda p, r: sum(e["type"] == kind for e in p.events()) >= n


def build_case(index: int) -> KillCase:
    """Case `index`: the moment and mode cycle, the details come from a seeded RNG."""
    combo = index % (len(MOMENTS) * len(MODES))
    moment, mode = MOMENTS[combo // len(MODES)], MODES[combo % len(MODES)]
    rng = random.Random(1000 + index)
    case = KillCase(f"k{index:02d}", moment, mode, 1000 + index)
    cid = case.id
    if moment == "stream":  # while text streams: after k deltas / bytes
        k = rng.randint(1, 40)
        # Distinct words: LiteLLM aborts a stream of 100 identical chunks.
        text = " ".join(f"w{i}" for i in range(300))
        case.steps = [slow(rng.uniform(0.01, 0.03), text_reply(text, chunk_size=5))]
        if mode == "json":
            case.wait = _has_event("text_delta", k)
        else:
            case.wait = lambda p, r, k=k: len(p.out) >= k * 5
        case.jitter = rng.uniform(0, 0.02)
    elif moment == "tool":  # while a tool runs (exec sleep)
        case.steps = [
            tool_call_reply("exec", {"command": "sleep 3"}, id=f"{cid}_x"),
            text_reply("slept"),
        ]
        if mode == "json":
            case.wait = _has_event("tool_call_started")
        else:
            case.wait = lambda p, r: b"\xe2\x86\x92 exec" in p.err  # "→ exec"
        case.jitter = rng.uniform(0, 0.4)
    elif moment == "between":  # tool result written, next call waiting for its first byte
        case.steps = [
            tool_call_reply("list_dir", {"path": "."}, id=f"{cid}_l"),
            slow(0, text_reply("listed"), first_byte=3.0),
        ]
        case.wait = lambda p, r: r.count(cid) >= 2
        case.jitter = rng.uniform(0, 0.3)
    elif moment == "append":  # fast tool rounds: appends all the time; kill at random
        rounds = rng.randint(3, 5)
        case.steps = [
            tool_calls_reply(
                [
                    ToolCall("todo", {"action": "add", "text": f"item {i}"}, f"{cid}_t{i}"),
                    ToolCall("list_dir", {"path": "."}, f"{cid}_d{i}"),
                ]
            )
            for i in range(rounds)
        ] + [text_reply("all appended", chunk_size=50)]
        after = rng.randint(1, rounds)
        case.wait = lambda p, r, n=after: r.count(cid) >= n
        case.jitter = rng.uniform(0, 0.05)
    elif moment == "args":  # while a tool call's arguments stream
        content = "line of a file\n" * 40
        case.steps = [
            slow(
                0.03,
                tool_call_reply(
                    "write_file", {"path": "out.txt", "content": content}, id=f"{cid}_w", parts=40
                ),
            ),
            text_reply("written"),
        ]
        if mode == "json":
            case.wait = _has_event("tool_call_delta", rng.randint(1, 30))
        else:
            case.wait = lambda p, r: r.count(cid) >= 1
            case.jitter = rng.uniform(0.05, 1.0)
    else:  # parallel tool calls: some results written, others not yet
        case.steps = [
            tool_calls_reply(
                [ToolCall("exec", {"command": f"sleep 0.{3 + i}"}, f"{cid}_p{i}") for i in range(3)]
            ),
            text_reply("three done"),
        ]
        n = rng.randint(1, 2)
        if mode == "json":
            case.wait = _has_event("tool_call_finished", n)
        else:
            case.wait = lambda p, r, n=n: p.err.count(b"\xe2\x9c\x93 exec") >= n  # "✓ exec"
        case.jitter = rng.uniform(0, 0.3)
    case.cli_resume = index % 6 == 0
    return case


def ci_cases() -> list[int]:
    """One case of every (moment, mode) pair."""
    return list(range(len(MOMENTS) * len(MODES)))


@dataclass
class KillResult:
    case: KillCase
    home: Path
    returncode: int
    events: list[dict[str, Any]]
    stdout: bytes
    stderr: bytes
    killed_at: float


def run_and_kill(case: KillCase, home: Path, router: Router) -> KillResult:
    router.add(case.id, case.steps)
    message = f"{case.id}: do the {case.moment} thing"
    if case.mode == "json":
        proc = Proc(home, ["agent", "--json", "--yes"], stdin=True)
        proc.send({"type": "message", "content": message})
    else:
        # stdout is a terminal, so the answer streams while it is written (to a pipe `-m`
        # prints it once, at the end, and "while text streams" would never be reached).
        proc = Proc(home, ["agent", "-m", message, "--yes", "--show-tools"], tty=True)
    try:
        assert case.wait is not None
        proc.wait_until(lambda: case.wait(proc, router), timeout=120)
        if case.jitter:
            time.sleep(case.jitter)
        proc.popen.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        code = proc.finish()
    finally:
        if proc.popen.poll() is None:
            proc.popen.kill()
            proc.finish()
    return KillResult(case, home, code, proc.events() if case.mode == "json" else [],
                      bytes(proc.out), bytes(proc.err), killed_at)  # fmt: skip


@dataclass
class Tally:
    kills: int = 0
    sessions_checked: int = 0
    damaged: list[str] = field(default_factory=list)
    complete_checked: int = 0
    lost: list[str] = field(default_factory=list)
    resumed: int = 0
    invalid_resume: list[str] = field(default_factory=list)
    states: dict[str, int] = field(default_factory=dict)
    """What the session looked like at the kill, e.g. "open tool calls": how often."""


def check_after_kill(res: KillResult, router: Router, tally: Tally) -> list[dict[str, Any]]:
    """Every session loads; no complete message is lost. Returns the stored messages."""
    cid = res.case.id
    paths = session_paths(res.home)
    stored: list[dict[str, Any]] = []
    for path in paths:
        check = check_session_file(path)
        tally.sessions_checked += 1
        tally.damaged += [f"{cid} {path.name}: {d}" for d in check.damaged]
        stored = check.messages
    requests = router.of(cid)
    assert requests, f"{cid}: the server never got a request"
    assert len(paths) == 1, f"{cid}: expected one session, found {paths}"
    # 1. Everything the provider was sent was complete: it must all be in the file.
    sent = requests[-1]["messages"][1:]
    tally.complete_checked += len(sent)
    tally.lost += [f"{cid}: {m}" for m in prefix_lost(sent, stored)]
    # 2. What the front end reported finished must be in the file too.
    tool_ids = {m.get("tool_call_id") for m in stored if m.get("role") == "tool"}
    finished = [e["id"] for e in res.events if e["type"] == "tool_call_finished"]
    if res.case.mode == "text":
        # "✓ exec ok (…)" lines; the ids are not printed, so compare counts.
        shown = res.stderr.count("✓ ".encode())
        written = sum(1 for m in stored if m.get("role") == "tool" and m.get("status") == "ok")
        tally.complete_checked += shown
        if written < shown:
            tally.lost.append(f"{cid}: {shown} tool results shown, {written} stored")
    tally.complete_checked += len(finished)
    tally.lost += [f"{cid}: tool result {i} reported but not stored" for i in finished
                   if i not in tool_ids]  # fmt: skip
    for e in res.events:
        if e["type"] == "turn_finished" and e["outcome"] == "final":
            tally.complete_checked += 1
            if not any(m.get("role") == "assistant" and m.get("content") == e["content"]
                       for m in stored):  # fmt: skip
                tally.lost.append(f"{cid}: the final answer was reported but not stored")
    state = kill_state(stored)
    tally.states[state] = tally.states.get(state, 0) + 1
    # The listing (index) must agree with the file after a crash.
    from picobot_tui.core.sessions import SessionStore

    infos = SessionStore(res.home / "sessions").list(unanswered=True)  # a kill before any
    counts = {i.key: i.message_count for i in infos}  # answer: listed with --all only
    for path in paths:
        check = check_session_file(path)
        if counts.get(check.key) != len(check.messages):
            tally.damaged.append(
                f"{cid}: `sessions list` says {counts.get(check.key)} messages, "
                f"the file holds {len(check.messages)}"
            )
    return stored


def kill_state(stored: list[dict[str, Any]]) -> str:
    """Where the conversation stood when the process died."""
    if not stored:
        return "nothing stored yet"
    if conversation_problems(provider_view(stored)):
        return "tool calls without results"
    last = stored[-1]["role"]
    return {"user": "waiting for the model", "tool": "between tool result and next call"}.get(
        last, "answer complete"
    )


def resume_in_process(
    home: Path, text: str, monkeypatch: pytest.MonkeyPatch, session: str = "latest"
) -> int:
    """`picobot agent -m TEXT --session SESSION`, run in this process (no LiteLLM import per
    run): the same code the console script runs after parsing its flags."""
    from picobot_tui.headless.text import HeadlessFlags, run_message
    from picobot_tui.run.context import RunOptions

    with monkeypatch.context() as m, saved_logging():
        m.setenv("PICOBOT_HOME", str(home))
        return run_message(
            RunOptions(session=session), HeadlessFlags(stream=False, show_tools=False), text
        )


def resume_and_check(
    res: KillResult,
    stored: list[dict[str, Any]],
    router: Router,
    tally: Tally,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cid = res.case.id
    before = len(router.of(cid))
    sent_before = router.of(cid)[-1]["messages"][1:]
    text = f"resume {cid} please"
    # A kill before the first answer leaves a session that is not `latest` (issue 25,
    # point 5): resume it by its id then, as the killed run's own note would say.
    [path] = session_paths(res.home)
    check = check_session_file(path)
    wanted = "latest" if any(is_answer(m) for m in check.messages) else check.key
    if res.case.cli_resume:
        p = Proc(res.home, ["agent", "-m", text, "--session", wanted])
        code = p.finish(timeout=120)
        assert "Traceback" not in p.stderr, p.stderr
        assert p.stdout == "resumed fine\n", p.stderr
    else:
        code = resume_in_process(res.home, text, monkeypatch, wanted)
    assert code == 0, f"{cid}: resume exited {code}"
    after = router.of(cid)[before:]
    assert len(after) == 1, f"{cid}: expected one request on resume, got {len(after)}"
    msgs = after[0]["messages"]
    tally.resumed += 1
    problems = conversation_problems(msgs)
    if msgs[0]["role"] != "system" or as_stored(msgs)[-1] != {"role": "user", "content": text}:
        problems.append("the resumed request does not end with the new message")
    if provider_view(msgs[1 : 1 + len(sent_before)]) != provider_view(sent_before):
        problems.append("the resumed request lost messages that were sent before the kill")
    tally.invalid_resume += [f"{cid}: {p}" for p in problems]
    # After the resume the file itself is consistent: every call has its result.
    [path] = session_paths(res.home)
    check = check_session_file(path)
    assert not check.damaged, check.damaged
    file_problems = conversation_problems(provider_view(check.messages))
    tally.invalid_resume += [f"{cid} (file after resume): {p}" for p in file_problems]


def run_kill_suite(
    indexes: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server_router
) -> Tally:
    server, router = server_router
    cases = [build_case(i) for i in indexes]
    tally = Tally()
    for case in cases:
        write_config(tmp_path / case.id, server.url, maxRetries=0)
    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda c: run_and_kill(c, tmp_path / c.id, router), cases))
    for res in results:
        check_kill(res, router, tally, monkeypatch)
    return tally


def check_kill(
    res: KillResult, router: Router, tally: Tally, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A killed run's checks: killed by SIGKILL, the session after the kill, the resume, and
    the key never in a session file, a trace or a log, whatever moment the kill hit."""
    assert res.returncode == -signal.SIGKILL, (res.case.id, res.returncode, res.stderr)
    tally.kills += 1
    stored = check_after_kill(res, router, tally)
    resume_and_check(res, stored, router, tally, monkeypatch)
    for path in res.home.rglob("*"):
        if path.is_file() and path.name != "config.json":
            assert KEY.encode() not in path.read_bytes(), path


@pytest.fixture(scope="module")
def server_router() -> Iterator[tuple[OpenAITestServer, Router]]:
    router = Router()
    with OpenAITestServer(default=router) as server:
        yield server, router


def _report(tally: Tally, label: str) -> None:
    fuzz.NOTES.append(
        f"[SIGKILL, {label}] {tally.kills} kills, {tally.sessions_checked} session files checked, "
        f"{len(tally.damaged)} damaged, {tally.complete_checked} complete messages checked, "
        f"{len(tally.lost)} lost, {tally.resumed} resumed, "
        f"{len(tally.invalid_resume)} invalid resumed conversations; states at the kill: "
        f"{json.dumps(tally.states)}"
    )
    assert not tally.damaged, tally.damaged
    assert not tally.lost, tally.lost
    assert not tally.invalid_resume, tally.invalid_resume


def test_ci_cases_are_one_of_every_pair() -> None:
    pairs = {(build_case(i).moment, build_case(i).mode) for i in ci_cases()}
    assert len(ci_cases()) == len(pairs) == len(MOMENTS) * len(MODES)


@pytest.mark.parametrize("index", ci_cases(), ids=lambda i: build_case(i).id)
def test_sigkill_at_every_kind_of_moment(tmp_path, monkeypatch, server_router, index) -> None:
    """CI: one kill per (moment, mode) pair — 12 kills, one a test. The figures of each go
    into the end-of-run counts ("SIGKILL (ci): ..."), which add up every worker's."""
    server, router = server_router
    case = build_case(index)
    home = tmp_path / case.id
    write_config(home, server.url, maxRetries=0)
    tally = Tally()
    check_kill(run_and_kill(case, home, router), router, tally, monkeypatch)
    for what, n in (
        ("kills", tally.kills),
        ("session files checked", tally.sessions_checked),
        ("complete messages checked", tally.complete_checked),
        ("resumed", tally.resumed),
        *((f"state at the kill: {state}", n) for state, n in tally.states.items()),
    ):
        fuzz.RAN[f"SIGKILL (ci): {what}"] += n
    assert not tally.damaged, tally.damaged
    assert not tally.lost, tally.lost
    assert not tally.invalid_resume, tally.invalid_resume


@pytest.mark.slow
def test_sigkill_50_times(tmp_path, monkeypatch, server_router) -> None:
    """--slow: 50 kills, every pair at least four times, with seeded random details."""
    t0 = time.monotonic()
    tally = run_kill_suite(list(range(TOTAL_KILLS)), tmp_path, monkeypatch, server_router)
    assert tally.kills == TOTAL_KILLS
    _report(tally, f"slow, {time.monotonic() - t0:.0f} s")
