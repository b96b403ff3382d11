"""Client capabilities (issue 13): with `fs.readTextFile` / `fs.writeTextFile` advertised, the
file tools go through the client (`fs/read_text_file`, `fs/write_text_file`), so the model reads
the editor's unsaved buffer and its changes land in the editor, not on disk; without them the
disk is used and the client's fs methods are never called.

`picobot acp` runs as a real subprocess driven by the SDK's client side. The client here keeps
editor buffers in memory: a buffer that differs from the file on disk is how the tests tell
which one the agent used. Every fs call is recorded, and one the client did not advertise is
answered "method not found" and recorded as forbidden.

The five tests of a client that advertises both fs methods share one `picobot acp` (this
module's `shared_acp`, an editor client's, under client_support's `shared`: a workspace and
sessions of each test's own, the recording and buffers cleared): each process pays ~5 s of
CPU for LiteLLM's import. The other capability sets spawn their own."""

# ruff: noqa: F811 (the fixtures below are imported from tests/headless/conftest.py)
from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
import pytest
import pytest_asyncio
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    WriteTextFileResponse,
)

from tests.acp.client_support import (
    MODULE_LOOP,
    RecordingClient,
    SharedAgent,
    SharedProcess,
    hosted_acp,
    set_tools,
    shared,
    spawn_agent,
)
from tests.headless.conftest import (  # noqa: F401 (fixtures)
    configured_home,
    llm_server,
    server,
)
from tests.support.openai_server import OpenAITestServer
from tests.support.openai_steps import text_reply, tool_call_reply

pytestmark = MODULE_LOOP
__all__ = ["shared"]  # the fixture

READ, WRITE = "fs/read_text_file", "fs/write_text_file"


class EditorClient(RecordingClient):
    """A client with editor buffers: `buffers` maps an absolute path to the text an editor
    holds for it (unsaved); a read of a path without one opens the file from disk; a write
    replaces the buffer and leaves the disk alone (the user saves when they like)."""

    def __init__(self, *, reads: bool, writes: bool) -> None:
        super().__init__(fs=reads or writes)
        self.reads = reads
        self.writes = writes
        self.buffers: dict[Path, str] = {}

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.reads, write_text_file=self.writes),
            terminal=False,
        )

    def fs_calls(self) -> list[tuple[str, Path]]:
        return [
            (c.method, Path(c.params["path"])) for c in self.calls if c.method.startswith("fs/")
        ]

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self._call(READ, self.reads, session_id=session_id, path=path)
        if line is not None or limit is not None:
            self.problems.append(f"read_text_file asked for a window: line={line} limit={limit}")
        text = self.buffers.get(Path(path))
        return ReadTextFileResponse(content=text if text is not None else Path(path).read_text())

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self._call(WRITE, self.writes, session_id=session_id, path=path)
        self.buffers[Path(path)] = content
        return WriteTextFileResponse()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_acp(
    server: OpenAITestServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SharedProcess]:
    """client_support's `shared_acp`, for an editor client with both fs methods."""
    home = tmp_path_factory.mktemp("acp-fs-shared") / "picobot-home"
    async with hosted_acp(home, server, EditorClient(reads=True, writes=True)) as p:
        yield p


@pytest.fixture
def editor(shared: SharedAgent) -> tuple[SharedAgent, EditorClient]:
    """The shared agent and its editor client, no buffer open yet."""
    client = shared.client
    assert isinstance(client, EditorClient) and client.reads and client.writes
    client.buffers.clear()
    return shared, client


def writes(client: EditorClient) -> list[Path]:
    return [p for m, p in client.fs_calls() if m == WRITE]


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results the model was sent, in order."""
    return [str(m.get("content")) for m in body["messages"] if m.get("role") == "tool"]


def ws_file(ws: Path, name: str, text: str) -> Path:
    ws.mkdir(exist_ok=True)
    path = ws / name
    path.write_text(text)
    return path.resolve()


# -- fs advertised ------------------------------------------------------------------------------


async def test_read_file_returns_the_clients_buffer(editor, llm_server) -> None:
    agent, client = editor
    path = ws_file(agent.workspace, "app.py", "x = 'ON DISK'\n")
    client.buffers[path] = "x = 'UNSAVED BUFFER'\n"
    llm_server.script([tool_call_reply("read_file", {"path": "app.py"}), text_reply("read it")])
    sid = await agent.start()
    resp = await agent.say(sid, "read app.py")
    assert resp.stop_reason == "end_turn"
    [result] = tool_results(llm_server.last_body)
    assert "UNSAVED BUFFER" in result and "ON DISK" not in result
    assert client.fs_calls() == [(READ, path)]
    assert client.calls[0].params["session_id"] == sid
    assert not client.forbidden and not client.problems


async def test_write_and_edit_land_in_the_client_not_on_disk(editor, llm_server) -> None:
    agent, client = editor
    set_tools(agent.home, approval="auto")  # read by the session/new below
    app = ws_file(agent.workspace, "app.py", "y = 1  # on disk\n")
    client.buffers[app] = "y = 2  # unsaved\n"
    new = (agent.workspace / "pkg" / "new.py").resolve()
    llm_server.script(
        [
            tool_call_reply("write_file", {"path": "pkg/new.py", "content": "z = 3\n"}, id="w"),
            tool_call_reply(
                "edit_file", {"path": "app.py", "old_text": "y = 2", "new_text": "y = 20"}, id="e"
            ),
            text_reply("done"),
        ]
    )
    sid = await agent.start()
    resp = await agent.say(sid, "write and edit")
    assert resp.stop_reason == "end_turn"
    results = tool_results(llm_server.last_body)
    assert results[0].startswith("created pkg/new.py"), results
    assert results[1].startswith("edited app.py at line 1"), results
    # The editor holds both changes; the disk holds neither (the folder is made for it).
    assert client.buffers[new] == "z = 3\n"
    assert client.buffers[app] == "y = 20  # unsaved\n"
    assert not new.exists() and new.parent.is_dir()
    assert app.read_text() == "y = 1  # on disk\n"
    # (Other readers of the prior text, checkpoints for one, may read the buffer too.)
    assert writes(client) == [new, app]
    assert {p for m, p in client.fs_calls() if m == READ} <= {new, app}
    assert client.fs_calls().index((READ, app)) < client.fs_calls().index((WRITE, app))
    assert not client.forbidden and not client.problems


async def test_the_permission_request_shows_the_buffers_diff(editor, llm_server) -> None:
    """The approval preview (what the TUI modal shows) diffs the text the edit applies to."""
    agent, client = editor
    app = ws_file(agent.workspace, "app.py", "value = 'disk'\n")
    client.buffers[app] = "value = 'buffer'\n"
    client.answer_permissions("allow_once")
    llm_server.script(
        [
            tool_call_reply(
                "edit_file", {"path": "app.py", "old_text": "'buffer'", "new_text": "'edited'"}
            ),
            text_reply("edited"),
        ]
    )
    sid = await agent.start()
    resp = await agent.say(sid, "edit")
    assert resp.stop_reason == "end_turn"
    [permission] = client.permissions
    shown = json.dumps([c.model_dump(mode="json") for c in permission.tool_call.content or []])
    assert "-value = 'buffer'" in shown and "+value = 'edited'" in shown
    assert "disk" not in shown
    # The tool_call's own diff block agrees with the permission preview: the buffer's text.
    start = client.tool_events(sid)[0]
    [diff] = [c for c in start.content or [] if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == ("value = 'buffer'\n", "value = 'edited'\n")
    assert client.buffers[app] == "value = 'edited'\n"
    assert app.read_text() == "value = 'disk'\n"
    assert not client.forbidden


async def test_guards_hold_before_the_client_is_asked(editor, llm_server, tmp_path: Path) -> None:
    """Outside the workspace (an escaping symlink) and a binary file are refused as without
    the client, and the client is never asked about them."""
    agent, client = editor
    set_tools(agent.home, approval="auto")  # read by the session/new below
    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET OUTSIDE\n")
    ws = agent.workspace
    (ws / "link.txt").symlink_to(outside)
    (ws / "blob.bin").write_bytes(b"\x7fELF\x00\x00\x01")
    llm_server.script(
        [
            tool_call_reply("read_file", {"path": "link.txt"}, id="c1"),
            tool_call_reply("read_file", {"path": "blob.bin"}, id="c2"),
            tool_call_reply("write_file", {"path": "link.txt", "content": "x"}, id="c3"),
            text_reply("refused"),
        ]
    )
    sid = await agent.start()
    resp = await agent.say(sid, "try")
    assert resp.stop_reason == "end_turn"
    results = tool_results(llm_server.last_body)
    assert "outside the workspace" in results[0]
    assert "binary file" in results[1]
    assert "outside the workspace" in results[2]
    assert outside.read_text() == "SECRET OUTSIDE\n"
    assert client.fs_calls() == []


async def test_a_resource_link_is_read_through_the_client(editor, llm_server) -> None:
    agent, client = editor
    notes = ws_file(agent.workspace, "notes.txt", "NOTES ON DISK\n")
    client.buffers[notes] = "NOTES IN THE BUFFER 4412\n"
    llm_server.script([text_reply("ok")])
    sid = await agent.start()
    resp = await agent.prompt(
        sid,
        acp.text_block("What do the notes say?"),
        acp.resource_link_block("notes.txt", notes.as_uri(), mime_type="text/plain"),
    )
    assert resp.stop_reason == "end_turn"
    sent = json.dumps(llm_server.last_body["messages"])
    assert "NOTES IN THE BUFFER 4412" in sent and "NOTES ON DISK" not in sent
    assert client.fs_calls() == [(READ, notes)]


# -- one capability, or none ------------------------------------------------------------------


async def test_read_only_client_reads_its_buffer_and_the_edit_goes_to_disk(
    configured_home: Path, llm_server
) -> None:
    """The client is used for what it advertises, the disk for the rest."""
    set_tools(configured_home, approval="auto")
    app = ws_file(configured_home / "workspace", "app.py", "a = 'disk'\n")
    client = EditorClient(reads=True, writes=False)
    client.buffers[app] = "a = 'buffer'\n"
    llm_server.script(
        [
            tool_call_reply(
                "edit_file", {"path": "app.py", "old_text": "'buffer'", "new_text": "'both'"}
            ),
            text_reply("done"),
        ]
    )
    async with spawn_agent(configured_home, client) as agent:
        sid = await agent.start()
        resp = await agent.say(sid, "edit")
    assert resp.stop_reason == "end_turn"
    assert app.read_text() == "a = 'both'\n"
    assert writes(client) == []
    assert {p for _, p in client.fs_calls()} == {app}
    assert not client.forbidden


@pytest.mark.parametrize("advertised", ["nothing", "fs false"])
async def test_without_fs_the_disk_is_used_and_the_client_never_called(
    configured_home: Path, llm_server, advertised: str
) -> None:
    set_tools(configured_home, approval="auto")
    app = ws_file(configured_home / "workspace", "app.py", "b = 'disk'\n")
    client = EditorClient(reads=False, writes=False)
    if advertised == "nothing":
        client.capabilities = lambda: ClientCapabilities()  # type: ignore[method-assign]
    client.buffers[app] = "b = 'buffer'\n"  # an editor's buffer the agent must not see
    llm_server.script(
        [
            tool_call_reply("read_file", {"path": "app.py"}, id="r"),
            tool_call_reply(
                "edit_file", {"path": "app.py", "old_text": "'disk'", "new_text": "'edit'"}, id="e"
            ),
            tool_call_reply("write_file", {"path": "new.txt", "content": "n\n"}, id="w"),
            text_reply("done"),
        ]
    )
    async with spawn_agent(configured_home, client) as agent:
        sid = await agent.start()
        resp = await agent.prompt(
            sid,
            acp.text_block("go"),
            acp.resource_link_block("app.py", app.as_uri(), mime_type="text/x-python"),
        )
    assert resp.stop_reason == "end_turn"
    results = tool_results(llm_server.last_body)
    assert "b = 'disk'" in results[0] and "buffer" not in results[0]
    assert app.read_text() == "b = 'edit'\n"
    assert (configured_home / "workspace" / "new.txt").read_text() == "n\n"
    assert "buffer" not in json.dumps(llm_server.last_body["messages"])
    assert client.fs_calls() == [] and client.forbidden == []
