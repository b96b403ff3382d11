"""Branches: a new session holding a session's conversation up to one of its turns.

`branch(store, key, at_turn)` copies the messages before the `at_turn`-th user message
(turns count user messages from 1, as the loop does) into a new session whose header says
`parent` (the original's key) and `forked_at` (`at_turn`). The original is only read: it
stays complete, and both show in the browser (`SessionInfo.parent`). Returns the new key and
the text of the user message the branch starts again from (for the prompt), or "" when
`at_turn` is one past the last turn (a branch of the whole conversation).

A branch is titled from its parent, "↳ <parent's title>, from turn 3", and keeps the
parent's workspace. A branch at turn 1 holds no answer, so it is listed only once it gets
one (listing.py).
"""

from __future__ import annotations

from typing import Any

from picobot_tui.core.content import content_text
from picobot_tui.core.sessions.files import SessionError
from picobot_tui.core.sessions.store import SessionStore


def user_turns(messages: list[dict[str, Any]]) -> list[int]:
    """The index of each user message: turn N is `messages[user_turns(...)[N - 1]]`."""
    return [i for i, m in enumerate(messages) if m.get("role") == "user"]


def check_turn(messages: list[dict[str, Any]], turn: int, *, past_end: bool = False) -> int:
    """The index where turn `turn` starts; SessionError naming the range when there is none.
    With `past_end`, one more than the last turn is allowed (the end of the conversation)."""
    starts = user_turns(messages)
    top = len(starts) + (1 if past_end else 0)
    if not starts and not past_end:
        raise SessionError("the session has no turns yet")
    if not 1 <= turn <= top:
        raise SessionError(f"no turn {turn}: the session has turns 1 to {len(starts)}")
    return starts[turn - 1] if turn <= len(starts) else len(messages)


def branch_title(parent_title: str, at_turn: int) -> str:
    """A branch's title: its parent's (without the parent's own "↳ " mark), and the turn."""
    return f"↳ {parent_title.removeprefix('↳ ')}, from turn {at_turn}"


def branch(store: SessionStore, key: str, at_turn: int) -> tuple[str, str]:
    """Make the branch; (its key, the text of the user message it starts again from)."""
    key = store.normalize_key(key)
    messages = store.load_messages(key)
    cut = check_turn(messages, at_turn, past_end=True)
    info = store.info(key)
    channel = key.split(":", 1)[0]
    new_key = store.new_key(channel)
    title = branch_title(info.title or key, at_turn)
    with store.open(
        new_key,
        model=info.model,
        source=info.source,
        lineage=(key, at_turn),
        title=title,
        workspace=info.workspace,
    ) as s:
        for message in messages[:cut]:
            s.append(message)
    prompt = content_text(messages[cut].get("content")) if cut < len(messages) else ""
    return new_key, prompt
