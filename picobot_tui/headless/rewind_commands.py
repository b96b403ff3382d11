"""`picobot sessions rewind`, `branch` and `diff`: checkpoints from the command line.

- `rewind ID --to TURN [--code] [--conversation] [--force]`: neither flag means both. The
  code goes back to its state before turn TURN; the conversation continues as a branch (a
  new session, printed; the original stays complete). Files changed after the agent's
  change (by you or another program) are conflicts: they are listed and nothing is restored
  unless `--force` (then they are overwritten too; never a file below a folder that is a
  link now, core/checkpoints/confined.py). Exit 1 when refused or a file could not be
  restored, 2 for a bad id or turn.
- `branch ID --at TURN`: the branch alone (files untouched).
- `diff ID [--turn N]`: the changes of the session (or of turn N) as a unified diff: plain
  to a pipe or a file (`patch -p1`, `git apply`), coloured to a terminal.

They read the sessions and `<home>/data/checkpoints` only: no settings, no model.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from picobot_tui.core.checkpoints.diff import FileDiff, file_diffs, patch_text
from picobot_tui.core.checkpoints.restore import FileRestore, RestorePlan
from picobot_tui.core.checkpoints.rewind import branch_session, plan_rewind, rewind
from picobot_tui.core.checkpoints.store import CheckpointError, CheckpointStore, checkpoints_root
from picobot_tui.core.checkpoints.timeline import Timeline, load_timeline, skipped_line
from picobot_tui.core.paths import picobot_home
from picobot_tui.core.sessions import SessionError, SessionNotFound, SessionStore
from picobot_tui.core.sessions.branch import check_turn
from picobot_tui.core.textsafe import terminal_safe
from picobot_tui.run.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from picobot_tui.run.session_stores import session_store

Echo = Callable[[str], None]


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(terminal_safe(text) + "\n")


def _stores() -> tuple[SessionStore, CheckpointStore]:
    from picobot_tui.core.paths import sessions_dir

    return session_store(sessions_dir()), CheckpointStore(checkpoints_root(picobot_home()))


def _resolve(sessions: SessionStore, raw_id: str) -> str:
    """The key `raw_id` names; `latest` is this workspace's, with a note on stderr when it
    comes from another one (as for `agent --session latest`)."""
    if raw_id.strip().lower() != "latest":
        return sessions.resolve(raw_id)
    from picobot_tui.run.workspace import current_workspace

    key, note = session_store(sessions.dir, workspace=current_workspace()).latest()
    if note:
        _err(f"picobot: {note}")
    return key


def _what(item: FileRestore) -> str:
    if item.target.kind == "absent":
        return f"{item.shown} (removed: the agent created it)"
    if item.current.kind == "absent":
        return f"{item.shown} (recreated)"
    return item.shown


def _conflicts(plan: RestorePlan) -> list[str]:
    return [f.described for f in plan.conflicts]


def run_rewind(raw_id: str, turn: int, *, code: bool, conversation: bool, force: bool) -> int:
    sessions, store = _stores()
    if not code and not conversation:
        code = conversation = True
    try:
        key = _resolve(sessions, raw_id)
        plan = plan_rewind(sessions, store, key, turn)
    except SessionNotFound as e:
        _err(f"picobot: {e}")
        return EXIT_USAGE
    except SessionError as e:
        _err(f"picobot: {e}")
        return EXIT_USAGE
    except CheckpointError as e:
        _err(f"picobot: {e}")
        return EXIT_ERROR
    if code and plan.conflicts and not force:
        _err(
            "picobot: these files were changed after the agent's change, by you or another program:"
        )
        for shown in _conflicts(plan):
            _err(f"  {shown}")
        _err("Nothing was restored. Run again with --force to overwrite them too.")
        if any(f.blocked for f in plan.conflicts):
            _err("A file below a folder that is a link now is never restored, --force or not.")
        return EXIT_ERROR
    overwrite = {f.path for f in plan.conflicts} if force else set()
    try:
        result = rewind(
            sessions, store, key, turn, code=code, conversation=conversation, overwrite=overwrite
        )
    except SessionError as e:  # open in another picobot process
        _err(f"picobot: {e}")
        return EXIT_ERROR
    except (CheckpointError, OSError) as e:
        _err(f"picobot: {e}")
        return EXIT_ERROR
    failed = False
    if result.restored is not None:
        done = result.restored
        if done.restored:
            _out(terminal_safe(f"Restored {len(done.restored)} file(s) to before turn {turn}:"))
            for item in done.restored:
                _out(terminal_safe(f"  {_what(item)}"))
        elif plan.uncheckpointed:
            _out(f"No checkpointed file to restore since turn {turn} (see below).")
        else:
            _out(f"No file to restore: nothing the agent changed since turn {turn} differs.")
        for item, why in done.failed:
            _err(f"picobot: could not restore {item.shown}: {why}")
            failed = True
        for item in plan.not_undoable:
            _err(f"picobot: not undoable (not kept): {item.shown}: {item.target.reason}")
        for skipped in plan.uncheckpointed:
            _err("picobot: " + skipped_line(skipped, "what it changed is not restored"))
    if result.branch is not None:
        _out(f"Branch {result.branch} (from {key} at turn {turn}).")
        _out(f"Continue it with: picobot agent -s {result.branch}")
        if result.prompt:
            _out(terminal_safe(f"Turn {turn} was: {result.prompt}"))
    return EXIT_ERROR if failed else EXIT_OK


def run_branch(raw_id: str, turn: int) -> int:
    sessions, store = _stores()
    try:
        key = _resolve(sessions, raw_id)
        new_key, prompt = branch_session(sessions, store, key, turn)
    except SessionError as e:
        _err(f"picobot: {e}")
        return EXIT_USAGE
    except OSError as e:
        _err(f"picobot: could not write the branch: {e.strerror or e}")
        return EXIT_ERROR
    _out(new_key)
    if prompt:
        _err(f"Branch of {key} at turn {turn}, which was: {prompt}")
    return EXIT_OK


_RED, _GREEN, _CYAN, _BOLD, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[0m"


def _colour(text: str) -> str:
    out = []
    for line in text.splitlines():
        safe = terminal_safe(line)
        if line.startswith(("diff --git", "--- ", "+++ ")):
            out.append(f"{_BOLD}{safe}{_RESET}")
        elif line.startswith("@@"):
            out.append(f"{_CYAN}{safe}{_RESET}")
        elif line.startswith("+"):
            out.append(f"{_GREEN}{safe}{_RESET}")
        elif line.startswith("-"):
            out.append(f"{_RED}{safe}{_RESET}")
        else:
            out.append(safe)
    return "\n".join(out) + ("\n" if out else "")


def run_diff(raw_id: str, turn: int | None) -> int:
    sessions, store = _stores()
    try:
        key = _resolve(sessions, raw_id)
        if turn is not None:
            check_turn(sessions.load_messages(key), turn)
        timeline = load_timeline(store, key)
        diffs = file_diffs(store, timeline, turn)
    except SessionError as e:
        _err(f"picobot: {e}")
        return EXIT_USAGE
    _left_out(timeline, turn, diffs)
    if not diffs:
        where = f"turn {turn} of {key}" if turn is not None else key
        _err(f"No file changes recorded in {where}.")
        return EXIT_OK
    text = patch_text(diffs)
    if sys.stdout.isatty():
        sys.stdout.write(_colour(text))
        added, removed = sum(d.added for d in diffs), sum(d.removed for d in diffs)
        sys.stdout.write(f"{len(diffs)} file(s), +{added} −{removed}\n")
    else:
        # Exact bytes for patch / git apply (the text of non-UTF-8 lines is already "binary").
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.flush()
    return EXIT_OK


def _left_out(timeline: Timeline, turn: int | None, diffs: list[FileDiff]) -> None:
    """What the diff cannot show, on stderr: changes not kept (over maxFileBytes) and calls
    (or nested repositories) that were not checkpointed."""
    for d in diffs:
        for state in (d.before, d.after):
            if state.kind == "unknown":
                _err(f"picobot: {d.shown}: not kept ({state.reason}): its change is not shown")
                break
    for skipped in timeline.uncheckpointed:
        if turn is None or skipped.turn == turn:
            _err("picobot: " + skipped_line(skipped, "what it changed is not in this diff"))
