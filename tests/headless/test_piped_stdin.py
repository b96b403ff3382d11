"""Stdin in a `-m` run, through the console script (headless/piped_input.py): a real pipe
and a file redirect are attached to the message, `/dev/null` attaches nothing, `-m -`
reads the message itself; binary or empty input is refused with exit 2; a secret on stdin
never reaches the provider or the session file; a huge pipe is cut."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import IO, Any

import pytest

from tests.headless.conftest import (
    SECRET,
    cli_env,
    home_workspace,
    picobot_exe,
    run_cli,
    session_files,
)
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = pytest.mark.e2e

DIFF = "diff --git a/app.py b/app.py\n-print('old')\n+print('new')\n"


def _run(home: Path, args: list[str], stdin: int | IO[Any]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*picobot_exe(), "agent", *args, "--no-stream"],
        cwd=home_workspace(home), env=cli_env(home), stdin=stdin,
        capture_output=True, timeout=120,
    )  # fmt: skip


def _sent_user_text(llm: OpenAITestServer) -> str:
    [user] = [m for m in llm.completions[-1].body["messages"] if m["role"] == "user"]
    content = user["content"]
    if isinstance(content, list):  # content parts (a cache marker makes them a list)
        content = "".join(part.get("text", "") for part in content)
    # The last user message carries the time line (core/time_line.py): not stdin's.
    return re.sub(r"\n\n\[current time: [^\]]*\]$", "", str(content))


def test_a_pipe_and_a_file_are_attached_and_dev_null_is_not(
    configured_home: Path, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    llm_server.script([text_reply("piped"), text_reply("from a file"), text_reply("nothing")])
    res = run_cli(configured_home, "agent", "-m", "review this", "--no-stream", input=DIFF)
    assert (res.returncode, res.stdout) == (0, "piped\n"), res.stderr
    size = len(DIFF.encode())
    assert _sent_user_text(llm_server) == f"review this\n\nstdin ({size} bytes):\n```\n{DIFF}\n```"

    log = tmp_path / "build.log"
    text = "error: `x` not found\n```\n"  # a fence inside: the attachment's is longer
    log.write_text(text)
    with log.open("rb") as f:
        res2 = _run(configured_home, ["-m", "why?"], f)
    assert res2.returncode == 0, res2.stderr
    sent = _sent_user_text(llm_server)
    assert sent == f"why?\n\nstdin ({len(text)} bytes):\n````\n{text}\n````", sent

    res3 = _run(configured_home, ["-m", "just this"], subprocess.DEVNULL)
    assert res3.returncode == 0, res3.stderr
    assert _sent_user_text(llm_server) == "just this"


def test_dash_reads_the_message_from_stdin(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("read it")])
    res = run_cli(configured_home, "agent", "-m", "-", "--no-stream", input="what is 2+2?\n")
    assert (res.returncode, res.stdout) == (0, "read it\n"), res.stderr
    assert _sent_user_text(llm_server) == "what is 2+2?\n"


@pytest.mark.parametrize(
    ("args", "stdin", "says"),
    [
        (["-m", "-"], None, "stdin is not a pipe or a file"),
        (["-m", "-"], b"  \n", "the message on stdin is empty"),
        (["-m", "look"], b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "stdin looks binary"),
    ],
    ids=["dash-from-dev-null", "dash-empty", "binary"],
)
def test_bad_stdin_is_refused_with_exit_2_before_any_request(
    configured_home: Path,
    llm_server: OpenAITestServer,
    args: list[str],
    stdin: bytes | None,
    says: str,
) -> None:
    llm_server.clear()
    if stdin is None:
        res = _run(configured_home, args, subprocess.DEVNULL)
    else:
        res = subprocess.run(
            [*picobot_exe(), "agent", *args, "--no-stream"],
            cwd=home_workspace(configured_home), env=cli_env(configured_home), input=stdin,
            capture_output=True, timeout=120,
        )  # fmt: skip
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert says in err and "Traceback" not in err
    assert llm_server.completions == []


def test_a_secret_on_stdin_is_masked_and_a_huge_pipe_is_cut(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("masked")])
    piped = f"token={SECRET}\n" + "x" * 300_000 + "\nTHE-END\n"
    res = run_cli(configured_home, "agent", "-m", "check", "--no-stream", input=piped)
    assert res.returncode == 0, res.stderr
    sent = _sent_user_text(llm_server)
    assert SECRET not in sent and "token=[REDACTED]" in sent
    assert "[… stdin cut: " in sent
    assert f"stdin ({len(piped.encode()):,} bytes (cut to 100,000 characters)):" in sent
    assert "THE-END" in sent and len(sent) < 101_000
    [path] = session_files(configured_home)
    assert SECRET not in path.read_text()
    assert any("token=[REDACTED]" in json.dumps(line) for line in path.read_text().splitlines())
