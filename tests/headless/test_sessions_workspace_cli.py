"""Issue 25, point 5, through the `picobot` console script: a `-m` that fails before the
model answered leaves no listed session and is not `latest`, its message is kept and can be
resumed; `sessions list` shows the workspace and `--here` filters to it; `--session latest`
is this workspace's and says when it falls back to another; a branch is titled from its
parent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.headless.conftest import cli_env, picobot_exe, run_cli
from tests.support.openai_server import OpenAITestServer, error, text_reply

pytestmark = pytest.mark.e2e


def run_in(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`picobot ARGS` started in `cwd` (its default workspace)."""
    return subprocess.run(
        [*picobot_exe(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
        env=cli_env(home),
        stdin=subprocess.DEVNULL,
    )


def listed(home: Path, *flags: str, cwd: Path | None = None) -> list[dict]:
    res = run_in(home, cwd or home / "workspace", "sessions", "list", "--json", *flags)
    assert res.returncode == 0, res.stderr
    return [json.loads(line) for line in res.stdout.splitlines()]


def test_a_failed_message_is_kept_unlisted_and_can_be_resumed(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    home = configured_home
    llm_server.script([error(401)])
    failed = run_cli(home, "agent", "-m", "my long careful message")
    assert failed.returncode == 1
    [kept] = listed(home, "--all")
    short = kept["key"].removeprefix("cli:")
    assert kept["answered"] is False and kept["message_count"] == 1
    # It says where the text went and how to come back to it.
    assert f"your message is kept in session {short}" in failed.stderr
    assert f"picobot agent --session {short}" in failed.stderr
    listing = run_cli(home, "sessions", "list")
    assert "No sessions" in listing.stdout and short not in listing.stdout
    assert "1 session with no answer yet not shown" in listing.stderr
    everything = run_cli(home, "sessions", "list", "--all")
    assert short in everything.stdout and "[no answer] my long careful message" in everything.stdout
    assert "my long careful message" in run_cli(home, "sessions", "show", short).stdout
    latest = run_cli(home, "agent", "-s", "latest", "-m", "hi")
    assert latest.returncode == 2
    assert "no sessions with an answer yet" in latest.stderr and "1 without an" in latest.stderr

    llm_server.script([text_reply("Here is the summary.")])
    resumed = run_cli(home, "agent", "--session", short, "-m", "try again")
    assert resumed.returncode == 0, resumed.stderr
    assert "Here is the summary." in resumed.stdout
    [now] = listed(home)
    assert now["key"] == kept["key"] and now["answered"] is True
    transcript = run_cli(home, "sessions", "show", "latest").stdout
    assert "my long careful message" in transcript and "try again" in transcript


def test_the_workspace_column_here_and_latest_per_workspace(picobot_home: Path) -> None:
    home = picobot_home
    a = (home / "workspace").resolve()
    b = (home / "other").resolve()
    c = (home / "third").resolve()
    b.mkdir()
    c.mkdir()
    assert run_in(home, a, "agent", "--model", "demo", "-m", "hello from A").returncode == 0
    assert run_in(home, b, "agent", "--model", "demo", "-m", "hello from B").returncode == 0

    rows = listed(home)
    assert [(r["title"], r["workspace"]) for r in rows] == [
        ("hello from B", str(b)),
        ("hello from A", str(a)),
    ]
    table = run_in(home, a, "sessions", "list").stdout
    assert "WORKSPACE" in table.splitlines()[0]
    assert "/picobot-home/workspace " in table and "/picobot-home/other " in table
    assert [r["title"] for r in listed(home, "--here", cwd=a)] == ["hello from A"]
    assert [r["title"] for r in listed(home, "--here", cwd=b)] == ["hello from B"]
    assert "No sessions in" in run_in(home, c, "sessions", "list", "--here").stdout

    # In A, `latest` is A's own session although B's is newer, and nothing is said.
    again = run_in(home, a, "agent", "--model", "demo", "-s", "latest", "-m", "more in A")
    assert again.returncode == 0, again.stderr
    assert "latest" not in again.stderr
    assert [r["message_count"] > 4 for r in listed(home, "--here", cwd=a)] == [True]
    # In a folder without sessions it falls back to the newest anywhere, and says so.
    elsewhere = run_in(home, c, "agent", "--model", "demo", "-s", "latest", "-m", "from C")
    assert elsewhere.returncode == 0, elsewhere.stderr
    note = f"no session in this workspace ({c}) yet: 'latest' is"
    assert note in elsewhere.stderr and f"from {a}" in elsewhere.stderr
    shown = run_in(home, c, "sessions", "show", "latest")
    assert note in shown.stderr and "from C" in shown.stdout


def test_a_branch_is_titled_from_its_parent(picobot_home: Path) -> None:
    home = picobot_home
    assert run_cli(home, "agent", "--model", "demo", "-m", "plan the trip").returncode == 0
    assert run_cli(home, "agent", "--model", "demo", "-s", "latest", "-m", "book").returncode == 0
    [parent] = listed(home)
    made = run_cli(home, "sessions", "branch", parent["key"], "--at", "2")
    assert made.returncode == 0, made.stderr
    at_one = run_cli(home, "sessions", "branch", parent["key"], "--at", "1")
    assert at_one.returncode == 0, at_one.stderr
    rows = {r["key"]: r for r in listed(home)}
    branch_key = made.stdout.split()[0]
    assert rows[branch_key]["title"] == "↳ plan the trip, from turn 2"
    assert rows[branch_key]["parent"] == parent["key"]
    assert "↳ plan the trip, from turn 2" in run_cli(home, "sessions", "list").stdout
    # A branch from turn 1 holds no answer yet: kept, titled, listed with --all only.
    first = at_one.stdout.split()[0]
    assert first not in rows
    assert {r["key"]: r["title"] for r in listed(home, "--all")}[first] == (
        "↳ plan the trip, from turn 1"
    )


def _seed(home: Path, key: str, workspace: Path, text: str) -> None:
    """A session with an answer, started in `workspace`."""
    from picobot_tui.core.sessions import SessionStore

    store = SessionStore(home / "sessions", workspace=str(workspace))
    with store.open(key, model="demo", workspace=str(workspace)) as session:
        session.append({"role": "user", "content": text})
        session.append({"role": "assistant", "content": f"answer to {text}"})


def json_in(home: Path, cwd: Path, lines: list[dict], *flags: str) -> list[dict]:
    """`picobot agent --json --model demo FLAGS` in `cwd`, fed `lines`; its events."""
    res = subprocess.run(
        [*picobot_exe(), "agent", "--json", "--model", "demo", *flags],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
        env=cli_env(home),
        input="".join(json.dumps(line) + "\n" for line in lines),
    )
    assert res.returncode == 0, res.stderr
    return [json.loads(line) for line in res.stdout.splitlines()]


def test_json_latest_says_on_the_protocol_which_session_it_resolved_to(
    picobot_home: Path,
) -> None:
    """`"session": "latest"` in a --json message (and `--session latest`) is this workspace's
    newest session; in a workspace with none it is the newest anywhere, and a `notice` event
    of kind `session` says which one and from where, before the turn runs on it."""
    home = picobot_home
    a, b, c = (home / "workspace").resolve(), (home / "b").resolve(), (home / "c").resolve()
    b.mkdir()
    c.mkdir()
    _seed(home, "cli:aaaa0001-20250301-090000", a, "in A")
    _seed(home, "cli:bbbb0002-20250301-100000", b, "in B")  # the newest anywhere

    # In C (no session of its own): B's, said on the protocol first, for each message.
    note = f"no session in this workspace ({c}) yet: 'latest' is bbbb0002-20250301-100000"
    events = json_in(
        home,
        c,
        [
            {"type": "message", "content": "one", "session": "latest"},
            {"type": "message", "content": "two", "session": "latest"},
        ],
    )
    starts = [i for i, e in enumerate(events) if e["type"] == "turn_started"]
    notices = [i for i, e in enumerate(events) if e["type"] == "notice"]
    assert len(starts) == 2 and len(notices) == 2
    for notice, start in zip(notices, starts, strict=True):
        assert notice < start
        assert events[notice]["kind"] == "session"
        assert note in events[notice]["message"] and f"from {b}" in events[notice]["message"]
        assert events[start]["session"] == "cli:bbbb0002-20250301-100000"

    # `--session latest` at start: the notice is the first line, then the turn on B.
    events = json_in(home, c, [{"type": "message", "content": "three"}], "--session", "latest")
    assert events[0]["type"] == "notice" and events[0]["kind"] == "session"
    assert note in events[0]["message"]
    assert events[1]["type"] == "turn_started"
    assert events[1]["session"] == "cli:bbbb0002-20250301-100000"

    # In A: A's own session, although B's is newer (and was just used), and no notice.
    events = json_in(home, a, [{"type": "message", "content": "more", "session": "latest"}])
    assert [e for e in events if e["type"] == "notice"] == []
    assert events[0]["type"] == "turn_started"
    assert events[0]["session"] == "cli:aaaa0001-20250301-090000"
