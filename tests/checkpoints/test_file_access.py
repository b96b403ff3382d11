"""With ToolContext.files (an editor's buffers, ACP), the prior state is read where the
tool reads and writes: the buffer's unsaved text, not the disk's."""

from __future__ import annotations

from pathlib import Path

from picobot_tui.core.checkpoints.diff import file_diffs
from tests.checkpoints.conftest import Agent


class Buffers:
    """An editor holding unsaved text for some files (a FileAccess)."""

    reads = True
    writes = True

    def __init__(self) -> None:
        self.text: dict[Path, str] = {}

    async def read_text(self, path: Path) -> str:
        return self.text.get(path) or path.read_text()

    async def write_text(self, path: Path, text: str) -> None:
        self.text[path] = text


def test_prior_state_is_the_buffer_text(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("saved\n")
    agent = Agent(ws)
    buffers = Buffers()
    buffers.text[(ws / "a.py").resolve()] = "unsaved edit\n"
    agent.registry.ctx.files = buffers
    agent.call(1, "edit_file", path="a.py", old_text="unsaved", new_text="agent's")
    [diff] = file_diffs(agent.store, agent.timeline(), 1)
    assert "-unsaved edit\n+agent's edit\n" in diff.text
    assert (ws / "a.py").read_text() == "saved\n"  # the change went to the buffer only
