"""Deterministic fixture generators: a long session, many sessions, a long markdown answer.

Everything is derived from fixed seeds and a fixed clock, so two runs write byte-identical
files. Session files are written in the store's on-disk format (a meta line, then one JSON
line per message) with the store's own line encoder, which is what the store would write.

    python -m bench.fixtures long DIR        # one 2,000-message session (500 tool calls)
    python -m bench.fixtures many DIR 10000  # 10,000 sessions
"""

from __future__ import annotations

import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from picobot_tui.core.sessions.files import dumps_line, key_to_filename

EPOCH = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
NEEDLE = "zanzibar"  # a content-search term that appears in 1 % of the generated sessions

_WORDS = (  # noqa: SIM905 (a sentence reads better than a list of 50 strings)
    "the agent reads a file and then edits the function so that the tests pass while "
    "keeping the public interface stable we check the logs for errors before deploying "
    "configuration loader parser session index budget token stream widget render layout "
    "cache request response retry timeout workspace command output result summary"
).split()
_LANGS = ("python", "bash", "json", "toml")
_TOOLS = ("read_file", "list_dir", "exec", "edit_file", "write_file")


def _ts(seconds: float) -> str:
    return (EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random, sentences: int = 4) -> str:
    return " ".join(_sentence(rng, rng.randint(8, 18)) for _ in range(sentences))


def _code(rng: random.Random, lines: int) -> str:
    lang = rng.choice(_LANGS)
    body = []
    for i in range(lines):
        a, b = rng.choice(_WORDS), rng.choice(_WORDS)
        if lang == "python":
            body.append(f"{'    ' * (i % 3)}{a}_{i} = compute({b!r}, limit={rng.randint(1, 999)})")
        elif lang == "bash":
            body.append(f"grep -rn '{a}' src/{b} | head -n {rng.randint(1, 50)}")
        elif lang == "json":
            body.append(f'  "{a}_{i}": {{"{b}": {rng.randint(1, 9999)}}},')
        else:
            body.append(f"{a}_{i} = {rng.randint(1, 9999)}  # {b}")
    return f"```{lang}\n" + "\n".join(body) + "\n```"


def _table(rng: random.Random, rows: int) -> str:
    head = "| name | count | status | note |\n|---|---:|---|---|"
    body = [
        f"| {rng.choice(_WORDS)}_{i} | {rng.randint(1, 99999)} | "
        f"{rng.choice(('ok', 'failed', 'pending'))} | {_sentence(rng, 5)} |"
        for i in range(rows)
    ]
    return head + "\n" + "\n".join(body)


def _list(rng: random.Random, items: int) -> str:
    return "\n".join(f"- **{rng.choice(_WORDS)}**: {_sentence(rng, 10)}" for _ in range(items))


def markdown_answer(tokens: int = 20_000, seed: int = 4) -> str:
    """A long markdown answer of about `tokens` tokens (chars/4): headings, paragraphs, lists,
    fenced code blocks and tables, in a fixed pseudo-random mix."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    section = 0
    while size < tokens * 4:
        kind = rng.choice(("h", "p", "p", "list", "code", "table", "p"))
        if kind == "h" or section == 0:
            section += 1
            part = f"## {section}. {_sentence(rng, 4)[:-1]}"
        elif kind == "p":
            part = _paragraph(rng, rng.randint(2, 5))
        elif kind == "list":
            part = _list(rng, rng.randint(3, 7))
        elif kind == "code":
            part = _code(rng, rng.randint(4, 14))
        else:
            part = _table(rng, rng.randint(3, 8))
        parts.append(part)
        size += len(part) + 2
    return "\n\n".join(parts) + "\n"


def _assistant_text(rng: random.Random) -> str:
    parts = [_paragraph(rng, rng.randint(1, 3))]
    if rng.random() < 0.35:
        parts.append(_list(rng, rng.randint(2, 5)))
    if rng.random() < 0.3:
        parts.append(_code(rng, rng.randint(3, 10)))
    return "\n\n".join(parts)


def _tool_args(rng: random.Random, name: str, i: int) -> dict[str, Any]:
    path = f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{i}.py"
    if name == "exec":
        return {"command": f"pytest -q tests/test_{rng.choice(_WORDS)}.py"}
    if name == "list_dir":
        return {"path": path.rsplit("/", 1)[0]}
    if name == "edit_file":
        return {"path": path, "old": rng.choice(_WORDS), "new": rng.choice(_WORDS)}
    if name == "write_file":
        return {"path": path, "content": _code(rng, 4)}
    return {"path": path}


def _tool_result(rng: random.Random, name: str) -> str:
    if name == "list_dir":
        return "\n".join(f"{rng.choice(_WORDS)}_{k}.py" for k in range(rng.randint(4, 20)))
    if name == "exec":
        lines = [
            f"tests/test_{rng.choice(_WORDS)}.py::{rng.choice(_WORDS)} PASSED" for _ in range(8)
        ]
        return "exit code 0\n" + "\n".join(lines)
    if name in ("edit_file", "write_file"):
        return f"ok: {rng.randint(1, 400)} chars changed"
    return "\n".join(
        f"{n:4}  {rng.choice(_WORDS)} = {rng.choice(_WORDS)}({n})" for n in range(1, 30)
    )


def long_session_messages(
    messages: int = 2_000, tool_calls: int = 500, seed: int = 1
) -> list[dict[str, Any]]:
    """`messages` chat messages in exchanges of user → assistant tool call → tool result →
    assistant answer (while tool calls remain), then user → assistant. With the defaults:
    500 exchanges of 4 messages = 2,000 messages with 500 tool calls, ~100k tokens."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    t = 0.0
    calls = 0
    i = 0
    while len(out) < messages:
        i += 1
        t += 30
        out.append({"role": "user", "content": _sentence(rng, rng.randint(6, 20)), "ts": _ts(t)})
        if calls < tool_calls and len(out) + 3 <= messages:
            calls += 1
            name = _TOOLS[calls % len(_TOOLS)]
            call_id = f"call_{calls:04d}"
            args = json.dumps(_tool_args(rng, name, calls))
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": args},
            }
            t += 2
            out.append({"role": "assistant", "content": None, "tool_calls": [call], "ts": _ts(t)})
            t += 1
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": name,
                    "content": _tool_result(rng, name),
                    "status": "ok",
                    "ts": _ts(t),
                }
            )
        if len(out) < messages:
            t += 5
            out.append({"role": "assistant", "content": _assistant_text(rng), "ts": _ts(t)})
    return out[:messages]


def write_session(
    sessions_dir: Path,
    key: str,
    messages: list[dict[str, Any]],
    *,
    model: str = "openai/bench-model",
    title: str | None = None,
) -> Path:
    """Write a session file in the store's format (0600, directory 0700)."""
    sessions_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    created = messages[0]["ts"] if messages else _ts(0)
    meta = {"_type": "meta", "version": 1, "key": key, "created": created, "model": model}
    meta["title"] = title
    path = sessions_dir / key_to_filename(key)
    path.write_bytes(dumps_line(meta) + b"".join(dumps_line(m) for m in messages))
    path.chmod(0o600)
    return path


LONG_KEY = "cli:bench-long-20250101-120000"
SHORT_KEY = "cli:bench-short-20250101-120000"


def write_long_session(sessions_dir: Path, messages: int = 2_000, tool_calls: int = 500) -> str:
    write_session(sessions_dir, LONG_KEY, long_session_messages(messages, tool_calls))
    return LONG_KEY


def write_short_session(sessions_dir: Path, messages: int = 10) -> str:
    write_session(sessions_dir, SHORT_KEY, long_session_messages(messages, messages // 4))
    return SHORT_KEY


def write_many_sessions(sessions_dir: Path, count: int, seed: int = 2) -> list[str]:
    """`count` small sessions (2-12 messages each) with distinct titles; one in a hundred
    mentions NEEDLE in a message body (never in its title). Returns the keys."""
    rng = random.Random(seed)
    keys = []
    for n in range(count):
        key = f"cli:{n:08x}-20250101-{n % 240000:06d}"
        msgs = []
        t = n * 60.0
        for j in range(rng.randint(1, 6)):
            text = _sentence(rng, rng.randint(5, 25))
            if j == 0:
                text = f"Session {n}: {text}"
            msgs.append({"role": "user", "content": text, "ts": _ts(t + j * 10)})
            answer = _paragraph(rng, rng.randint(1, 3))
            if j == 1 and n % 100 == 37:
                answer += f" The {NEEDLE} module handles it."
            msgs.append({"role": "assistant", "content": answer, "ts": _ts(t + j * 10 + 5)})
        if n % 100 == 37 and len(msgs) < 4:
            msgs.append({"role": "user", "content": f"what about {NEEDLE}?", "ts": _ts(t + 99)})
        write_session(sessions_dir, key, msgs)
        keys.append(key)
    return keys


def build_index(sessions_dir: Path) -> float:
    """Let the store build its listing index (as a first `sessions list` would); returns
    the seconds it took (the cold listing)."""
    import time

    from picobot_tui.core.sessions import SessionStore

    t0 = time.perf_counter()
    SessionStore(sessions_dir).list(limit=1)
    return time.perf_counter() - t0


if __name__ == "__main__":
    what, target = sys.argv[1], Path(sys.argv[2])
    if what == "long":
        print(write_long_session(target))
    elif what == "many":
        keys = write_many_sessions(target, int(sys.argv[3]) if len(sys.argv) > 3 else 10_000)
        print(f"{len(keys)} sessions; index built in {build_index(target):.2f} s")
    elif what == "markdown":
        sys.stdout.write(markdown_answer())
    else:
        raise SystemExit("usage: python -m bench.fixtures long|many|markdown DIR [COUNT]")
