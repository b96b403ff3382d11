"""read_file, write_file, edit_file, list_dir and todo, inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from picobot_tui.core.settings import ToolsConfig
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.list_dir import MAX_ENTRIES
from picobot_tui.core.tools.registry import ToolRegistry, default_registry


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


@pytest.fixture
def reg(ws: Path) -> ToolRegistry:
    return default_registry(ToolContext(ws, ToolsConfig()))


# -- read_file ---------------------------------------------------------------------------


async def test_read_whole_small_file(ws, reg):
    (ws / "f.txt").write_text("one\ntwo\nthree\n")
    r = await reg.execute("read_file", {"path": "f.txt"})
    assert r.ok
    assert r.content == "one\ntwo\nthree"


async def test_read_offset_and_limit(ws, reg):
    (ws / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    r = await reg.execute("read_file", {"path": "f.txt", "offset": 10, "limit": 3})
    assert r.ok
    body, note = r.content.split("\n\n[")
    assert body.splitlines() == ["line 10", "line 11", "line 12"]
    assert "showing lines 10-12 of 100" in note
    assert "offset=13" in note


async def test_read_more_hint_follows_through_the_file(ws, reg):
    (ws / "f.txt").write_text("".join(f"{i}\n" for i in range(1, 26)))
    seen, offset = [], 1
    for _ in range(10):
        r = await reg.execute("read_file", {"path": "f.txt", "offset": offset, "limit": 10})
        body = r.content.split("\n\n[")[0]
        seen += body.splitlines()
        if "offset=" not in r.content:
            break
        offset = int(r.content.rsplit("offset=", 1)[1].split()[0].rstrip("]"))
    assert seen == [str(i) for i in range(1, 26)]


async def test_read_big_file_is_windowed_to_the_result_cap(ws):
    reg = default_registry(ToolContext(ws, ToolsConfig(tool_result_max_chars=1000)))
    (ws / "big.txt").write_text("".join(f"{i:04d} " + "x" * 45 + "\n" for i in range(1, 5001)))
    r = await reg.execute("read_file", {"path": "big.txt"})
    assert r.ok
    assert "[truncated" not in r.content  # read_file cut it itself, at a line boundary
    assert "of 5000; use offset=" in r.content
    assert r.content.startswith("0001 ")


async def test_read_offset_past_end(ws, reg):
    (ws / "f.txt").write_text("a\nb\n")
    r = await reg.execute("read_file", {"path": "f.txt", "offset": 5})
    assert not r.ok
    assert "past the end" in r.content and "2 lines" in r.content


async def test_read_binary_refused(ws, reg):
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    r = await reg.execute("read_file", {"path": "img.png"})
    assert not r.ok
    assert "binary file" in r.content


async def test_read_invalid_utf8_is_flagged(ws, reg):
    (ws / "latin.txt").write_bytes("café\n".encode("latin-1"))
    r = await reg.execute("read_file", {"path": "latin.txt"})
    assert r.ok
    assert "not valid UTF-8" in r.content


@pytest.mark.parametrize(
    ("setup", "path", "message"),
    [
        (None, "missing.txt", "file not found"),
        ("dir", "d", "is a directory"),
        ("empty", "e.txt", "is empty"),
        ("fifo", "p", "not a regular file"),
    ],
)
async def test_read_special_cases(ws, reg, setup, path, message):
    if setup == "dir":
        (ws / "d").mkdir()
    elif setup == "empty":
        (ws / "e.txt").write_text("")
    elif setup == "fifo":
        os.mkfifo(ws / "p")
    r = await reg.execute("read_file", {"path": path})
    assert message in r.content
    assert r.ok == (setup == "empty")


async def test_read_very_long_line_is_cut(ws, reg):
    (ws / "min.js").write_text("x" * 10000 + "\nend\n")
    r = await reg.execute("read_file", {"path": "min.js"})
    assert r.ok
    assert "line 1 cut: 10000 chars" in r.content
    assert r.content.splitlines()[1] == "end"


# -- write_file --------------------------------------------------------------------------


async def test_write_creates_parents_and_reports(ws, reg):
    r = await reg.execute("write_file", {"path": "a/b/c.txt", "content": "x\ny\n"})
    assert r.ok
    assert "created a/b/c.txt" in r.content and "2 lines" in r.content
    assert (ws / "a" / "b" / "c.txt").read_text() == "x\ny\n"


async def test_write_overwrites_and_keeps_mode(ws, reg):
    f = ws / "run.sh"
    f.write_text("old\n")
    f.chmod(0o750)
    r = await reg.execute("write_file", {"path": "run.sh", "content": "new\n"})
    assert r.ok and "overwrote" in r.content
    assert f.read_text() == "new\n"
    assert f.stat().st_mode & 0o777 == 0o750
    assert [p.name for p in ws.iterdir()] == ["run.sh"]  # no temp file left behind


async def test_write_to_directory_refused(ws, reg):
    (ws / "d").mkdir()
    r = await reg.execute("write_file", {"path": "d", "content": "x"})
    assert not r.ok and "directory" in r.content


async def test_write_under_a_file_refused(ws, reg):
    (ws / "f").write_text("x")
    r = await reg.execute("write_file", {"path": "f/g.txt", "content": "x"})
    assert not r.ok
    assert (ws / "f").read_text() == "x"


def test_write_preview_new_file(ws, reg):
    text = reg.preview("write_file", {"path": "n.txt", "content": "hello\n"})
    assert text.startswith("new file: n.txt (1 lines)")
    assert "+hello" in text


def test_write_preview_diff(ws, reg):
    (ws / "f.txt").write_text("a\nb\nc\n")
    text = reg.preview("write_file", {"path": "f.txt", "content": "a\nB\nc\n"})
    assert "--- a/f.txt" in text and "+++ b/f.txt" in text
    assert "-b" in text and "+B" in text
    assert (ws / "f.txt").read_text() == "a\nb\nc\n"  # a preview changes nothing


# -- edit_file ---------------------------------------------------------------------------


async def test_edit_replaces_exactly_once(ws, reg):
    (ws / "f.py").write_text("def f():\n    return 1\n")
    r = await reg.execute(
        "edit_file", {"path": "f.py", "old_text": "return 1", "new_text": "return 2"}
    )
    assert r.ok, r.content
    assert "line 2" in r.content
    assert (ws / "f.py").read_text() == "def f():\n    return 2\n"


async def test_edit_zero_matches(ws, reg):
    (ws / "f.py").write_text("x = 1\n")
    r = await reg.execute("edit_file", {"path": "f.py", "old_text": "y = 1", "new_text": "y = 2"})
    assert not r.ok
    assert "0 matches" in r.content
    assert (ws / "f.py").read_text() == "x = 1\n"


async def test_edit_two_matches(ws, reg):
    (ws / "f.py").write_text("a = 1\nb = 2\na = 1\n")
    r = await reg.execute("edit_file", {"path": "f.py", "old_text": "a = 1", "new_text": "a = 3"})
    assert not r.ok
    assert "matches 2 times" in r.content
    assert "lines 1, 3" in r.content
    assert (ws / "f.py").read_text() == "a = 1\nb = 2\na = 1\n"


async def test_edit_overlapping_matches_count(ws, reg):
    (ws / "f.txt").write_text("aaa\n")
    r = await reg.execute("edit_file", {"path": "f.txt", "old_text": "aa", "new_text": "b"})
    assert not r.ok and "matches 2 times" in r.content


async def test_edit_crlf_file_with_lf_old_text(ws, reg):
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    r = await reg.execute(
        "edit_file", {"path": "w.txt", "old_text": "one\ntwo", "new_text": "1\n2"}
    )
    assert r.ok, r.content
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (None, {"old_text": "a", "new_text": "b"}, "file not found"),
        (b"\xff\xfe\x00bin", {"old_text": "a", "new_text": "b"}, "not UTF-8"),
        (b"same", {"old_text": "same", "new_text": "same"}, "identical"),
    ],
)
async def test_edit_errors(ws, reg, content, args, message):
    if content is not None:
        (ws / "f").write_bytes(content)
    r = await reg.execute("edit_file", {"path": "f", **args})
    assert not r.ok and message in r.content


def test_edit_preview_is_a_unified_diff(ws, reg):
    (ws / "f.txt").write_text("alpha\nbeta\n")
    text = reg.preview("edit_file", {"path": "f.txt", "old_text": "beta", "new_text": "gamma"})
    assert text.splitlines()[:2] == ["--- a/f.txt", "+++ b/f.txt"]
    assert "-beta" in text and "+gamma" in text


def test_edit_preview_shows_the_error(ws, reg):
    (ws / "f.txt").write_text("x\nx\n")
    text = reg.preview("edit_file", {"path": "f.txt", "old_text": "x", "new_text": "y"})
    assert text.startswith("Error:") and "2 times" in text


# -- list_dir ----------------------------------------------------------------------------


async def test_list_dir_default_root_sorted_dirs_marked(ws, reg):
    (ws / "b.txt").write_text("")
    (ws / "A.txt").write_text("")
    (ws / "zdir").mkdir()
    (ws / "adir").mkdir()
    (ws / "link").symlink_to("b.txt")
    r = await reg.execute("list_dir", {})
    assert r.ok
    lines = r.content.splitlines()
    assert lines[0] == "./ (5 entries)"
    assert lines[1:] == ["adir/", "zdir/", "A.txt", "b.txt", "link -> b.txt"]


async def test_list_dir_caps_entries(ws, reg):
    for i in range(MAX_ENTRIES + 7):
        (ws / f"f{i:04d}").write_text("")
    r = await reg.execute("list_dir", {"path": "."})
    assert r.ok
    assert "7 more entries not shown" in r.content
    assert len(r.content.splitlines()) == MAX_ENTRIES + 2


@pytest.mark.parametrize(("path", "message"), [("nope", "not found"), ("f", "is a file")])
async def test_list_dir_errors(ws, reg, path, message):
    (ws / "f").write_text("")
    r = await reg.execute("list_dir", {"path": path})
    assert not r.ok and message in r.content


async def test_list_empty_dir(ws, reg):
    (ws / "e").mkdir()
    r = await reg.execute("list_dir", {"path": "e"})
    assert r.ok and "empty" in r.content


# -- todo --------------------------------------------------------------------------------


async def test_todo_lifecycle(ws, reg):
    r = await reg.execute("todo", {"action": "read"})
    assert r.ok and "no checklist items" in r.content
    await reg.execute("todo", {"action": "add", "text": "write tests"})
    await reg.execute("todo", {"action": "add", "text": "ship it"})
    r = await reg.execute("todo", {"action": "check", "index": 1})
    assert r.content.splitlines() == [
        "TODO.md: 1 of 2 done",
        "1. [x] write tests",
        "2. [ ] ship it",
    ]
    assert (ws / "TODO.md").read_text() == "- [x] write tests\n- [ ] ship it\n"
    await reg.execute("todo", {"action": "uncheck", "index": 1})
    r = await reg.execute("todo", {"action": "remove", "index": 2})
    assert (ws / "TODO.md").read_text() == "- [ ] write tests\n"


async def test_todo_keeps_other_lines(ws, reg):
    (ws / "TODO.md").write_text("# Plan\n\nnotes here\n* [X] done thing\n- [ ] open thing\n")
    r = await reg.execute("todo", {"action": "check", "index": 2})
    assert r.ok
    assert (
        ws / "TODO.md"
    ).read_text() == "# Plan\n\nnotes here\n* [X] done thing\n- [x] open thing\n"


async def test_todo_write_replaces(ws, reg):
    r = await reg.execute("todo", {"action": "write", "content": "- [ ] a\n- [x] b"})
    assert r.ok and "1 of 2 done" in r.content
    assert (ws / "TODO.md").read_text() == "- [ ] a\n- [x] b\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"action": "add"}, "needs `text`"),
        ({"action": "check"}, "needs `index`"),
        ({"action": "check", "index": 3}, "no item 3"),
        ({"action": "write"}, "needs `content`"),
        ({"action": "add", "text": "   "}, "blank"),
        ({"action": "explode"}, "must be one of"),
    ],
)
async def test_todo_errors(ws, reg, args, message):
    r = await reg.call("todo", args)
    assert not r.ok
    assert message in r.content


def test_todo_is_not_mutating_and_file_tools_are(reg):
    assert not reg.is_mutating("todo")
    assert not reg.is_mutating("read_file")
    assert reg.is_mutating("write_file")
    assert reg.is_mutating("edit_file")
    assert reg.is_mutating("exec")
    assert not reg.is_mutating("no_such_tool")
