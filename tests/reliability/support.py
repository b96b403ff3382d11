"""Shared helpers of the reliability suites: checking that a session file and a conversation
are consistent, driving the console script, and routing one shared test server between many
concurrent runs."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pty
import subprocess
import threading
import time
import tty as termios_tty
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from picobot_tui.core.history import PROVIDER_KEYS
from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.sessions.files import parse_session_bytes
from tests.headless.conftest import cli_env, home_workspace, picobot_exe
from tests.support.openai_server import ErrorReply, Reply, Reset, text_reply
from tests.support.sent import as_stored

KEY = "sk-reliab-SECRET-0f1e2d3c4b5a69788796a5b4"
"""The API key put in config (and env) by these suites; it must never be written anywhere."""

TORN_TAIL = "torn last line"


# -- conversations --------------------------------------------------------------------------


def conversation_problems(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Why a provider would reject this conversation ([] when it is valid): every assistant
    `tool_calls` must be followed at once by one `tool` result per call, and every `tool`
    message must answer a call of the assistant message right before its run of results."""
    problems: list[str] = []
    open_ids: list[str] = []
    answered: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            problems.append(f"#{i}: unknown role {role!r}")
            continue
        if role == "tool":
            tid = m.get("tool_call_id")
            if tid not in open_ids or tid in answered:
                problems.append(f"#{i}: orphan tool result {tid!r}")
            answered.add(tid)
            continue
        missing = [c for c in open_ids if c not in answered]
        if missing:
            problems.append(f"#{i}: tool calls {missing} have no result before a {role} message")
        open_ids, answered = [], set()
        if role == "assistant":
            for call in m.get("tool_calls") or []:
                if not isinstance(call, dict) or not call.get("id"):
                    problems.append(f"#{i}: tool call without id")
                    continue
                fn = call.get("function") or {}
                if not isinstance(fn.get("arguments", ""), str) or not fn.get("name"):
                    problems.append(f"#{i}: malformed tool call {call!r}")
                open_ids.append(call["id"])
            if m.get("content") is None and not m.get("tool_calls"):
                problems.append(f"#{i}: assistant message with neither content nor tool calls")
    if [c for c in open_ids if c not in answered]:
        problems.append("the conversation ends with tool calls that have no result")
    return problems


def provider_view(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The provider-facing keys of each message (LiteLLM drops a `content: null`), the
    user's words without the time line a request adds to its latest one."""
    return [
        {k: v for k, v in m.items() if k in PROVIDER_KEYS and (v is not None or k != "content")}
        for m in as_stored(list(messages))
    ]


# -- session files --------------------------------------------------------------------------


@dataclass
class SessionCheck:
    key: str
    messages: list[dict[str, Any]]
    warnings: list[str]
    damaged: list[str] = field(default_factory=list)


def check_session_file(path: Path, *, lock: bool = True) -> SessionCheck:
    """Parse a session file the way the store does; anything but a torn last line counts as
    damage, and so does an exception from the store itself. With `lock`, also open it (the
    lock must be free: nobody else holds the session)."""
    data = path.read_bytes()
    parsed = parse_session_bytes(data, path.name)
    key = parsed.meta.get("key") or path.stem.replace("_", ":", 1)
    out = SessionCheck(key, parsed.messages, parsed.warnings)
    out.damaged += [w for w in parsed.warnings if TORN_TAIL not in w]
    if data and not parsed.meta:
        out.damaged.append("no metadata header")
    store = SessionStore(path.parent)
    try:
        if store.load_messages(key) != parsed.messages:
            out.damaged.append("the store reads different messages than the file holds")
        if lock:
            with store.open(key, create=False) as session:  # the lock is free after a kill
                if len(session.messages) != len(parsed.messages):
                    out.damaged.append("open() sees a different number of messages")
    except Exception as e:  # noqa: BLE001 - any exception is the finding
        out.damaged.append(f"{type(e).__name__}: {e}")
    return out


def session_paths(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*_*.jsonl"))


def prefix_lost(sent: Sequence[dict[str, Any]], stored: Sequence[dict[str, Any]]) -> list[str]:
    """Messages the provider was sent (so they were complete) that the session lacks.
    `sent` excludes the system prompt. Stored extras after the prefix are fine."""
    stored_view = provider_view(stored)
    lost = []
    for i, m in enumerate(provider_view(sent)):
        if i >= len(stored_view) or stored_view[i] != m:
            lost.append(f"#{i} {m.get('role')}: {str(m.get('content'))[:60]!r}")
    return lost


# -- a server shared by concurrent runs -----------------------------------------------------


def first_user_text(body: dict[str, Any]) -> str:
    for m in body.get("messages") or []:
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            return m["content"]
    return ""


def last_user_text(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            return m["content"]
    return ""


def case_of(text: str) -> str:
    """Runs tag their messages "<case-id>: ..."; the id routes the server's replies."""
    return text.split(":", 1)[0].strip()


class Router:
    """A server `default` step that serves each case its own script, so many runs can share
    one server at once. A case's script is consumed in order of its requests; a message
    whose text starts with "resume" gets `resume_reply`. Each case's requests are kept."""

    def __init__(self, resume_reply: Callable[[], Reply] | None = None) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, list[Reply | ErrorReply | Reset]] = {}
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.arrived: dict[str, list[float]] = {}
        self.resume_reply = resume_reply or (lambda: text_reply("resumed fine", chunk_size=4))

    def add(self, case: str, steps: Sequence[Reply | ErrorReply | Reset]) -> None:
        with self._lock:
            self._scripts[case] = list(steps)
            self.requests[case] = []
            self.arrived[case] = []

    def __call__(self, body: dict[str, Any]) -> Reply | ErrorReply | Reset:
        case = case_of(first_user_text(body))
        with self._lock:
            self.requests.setdefault(case, []).append(body)
            self.arrived.setdefault(case, []).append(time.monotonic())
            if last_user_text(body).startswith("resume"):
                return self.resume_reply()
            steps = self._scripts.get(case)
            if steps:
                return steps.pop(0)
        return text_reply(f"{case}: no more script", chunk_size=8)

    def count(self, case: str) -> int:
        with self._lock:
            return len(self.requests.get(case, []))

    def of(self, case: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.requests.get(case, []))


@contextlib.contextmanager
def saved_logging() -> Iterator[None]:
    """run_message() configures picobot's loggers for a CLI run; undo that afterwards."""
    names = ("picobot", "LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "openai")
    saved = {
        n: (logging.getLogger(n).handlers[:], logging.getLogger(n).propagate,
            logging.getLogger(n).level)
        for n in names
    }  # fmt: skip
    try:
        yield
    finally:
        for n, (handlers, propagate, level) in saved.items():
            logger = logging.getLogger(n)
            for h in logger.handlers:
                if h not in handlers:
                    h.close()
            logger.handlers, logger.propagate, logger.level = handlers, propagate, level


# -- the console script ---------------------------------------------------------------------


def write_config(home: Path, api_base: str, **defaults: Any) -> Path:
    """A config pointing openai/ models at the local server, with a key to keep secret."""
    home.mkdir(parents=True, exist_ok=True)
    agent = {"model": "openai/test-model", "retryBackoff": 0.01, **defaults}
    config = {
        "agents": {"defaults": agent},
        "providers": {"openai": {"apiKey": KEY, "apiBase": api_base}},
    }
    path = home / "config.json"
    path.write_text(json.dumps(config, indent=2))
    return path


class Proc:
    """A running `picobot` with stdout/stderr collected by threads (so pipes never block)."""

    def __init__(
        self,
        home: Path,
        args: Sequence[str],
        stdin: bool = False,
        umask: int = -1,
        tty: bool = False,
        **env: str,
    ) -> None:
        """`tty`: stdout is a terminal (a raw pty), as a user's is. `-m` streams tokens only
        to a terminal; to a pipe it prints the final answer once, at the end, so a test that
        must act while text streams needs `tty=True`."""
        master = slave = -1
        if tty:
            master, slave = pty.openpty()
            termios_tty.setraw(slave)  # no \n -> \r\n: the bytes are what picobot wrote
        self.popen = subprocess.Popen(
            [*picobot_exe(), *args],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=slave if tty else subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(home, **env),
            umask=umask,
            cwd=home_workspace(home),
        )
        if tty:
            os.close(slave)
        self.out = bytearray()
        self.err = bytearray()
        self._cond = threading.Condition()
        assert self.popen.stderr is not None
        out_fd = master if tty else self.popen.stdout.fileno()  # type: ignore[union-attr]
        self._threads = [
            threading.Thread(target=self._pump, args=(out_fd, self.out), daemon=True),
            threading.Thread(
                target=self._pump, args=(self.popen.stderr.fileno(), self.err), daemon=True
            ),
        ]
        for t in self._threads:
            t.start()

    def _pump(self, fd: int, buf: bytearray) -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # a pty's master reads EIO once the child has closed it
                chunk = b""
            with self._cond:
                if not chunk:
                    self._cond.notify_all()
                    return
                buf += chunk
                self._cond.notify_all()

    def send(self, obj: dict[str, Any] | str) -> None:
        assert self.popen.stdin is not None
        line = obj if isinstance(obj, str) else json.dumps(obj)
        self.popen.stdin.write(line.encode() + b"\n")
        self.popen.stdin.flush()

    def close_stdin(self) -> None:
        if self.popen.stdin is not None:
            self.popen.stdin.close()

    def wait_until(self, condition: Callable[[], Any], timeout: float = 60) -> Any:
        """Block until condition() is truthy (re-checked on output and every 5 ms)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                result = condition()
                if result:
                    return result
                if self.popen.poll() is not None and not any(t.is_alive() for t in self._threads):
                    result = condition()
                    if result:
                        return result
                    raise AssertionError(
                        f"picobot exited ({self.popen.returncode}) before the condition held:\n"
                        f"stdout={bytes(self.out)[-2000:]!r}\nstderr={bytes(self.err)[-2000:]!r}"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"timed out waiting; stdout={bytes(self.out)[-2000:]!r}\n"
                        f"stderr={bytes(self.err)[-2000:]!r}"
                    )
                self._cond.wait(min(left, 0.005))

    def events(self) -> list[dict[str, Any]]:
        """The --json events printed so far (complete lines only)."""
        with self._cond:
            data = bytes(self.out)
        out = []
        for line in data.split(b"\n")[:-1]:
            if line.strip():
                out.append(json.loads(line))
        return out

    def finish(self, timeout: float = 60) -> int:
        code = self.popen.wait(timeout=timeout)
        for t in self._threads:
            t.join(timeout=10)
        return code

    @property
    def stdout(self) -> str:
        return bytes(self.out).decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return bytes(self.err).decode("utf-8", "replace")
