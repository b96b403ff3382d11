"""`picobot sessions prune`: durations, which sessions are old, and deleting them safely.

Age is the time since a session's last message (`updated`). A session open in another
process (its flock held) is never deleted: `SessionStore.delete` takes that lock without
waiting, and a held one is reported as kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from picobot_tui.core.sessions.files import SessionError, SessionInfo, SessionLocked, now_iso
from picobot_tui.core.sessions.store import SessionStore

_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION_RE = re.compile(r"(?:(\d+)([mhdw]))+")
_PART_RE = re.compile(r"(\d+)([mhdw])")
MAX_SECONDS = 100 * 365 * 86400  # past this, a typo rather than a wish


def parse_duration(text: str) -> timedelta:
    """`30d`, `12h`, `90m`, `2w`, or a sum like `1d12h`. Raises ValueError with the reason."""
    raw = text.strip().lower()
    if not _DURATION_RE.fullmatch(raw):
        raise ValueError(
            f"invalid duration {text!r}: use a number and a unit, m (minutes), h, d or w, "
            "e.g. 30d, 12h or 1d12h"
        )
    seconds = sum(int(n) * _UNITS[unit] for n, unit in _PART_RE.findall(raw))
    if seconds <= 0:
        raise ValueError(f"invalid duration {text!r}: it must be longer than zero")
    if seconds > MAX_SECONDS:
        raise ValueError(f"invalid duration {text!r}: at most 100 years")
    return timedelta(seconds=seconds)


def older_than(
    store: SessionStore,
    age: timedelta,
    *,
    source: str | None = None,
    now: datetime | None = None,
) -> list[SessionInfo]:
    """Sessions whose last message is more than `age` ago, oldest first (`source` filters as
    in `SessionStore.list`)."""
    cutoff = now_iso((now or datetime.now(UTC)) - age)  # ISO "Z" strings sort by time
    # Sessions with no answer (a failed run's leftovers) are pruned like any other.
    everything = store.list(source=source, unanswered=True)
    old = [info for info in everything if info.updated and info.updated < cutoff]
    return old[::-1]


@dataclass
class PruneResult:
    deleted: list[SessionInfo] = field(default_factory=list)
    in_use: list[SessionInfo] = field(default_factory=list)  # locked by a running picobot
    failed: list[tuple[SessionInfo, str]] = field(default_factory=list)


def prune(store: SessionStore, sessions: list[SessionInfo]) -> PruneResult:
    """Delete `sessions`, keeping any that another process holds open."""
    result = PruneResult()
    for info in sessions:
        try:
            store.delete(info.key)
        except SessionLocked:
            result.in_use.append(info)
        except SessionError as e:  # gone meanwhile, or the disk refused
            result.failed.append((info, str(e)))
        except OSError as e:
            result.failed.append((info, e.strerror or str(e)))
        else:
            result.deleted.append(info)
    return result
