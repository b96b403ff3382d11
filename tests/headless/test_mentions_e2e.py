"""`@path` mentions through the real console script and LiteLLM: a file is attached as
read_file returns it (a secret in it scrubbed), a folder as list_dir lists it; a link out
of the workspace, `..`, an absolute path, a name that is not a file and an e-mail address
stay text; an image says it is not attached."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.headless.conftest import SECRET, run_cli
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = pytest.mark.e2e


def test_mentioned_files_and_folders_are_attached(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text(f"KEY = '{SECRET}'\nprint('app')\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "guide.md").write_text("guide\n")
    (ws / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "outside.txt").write_text("OUTSIDE\n")
    (ws / "out.txt").symlink_to(tmp_path / "outside.txt")
    llm_server.script([text_reply("explained")])
    message = (
        f"explain @src/app.py, see @docs/ and @logo.png; not @out.txt, @../outside.txt, "
        f"@{tmp_path}/outside.txt, @alice or bob@src/app.py"
    )
    res = run_cli(configured_home, "agent", "--workspace", str(ws), "-m", message)
    assert (res.returncode, res.stdout.strip()) == (0, "explained"), res.stderr
    sent = [m for m in llm_server.completions[0].body["messages"] if m["role"] == "user"][-1]
    content = sent["content"]
    assert content.startswith(message)
    assert "[attached: src/app.py]\nKEY = " in content and "print('app')" in content
    assert SECRET not in content
    assert "[attached: docs/]" in content and "guide.md" in content
    assert "[@logo.png: an image; picobot does not attach images yet]" in content
    assert "OUTSIDE" not in content
    assert content.count("[attached:") == 2
