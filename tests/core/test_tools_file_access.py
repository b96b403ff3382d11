"""ToolContext.files: read_file, write_file and edit_file through a FileAccess (an editor's
buffers) when one is set, with every guard of the disk path kept (confinement, directories,
binary and non-UTF-8 files, windows, scrubbing, previews), and the disk for whatever the
FileAccess does not offer. The FileAccess here is a small in-memory one: it tests our seam."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.events import ApprovalRequested, ToolCallFinished
from picobot_tui.core.llm import scripted
from picobot_tui.core.llm.scripted import ScriptedModel
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.settings import ToolsConfig
from picobot_tui.core.tools.base import ToolContext, ToolError
from picobot_tui.core.tools.file_access import current_text
from picobot_tui.core.tools.registry import ToolRegistry, default_registry
from picobot_tui.run.runtime import build_runtime


@dataclass
class Buffers:
    """Editor buffers by resolved path; a path without a buffer reads the disk (an editor
    opens the file). Records every call."""

    reads: bool = True
    writes: bool = True
    texts: dict[Path, str] = field(default_factory=dict)
    calls: list[tuple[str, Path]] = field(default_factory=list)

    async def read_text(self, path: Path) -> str:
        assert self.reads, "read_text called though not offered"
        self.calls.append(("read", path))
        if path in self.texts:
            return self.texts[path]
        return path.read_text(encoding="utf-8")

    async def write_text(self, path: Path, text: str) -> None:
        assert self.writes, "write_text called though not offered"
        self.calls.append(("write", path))
        self.texts[path] = text


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w.resolve()


@pytest.fixture
def buffers() -> Buffers:
    return Buffers()


@pytest.fixture
def reg(ws: Path, buffers: Buffers) -> ToolRegistry:
    return default_registry(ToolContext(ws, ToolsConfig(), files=buffers))


# -- read_file ---------------------------------------------------------------------------


async def test_read_gives_the_buffer_not_the_disk(ws, buffers, reg):
    (ws / "f.txt").write_text("on disk\n")
    buffers.texts[ws / "f.txt"] = "unsaved\nedit\n"
    r = await reg.execute("read_file", {"path": "f.txt"})
    assert r.ok, r.content
    assert r.content == "unsaved\nedit"
    assert buffers.calls == [("read", ws / "f.txt")]


async def test_read_windows_the_buffer_like_the_disk(ws, buffers, reg):
    (ws / "f.txt").write_text("x\n")
    buffers.texts[ws / "f.txt"] = "".join(f"line {i}\n" for i in range(1, 101))
    r = await reg.execute("read_file", {"path": "f.txt", "offset": 10, "limit": 3})
    body, note = r.content.split("\n\n[")
    assert body.splitlines() == ["line 10", "line 11", "line 12"]
    assert "showing lines 10-12 of 100; use offset=13" in note
    r = await reg.execute("read_file", {"path": "f.txt", "offset": 200})
    assert not r.ok and "offset 200 is past the end of f.txt (100 lines)" in r.content


async def test_read_of_an_empty_buffer(ws, buffers, reg):
    (ws / "f.txt").write_text("saved text\n")
    buffers.texts[ws / "f.txt"] = ""
    r = await reg.execute("read_file", {"path": "f.txt"})
    assert r.content == "(f.txt is empty)"


async def test_read_scrubs_secrets_in_the_buffer(ws, buffers):
    secret = "sk-test-0123456789abcdef0123"
    reg = default_registry(
        ToolContext(ws, ToolsConfig(), files=buffers), scrub=Scrubber([secret], include_env=False)
    )
    (ws / "f.txt").write_text("clean\n")
    buffers.texts[ws / "f.txt"] = f"key = {secret}\n"
    r = await reg.execute("read_file", {"path": "f.txt"})
    assert r.ok and secret not in r.content


async def test_read_refuses_a_nul_in_the_buffer(ws, buffers, reg):
    (ws / "f.txt").write_text("text\n")
    buffers.texts[ws / "f.txt"] = "a\x00b"
    r = await reg.execute("read_file", {"path": "f.txt"})
    assert not r.ok and "binary file" in r.content


@pytest.mark.parametrize("case", ["outside", "escaping link", "missing", "directory", "binary"])
async def test_read_guards_never_reach_the_buffers(ws, buffers, reg, case):
    outside = ws.parent / "secret.txt"
    outside.write_text("top secret\n")
    (ws / "d").mkdir()
    (ws / "bin.dat").write_bytes(b"\x89PNG\x00\x01")
    (ws / "link").symlink_to(outside)
    path = {
        "outside": str(outside),
        "escaping link": "link",
        "missing": "nope.txt",
        "directory": "d",
        "binary": "bin.dat",
    }[case]
    r = await reg.execute("read_file", {"path": path})
    disk = await default_registry(ToolContext(ws, ToolsConfig())).execute(
        "read_file", {"path": path}
    )
    assert not r.ok and r == disk
    expected = {
        "outside": "outside the workspace",
        "escaping link": "outside the workspace",
        "missing": "file not found",
        "directory": "is a directory",
        "binary": "binary file",
    }[case]
    assert expected in r.content
    assert buffers.calls == []


async def test_a_buffer_that_fails_is_an_error_result(ws, reg, buffers):
    (ws / "f.txt").write_text("x\n")

    async def refuse(path: Path) -> str:
        raise ToolError(f"the editor could not read {path}: gone")

    buffers.read_text = refuse  # type: ignore[method-assign]
    r = await reg.execute("read_file", {"path": "f.txt"})
    assert not r.ok and "the editor could not read" in r.content


# -- write_file --------------------------------------------------------------------------


async def test_write_lands_in_the_buffer_and_not_on_disk(ws, buffers, reg):
    (ws / "f.txt").write_text("old\n")
    r = await reg.execute("write_file", {"path": "f.txt", "content": "new\ntext\n"})
    assert r.ok and r.content == "overwrote f.txt (2 lines, 9 bytes)"
    assert buffers.texts[ws / "f.txt"] == "new\ntext\n"
    assert (ws / "f.txt").read_text() == "old\n"


async def test_write_of_a_new_file_makes_its_folders_for_the_editor(ws, buffers, reg):
    r = await reg.execute("write_file", {"path": "a/b/new.txt", "content": "hi\n"})
    assert r.ok and r.content == "created a/b/new.txt (1 lines, 3 bytes)"
    assert (ws / "a" / "b").is_dir()
    assert buffers.texts[ws / "a/b/new.txt"] == "hi\n"
    assert not (ws / "a/b/new.txt").exists()


@pytest.mark.parametrize("path", ["../x.txt", "d", "plain/x.txt", "plain/sub/x.txt"])
async def test_write_guards_never_reach_the_buffers(ws, buffers, reg, path):
    """Outside, a directory, a parent that is a file: the disk's own error, word for word."""
    (ws / "d").mkdir()
    (ws / "plain").write_text("x")
    r = await reg.execute("write_file", {"path": path, "content": "y"})
    disk = await default_registry(ToolContext(ws, ToolsConfig())).execute(
        "write_file", {"path": path, "content": "y"}
    )
    assert not r.ok and r == disk
    assert buffers.calls == []


async def test_replacing_a_binary_file_stays_on_disk(ws, buffers, reg):
    (ws / "img.bin").write_bytes(b"\xff\xfe\x00\x01")
    r = await reg.execute("write_file", {"path": "img.bin", "content": "text now\n"})
    assert r.ok
    assert (ws / "img.bin").read_text() == "text now\n"
    assert buffers.calls == []


# -- edit_file ---------------------------------------------------------------------------


async def test_edit_applies_to_the_buffer_and_lands_in_it(ws, buffers, reg):
    (ws / "f.txt").write_text("alpha\nbeta\n")
    buffers.texts[ws / "f.txt"] = "alpha\nbeta\nunsaved gamma\n"
    args = {"path": "f.txt", "old_text": "unsaved gamma", "new_text": "delta"}
    r = await reg.execute("edit_file", args)
    assert r.ok, r.content
    assert r.content == "edited f.txt at line 3: replaced 1 line(s) with 1 line(s)"
    assert buffers.texts[ws / "f.txt"] == "alpha\nbeta\ndelta\n"
    assert (ws / "f.txt").read_text() == "alpha\nbeta\n"


async def test_edit_matches_the_buffer_not_the_disk(ws, buffers, reg):
    (ws / "f.txt").write_text("only on disk\n")
    buffers.texts[ws / "f.txt"] = "the buffer\n"
    r = await reg.execute(
        "edit_file", {"path": "f.txt", "old_text": "only on disk", "new_text": "x"}
    )
    assert not r.ok and "0 matches" in r.content
    assert ("write", ws / "f.txt") not in buffers.calls


@pytest.mark.parametrize("case", ["missing", "not utf-8", "outside", "identical"])
async def test_edit_guards_never_reach_the_buffers(ws, buffers, reg, case):
    (ws / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    path = {"missing": "nope.txt", "not utf-8": "latin1.txt", "outside": "../x.txt"}
    old, new = ("a", "a") if case == "identical" else ("caf", "cafe")
    args = {"path": path.get(case, "latin1.txt"), "old_text": old, "new_text": new}
    r = await reg.execute("edit_file", args)
    disk = await default_registry(ToolContext(ws, ToolsConfig())).execute("edit_file", args)
    assert not r.ok and r == disk
    assert {
        "missing": "file not found",
        "not utf-8": "not UTF-8 text",
        "outside": "outside the workspace",
        "identical": "identical",
    }[case] in r.content
    assert buffers.calls == []


# -- one side offered, the other on disk ------------------------------------------------


async def test_reads_offered_writes_not_the_edit_lands_on_disk(ws):
    buffers = Buffers(writes=False)
    reg = default_registry(ToolContext(ws, ToolsConfig(), files=buffers))
    (ws / "f.txt").write_text("disk\n")
    buffers.texts[ws / "f.txt"] = "buffer\n"
    r = await reg.execute("edit_file", {"path": "f.txt", "old_text": "buffer", "new_text": "B"})
    assert r.ok, r.content
    assert (ws / "f.txt").read_text() == "B\n"
    assert buffers.calls == [("read", ws / "f.txt")]
    r = await reg.execute("write_file", {"path": "g.txt", "content": "g\n"})
    assert r.ok and (ws / "g.txt").read_text() == "g\n"
    assert all(kind == "read" for kind, _ in buffers.calls)


async def test_writes_offered_reads_not_the_disk_is_read(ws):
    buffers = Buffers(reads=False)
    reg = default_registry(ToolContext(ws, ToolsConfig(), files=buffers))
    (ws / "f.txt").write_text("disk\n")
    r = await reg.execute("read_file", {"path": "f.txt"})
    assert r.content == "disk"
    r = await reg.execute("edit_file", {"path": "f.txt", "old_text": "disk", "new_text": "D"})
    assert r.ok, r.content
    assert buffers.texts[ws / "f.txt"] == "D\n"
    assert (ws / "f.txt").read_text() == "disk\n"
    assert buffers.calls == [("write", ws / "f.txt")]


# -- previews and the text a diff starts from ------------------------------------------


async def test_previews_diff_the_buffer(ws, buffers, reg):
    (ws / "f.txt").write_text("disk line\n")
    buffers.texts[ws / "f.txt"] = "buffer line\n"
    p = await reg.approval_preview_async("write_file", {"path": "f.txt", "content": "new\n"})
    assert "-buffer line" in p.text and "+new" in p.text and "disk line" not in p.text
    p = await reg.approval_preview_async(
        "edit_file", {"path": "f.txt", "old_text": "buffer", "new_text": "edited"}
    )
    assert "-buffer line" in p.text and "+edited line" in p.text
    p = await reg.approval_preview_async(
        "edit_file", {"path": "f.txt", "old_text": "disk", "new_text": "x"}
    )
    assert p.text.startswith("Error: old_text was not found")
    p = await reg.approval_preview_async("write_file", {"path": "n.txt", "content": "a\n"})
    assert p.text.startswith("new file: n.txt (1 lines)")
    # Without a FileAccess the async preview is the sync one.
    plain = default_registry(ToolContext(ws, ToolsConfig()))
    args = {"path": "f.txt", "content": "new\n"}
    assert (await plain.approval_preview_async("write_file", args)) == plain.approval_preview(
        "write_file", args
    )


async def test_current_text(ws, buffers):
    ctx = ToolContext(ws, ToolsConfig(), files=buffers)
    (ws / "f.txt").write_text("disk\n")
    (ws / "b.bin").write_bytes(b"\xff\x00")
    buffers.texts[ws / "f.txt"] = "buffer\n"
    assert await current_text(ws / "f.txt", ctx) == "buffer\n"
    assert await current_text(ws / "b.bin", ctx) is None
    assert await current_text(ws / "none.txt", ctx) is None
    assert await current_text(ws / "f.txt", ToolContext(ws, ToolsConfig())) == "disk\n"


def _settings(ws: Path) -> Settings:
    s = Settings()
    s.agents.defaults.model = "scripted"
    s.agents.defaults.workspace = str(ws)
    s.tools.approval = "ask"
    return s


async def test_the_turns_approval_shows_the_buffers_diff(ws, buffers):
    """Through the loop: the ApprovalRequested the front end is shown diffs the buffer."""
    (ws / "f.txt").write_text("disk line\n")
    buffers.texts[ws / "f.txt"] = "buffer line\n"
    asked: list[ApprovalRequested] = []

    async def confirm(req: ApprovalRequested) -> Any:
        asked.append(req)
        return "allow"

    steps = [
        scripted.tool_call(
            "edit_file", {"path": "f.txt", "old_text": "buffer", "new_text": "edited"}
        )
    ]
    model = ScriptedModel(steps, default=scripted.text("done"))
    rt = build_runtime(_settings(ws), model="scripted", model_client=model, confirm=confirm)
    rt.tools.ctx.files = buffers
    with rt.store.open(rt.store.new_key()) as session:
        events = [e async for e in rt.loop.run_turn(session, "go")]
    [req] = asked
    assert "-buffer line" in req.whole and "+edited line" in req.whole
    assert "disk" not in req.whole
    [done] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert done.ok, done.result
    assert buffers.texts[ws / "f.txt"] == "edited line\n"
    assert (ws / "f.txt").read_text() == "disk line\n"


async def test_a_file_too_big_for_the_access_stays_on_disk(ws, buffers, reg, monkeypatch):
    """Over MAX_ACCESS_BYTES on disk: read, previewed, edited and replaced on disk only
    (a FileAccess moves whole texts in one message; read_file streams big files)."""
    from picobot_tui.core.tools import file_access

    monkeypatch.setattr(file_access, "MAX_ACCESS_BYTES", 64)
    big = ws / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(1, 40)))
    buffers.texts[big] = "a buffer\n"
    r = await reg.execute("read_file", {"path": "big.txt", "limit": 2})
    assert r.content.startswith("line 1\nline 2\n\n[showing lines 1-2 of 39")
    p = await reg.approval_preview_async(
        "edit_file", {"path": "big.txt", "old_text": "line 3\n", "new_text": "three\n"}
    )
    assert "-line 3" in p.text
    r = await reg.execute(
        "edit_file", {"path": "big.txt", "old_text": "line 3\n", "new_text": "three\n"}
    )
    assert r.ok and "three\n" in big.read_text()
    r = await reg.execute("write_file", {"path": "big.txt", "content": "small\n"})
    assert r.ok and big.read_text() == "small\n"
    assert buffers.calls == []
