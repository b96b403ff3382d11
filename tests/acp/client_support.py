"""The client side of the ACP tests: a recording `acp.Client`, and `picobot acp` spawned as a real
subprocess (the installed console script) against the local scripted model.

Everything here speaks the protocol only (the issue's contract), never the agent's internals:
the tests see what an editor sees. Waits are on events (a recorded update, a response, the
process ending), each bounded by a generous guard so a broken agent fails instead of hanging.

`picobot acp` serves many sessions in one process, and each session reads the config afresh
(its approval setting, its mode, its workspace `cwd`), so the tests that need no process of
their own share one per module: `shared_acp` (module scope: one agent, one recording client,
initialized once) and `shared` (per test: the recording reset, the home's config.json put
back, a workspace of the test's own, its sessions cancelled at the end). The modules that use
them run in one event loop per module (`pytestmark = MODULE_LOOP`). A test that needs a fresh
process (initialize variants, stdin closed, raw stdout, bad framing, always-allow written to
the config) still spawns its own with `spawn_agent`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
import pytest
import pytest_asyncio
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    WriteTextFileResponse,
)

from tests.headless.conftest import SECRET, cli_env, picobot_exe, read_messages
from tests.support.openai_server import OpenAITestServer

WAIT = 60.0
"""Guard on every wait (a failure guard, never an asserted timing: the waits end on events)."""

CLIENT_INFO = Implementation(name="picobot-acp-tests", title="picobot ACP tests", version="1")


# -- the recording client ---------------------------------------------------------------------


@dataclass
class PermissionCall:
    session_id: str
    tool_call: Any
    options: list[PermissionOption]
    answer: asyncio.Future[str | None]
    """The chosen option's kind, or None for the `cancelled` outcome."""

    def option_kinds(self) -> list[str]:
        return [o.kind for o in self.options]


@dataclass
class ClientCall:
    method: str
    params: dict[str, Any]


class RecordingClient:
    """An ACP client that records everything the agent sends it.

    - `wire`: every JSON-RPC message in both directions, in wire order ("in" = from the agent).
    - `updates`: every `session/update` as (sessionId, the SDK's model of the update).
    - `permissions`: every `session/request_permission`; it is answered with the next kind
      queued by `answer_permissions` ("allow_once", "allow_always", "reject_once", ...), or,
      when none is queued, held until `cancel_pending` answers it `cancelled`, as a client
      MUST after it sends `session/cancel`.
    - `calls`: every fs/terminal call; `forbidden`: those the client did not advertise.
    """

    def __init__(self, *, fs: bool = False, terminal: bool = False) -> None:
        self.fs = fs
        self.terminal = terminal
        self.wire: list[tuple[str, dict[str, Any]]] = []
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[PermissionCall] = []
        self.calls: list[ClientCall] = []
        self.forbidden: list[ClientCall] = []
        self.problems: list[str] = []
        self._queued: list[str] = []
        self._tick = asyncio.Event()

    def reset(self) -> None:
        """Forget everything recorded so far (a shared agent's next test starts clean)."""
        self.wire.clear()
        self.updates.clear()
        self.permissions.clear()
        self.calls.clear()
        self.forbidden.clear()
        self.problems.clear()
        self._queued.clear()

    # -- what the tests configure
    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
            terminal=self.terminal,
        )

    def answer_permissions(self, *kinds: str) -> None:
        """Answer the next requests with these option kinds (`allow_always`), or these
        option ids (`id:always_everywhere`)."""
        self._queued.extend(kinds)

    def cancel_pending(self, session_id: str) -> int:
        """Answer every pending permission request of the session `cancelled`."""
        n = 0
        for p in self.permissions:
            if p.session_id == session_id and not p.answer.done():
                p.answer.set_result(None)
                n += 1
        self._poke()
        return n

    # -- waiting
    def _poke(self) -> None:
        self._tick.set()

    async def wait_until(
        self, predicate: Callable[[], Any], what: str, timeout: float = WAIT
    ) -> Any:
        """Return predicate()'s first truthy value; fail (with what was seen) after the guard."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    value = predicate()
                    if value:
                        return value
                    self._tick.clear()
                    await self._tick.wait()
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}; saw:\n{self.summary()}") from None

    def summary(self, last: int = 40) -> str:
        lines = [f"{d} {json.dumps(m)[:300]}" for d, m in self.wire[-last:]]
        return "\n".join(lines) or "(nothing on the wire)"

    # -- what the tests read
    def session_updates(self, session_id: str, kind: str | None = None) -> list[Any]:
        return [
            u
            for sid, u in self.updates
            if sid == session_id and (kind is None or u.session_update == kind)
        ]

    def agent_text(self, session_id: str) -> str:
        return "".join(
            u.content.text
            for u in self.session_updates(session_id, "agent_message_chunk")
            if getattr(u.content, "type", None) == "text"
        )

    def tool_events(self, session_id: str, tool_call_id: str | None = None) -> list[Any]:
        out = [
            u
            for u in self.session_updates(session_id)
            if isinstance(u, ToolCallStart | ToolCallProgress)
        ]
        if tool_call_id is not None:
            out = [u for u in out if u.tool_call_id == tool_call_id]
        return out

    def tool_statuses(self, session_id: str, tool_call_id: str) -> list[str]:
        """The statuses the call went through, in order, repeats folded ("pending" for a
        `tool_call` that gives none, as the schema's default)."""
        seen: list[str] = []
        for u in self.tool_events(session_id, tool_call_id):
            status = u.status or ("pending" if isinstance(u, ToolCallStart) else None)
            if status and (not seen or seen[-1] != status):
                seen.append(status)
        return seen

    def incoming(self, predicate: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        return [m for d, m in self.wire if d == "in" and predicate(m)]

    def response_to(self, request_id: Any) -> dict[str, Any] | None:
        found = self.incoming(lambda m: "method" not in m and m.get("id") == request_id)
        return found[0] if found else None

    # -- the observer the connection calls with every raw message
    def observe(self, event: Any) -> None:
        direction = "in" if event.direction.value == "incoming" else "out"
        self.wire.append((direction, event.message))
        self._poke()

    # -- acp.Client
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self._poke()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        call = PermissionCall(
            session_id, tool_call, options, asyncio.get_running_loop().create_future()
        )
        self.permissions.append(call)
        if self._queued:
            call.answer.set_result(self._queued.pop(0))
        self._poke()
        kind = await call.answer
        if kind is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        # "id:<optionId>" picks that option; a kind picks the first option of that kind
        chosen = [o for o in options if o.kind == kind or f"id:{o.option_id}" == kind]
        if not chosen:
            self.problems.append(f"no {kind!r} option offered: {[o.kind for o in options]}")
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen[0].option_id)
        )

    def _call(self, method: str, advertised: bool, **params: Any) -> None:
        call = ClientCall(method, params)
        self.calls.append(call)
        if not advertised:
            self.forbidden.append(call)
        self._poke()
        if not advertised:
            raise acp.RequestError.method_not_found(method)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self._call("fs/read_text_file", self.fs, session_id=session_id, path=path)
        text = Path(path).read_text()
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit if limit is not None else None])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self._call("fs/write_text_file", self.fs, session_id=session_id, path=path)
        Path(path).write_text(content)
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, **kwargs: Any) -> Any:
        self._call("terminal/create", self.terminal, session_id=session_id, command=command)
        raise acp.RequestError.method_not_found("terminal/create")

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self._call("terminal/output", self.terminal, session_id=session_id)
        raise acp.RequestError.method_not_found("terminal/output")

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self._call("terminal/release", self.terminal, session_id=session_id)
        raise acp.RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self._call("terminal/wait_for_exit", self.terminal, session_id=session_id)
        raise acp.RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self._call("terminal/kill", self.terminal, session_id=session_id)
        raise acp.RequestError.method_not_found("terminal/kill")

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self._call("elicitation/create", False, message=message)
        raise acp.RequestError.method_not_found("elicitation/create")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._call(method, False)
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.calls.append(ClientCall(method, params))


# -- the agent process ------------------------------------------------------------------------


@dataclass
class Agent:
    """One running `picobot acp` and the client's connection to it."""

    conn: Any
    process: asyncio.subprocess.Process
    client: RecordingClient
    home: Path
    workspace: Path
    stderr_path: Path
    stdout: bytearray | None = None
    """Every byte the agent wrote to stdout (only when spawned with `tee=True`)."""
    _raw_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    sessions: list[str] = field(default_factory=list)
    """The ids `new_session` opened."""

    async def initialize(self, version: int = acp.PROTOCOL_VERSION) -> Any:
        return await self.conn.initialize(
            protocol_version=version,
            client_capabilities=self.client.capabilities(),
            client_info=CLIENT_INFO,
        )

    async def new_session(
        self, cwd: Path | None = None, mcp_servers: list[Any] | None = None
    ) -> str:
        resp = await self.conn.new_session(
            cwd=str(cwd or self.workspace), mcp_servers=mcp_servers or []
        )
        self.sessions.append(resp.session_id)
        return resp.session_id

    async def start(self) -> str:
        """initialize, then session/new in the workspace: the session id."""
        await self.initialize()
        return await self.new_session()

    async def prompt(self, session_id: str, *blocks: Any) -> Any:
        return await self.conn.prompt(session_id=session_id, prompt=list(blocks))

    async def say(self, session_id: str, text: str) -> Any:
        return await self.prompt(session_id, acp.text_block(text))

    async def cancel(self, session_id: str) -> None:
        """session/cancel, then answer the session's pending permission requests `cancelled`
        (what the protocol asks of a client that cancels)."""
        await self.conn.cancel(session_id=session_id)
        self.client.cancel_pending(session_id)

    async def send_raw(self, data: bytes) -> None:
        """Bytes straight onto the agent's stdin, bypassing the SDK (whole lines only)."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def raw_request(self, method: str, params: Any) -> dict[str, Any]:
        """A request written by hand (string id, so it never collides with the SDK's), and the
        agent's response to it."""
        rid = f"raw-{next(self._raw_ids)}"
        line = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        await self.send_raw(json.dumps(line).encode() + b"\n")
        return await self.client.wait_until(lambda: self.client.response_to(rid), f"reply to {rid}")

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write_eof()
        with contextlib.suppress(Exception):
            await self.process.stdin.drain()

    async def wait_exit(self, timeout: float = WAIT) -> int:
        try:
            return await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            state = threads_of(self.process.pid)
            # PYTHONFAULTHANDLER (spawn_agent): SIGABRT makes it print every thread's stack
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGABRT)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 10)
            raise AssertionError(
                f"picobot acp did not exit ({state}); stderr:\n{self.stderr()[-6000:]}"
            ) from None

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def session_file(self, session_id: str) -> Path:
        return session_file(self.home, session_id)

    def session_messages(self, session_id: str) -> list[dict[str, Any]]:
        return read_messages(self.session_file(session_id))


def session_file(home: Path, session_id: str) -> Path:
    """The session's JSONL file: picobot's key "channel:id" is stored as channel_id.jsonl."""
    sessions = home / "sessions"
    direct = sessions / (session_id.replace(":", "_", 1) + ".jsonl")
    if direct.exists():
        return direct
    for path in sorted(sessions.glob("*.jsonl")):
        first = path.read_text().splitlines()[:1]
        if first and json.loads(first[0]).get("key") == session_id:
            return path
    raise AssertionError(f"no session file for {session_id!r} in {sessions}")


def threads_of(pid: int) -> str:
    """What a process that does not exit is doing: each thread's name, state and kernel
    wait channel, and its children (for a failure message)."""
    out = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        try:
            comm = (task / "comm").read_text().strip()
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
            wchan = (task / "wchan").read_text().strip()
        except OSError:
            continue
        out.append(f"{comm}:{state}:{wchan}")
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        children, status = [], []
    masks = " ".join(x.replace(":\t", " ") for x in status if x.startswith(("Sig", "ShdPnd")))
    return f"pid {pid}, threads {' '.join(out) or 'gone'}, children {children}, {masks}"


@asynccontextmanager
async def spawn_agent(
    home: Path,
    client: RecordingClient | None = None,
    *,
    args: tuple[str, ...] = (),
    tee: bool = False,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Agent]:
    """`picobot acp` as a real subprocess, connected through the SDK's client side:
    `acp.spawn_agent_process`, or, with `tee=True`, `acp.connect_to_agent` over a pipe whose
    every byte is also kept (to check that stdout holds only JSON-RPC)."""
    client = client or RecordingClient()
    workspace = home / "workspace"
    workspace.mkdir(exist_ok=True)
    exe = [*picobot_exe(), "acp", *args]
    environ = cli_env(home, **(env or {}))
    if environ.get("PICOBOT_SERVER") == "0":
        # A stack of every thread on a fatal signal: wait_exit sends SIGABRT to a cold one
        # that hangs (not warm: the server, started without it, would be passed over).
        environ["PYTHONFAULTHANDLER"] = "1"
    stderr_path = home / f"acp-stderr-{id(client)}.log"
    with stderr_path.open("wb") as stderr:
        if not tee:
            async with acp.spawn_agent_process(
                client,
                exe[0],
                *exe[1:],
                env=environ,
                cwd=workspace,
                transport_kwargs={"stderr": stderr.fileno(), "limit": 50 * 1024 * 1024},
                observers=[client.observe],
            ) as (conn, process):
                yield Agent(conn, process, client, home, workspace, stderr_path)
            return
        process = await asyncio.create_subprocess_exec(
            *exe,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr.fileno(),
            env=environ,
            cwd=workspace,
        )
        assert process.stdout is not None and process.stdin is not None
        raw = bytearray()
        reader = asyncio.StreamReader(limit=50 * 1024 * 1024)

        async def pump() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                raw.extend(chunk)
                reader.feed_data(chunk)
            reader.feed_eof()

        pumping = asyncio.create_task(pump())
        conn = acp.connect_to_agent(client, process.stdin, reader, observers=[client.observe])
        try:
            yield Agent(conn, process, client, home, workspace, stderr_path, stdout=raw)
        finally:
            await conn.close()
            with contextlib.suppress(Exception):
                process.stdin.write_eof()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
            await asyncio.wait_for(pumping, 10)


# -- one agent process shared by a module's tests ------------------------------------------------

MODULE_LOOP = pytest.mark.asyncio(loop_scope="module")
"""The mark of a module that uses `shared`: its tests run in the module's event loop, the one
the shared agent's connection lives in."""


@dataclass
class SharedAgent(Agent):
    """One test's view of the module's shared `picobot acp`: the same connection, process and
    recording client (reset for the test), a workspace of its own. It was initialized once,
    when spawned (`init`, and `init_raw` as it came on the wire), so `start` is `session/new`
    only; a test about `initialize` itself spawns its own process."""

    init: InitializeResponse | None = None
    init_raw: dict[str, Any] = field(default_factory=dict)
    """The response to `initialize` (id 0) as it came on the wire."""
    init_wire: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """The wire of the `initialize` exchange (the recording is reset for each test)."""

    async def initialize(self, version: int = acp.PROTOCOL_VERSION) -> Any:
        raise AssertionError("the shared agent is initialized once: read `init`, or spawn_agent")

    async def start(self) -> str:
        return await self.new_session()


@dataclass
class SharedProcess:
    agent: Agent
    init: InitializeResponse
    init_raw: dict[str, Any]
    init_wire: list[tuple[str, dict[str, Any]]]
    config_text: str


def home_config(server: OpenAITestServer) -> dict[str, Any]:
    """The config.json of tests/headless `configured_home`: openai/ models on the local server."""
    return {
        "agents": {"defaults": {"model": "openai/test-model", "retryBackoff": 0.05}},
        "providers": {"openai": {"apiKey": SECRET, "apiBase": server.url}},
    }


@asynccontextmanager
async def hosted_acp(
    home: Path, server: OpenAITestServer, client: RecordingClient | None = None
) -> AsyncIterator[SharedProcess]:
    """One `picobot acp` over `home` (its config.json written for `server`), initialized
    with `client` (default: no fs, no terminal). It lives in a task of its own, so the SDK's
    context is entered and left by the same task whichever fixture step runs it."""
    (home / "workspace").mkdir(parents=True)
    config_text = json.dumps(home_config(server))
    (home / "config.json").write_text(config_text)
    ready: asyncio.Future[SharedProcess] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def host() -> None:
        try:
            async with spawn_agent(home, client) as agent:
                init = await agent.initialize()
                raw = agent.client.response_to(0)
                assert raw is not None and "result" in raw, agent.client.summary()
                wire = list(agent.client.wire)
                ready.set_result(SharedProcess(agent, init, raw, wire, config_text))
                await stop.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e)
            raise

    hosting = asyncio.create_task(host())
    try:
        yield await ready
    finally:
        stop.set()
        await hosting


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_acp(
    server: OpenAITestServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SharedProcess]:
    """One `picobot acp` for the module, initialized with the default client."""
    async with hosted_acp(tmp_path_factory.mktemp("acp-shared") / "picobot-home", server) as p:
        yield p


@pytest_asyncio.fixture(loop_scope="module")
async def shared(
    shared_acp: SharedProcess, llm_server: OpenAITestServer, request: pytest.FixtureRequest
) -> AsyncIterator[SharedAgent]:
    """The module's agent for one test: the recording reset, the home's config.json as it was
    spawned with (a test may change it before its `session/new`: each session reads it
    afresh), a workspace of the test's own (the default `cwd` of its sessions), and, at the
    end, its sessions cancelled and a request answered, so nothing of it reaches the next."""
    a = shared_acp.agent
    if a.process.returncode is not None:
        raise AssertionError(f"the shared picobot acp exited; stderr:\n{a.stderr()[-3000:]}")
    config_path = a.home / "config.json"
    config_path.write_text(shared_acp.config_text)
    a.client.reset()
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)[:100]
    workspace = a.home / "workspaces" / name
    workspace.mkdir(parents=True, exist_ok=True)
    view = SharedAgent(
        a.conn,
        a.process,
        a.client,
        a.home,
        workspace,
        a.stderr_path,
        _raw_ids=a._raw_ids,
        init=shared_acp.init,
        init_raw=shared_acp.init_raw,
        init_wire=shared_acp.init_wire,
    )
    try:
        yield view
    finally:
        if a.process.returncode is None:
            for sid in view.sessions:
                await view.cancel(sid)
            await view.raw_request("_picobot_tests/barrier", {})
        config_path.write_text(shared_acp.config_text)


def non_jsonrpc_lines(stdout: bytes) -> list[bytes]:
    """The lines of `stdout` that are not one JSON-RPC 2.0 message each."""
    bad = []
    for line in stdout.split(b"\n"):
        if not line.strip():
            if line:
                bad.append(line)
            continue
        try:
            msg = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            bad.append(line)
            continue
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            bad.append(line)
    return bad


# -- config and scripted-model helpers --------------------------------------------------------


def set_tools(home: Path, **tools: Any) -> None:
    """Merge keys into `tools` of the home's config.json (camelCase, as a user writes them)."""
    path = home / "config.json"
    config = json.loads(path.read_text())
    config.setdefault("tools", {}).update(tools)
    path.write_text(json.dumps(config))


def config(home: Path) -> dict[str, Any]:
    return json.loads((home / "config.json").read_text())


def last_user_text(request: dict[str, Any]) -> str:
    """The text of the last user message of a chat-completions request body."""
    for m in reversed(request.get("messages", [])):
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


class Gate:
    """A threading.Event a scripted step (run in the test server's thread) can wait on, so a
    reply is held until the test has seen something happen."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def open(self) -> None:
        self._event.set()

    def wait(self, timeout: float = WAIT) -> bool:
        return self._event.wait(timeout)
