"""The app's key bindings, which of them `ui.keys` may move, and what Ctrl+C means.

Each configurable binding has an id (`ui.keys` names it without the `picobot.` prefix);
`keymap` checks the config's entries and turns the good ones into a Textual keymap, the
others into warnings. Ctrl+C is a key in the TUI (the terminal is in raw mode): it copies a
selection (the prompt's and the screen's own bindings, which come first), else interrupts
the running turn, else asks for a second press within `DOUBLE_PRESS` seconds to quit.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from textual.app import App
from textual.binding import Binding, BindingType

from picobot_tui.tui.view_events import NoticeShown

if TYPE_CHECKING:
    from picobot_tui.widgets.conversation import ConversationPane

PREFIX = "picobot."

DEFAULT_KEYS: dict[str, tuple[str, str, str]] = {
    # id: (default key, action, footer label)
    "sessions": ("ctrl+s", "sessions", "Sessions"),
    "new_session": ("ctrl+n", "new_session", "New"),
    "toggle_timeline": ("ctrl+t", "toggle_timeline", "Timeline"),
    # ctrl+b is tmux's prefix (and moves back a character in shells): g for gauge is free in
    # the terminal, tmux and screen (ctrl+a), and not an editing key of the prompt.
    "toggle_gauge": ("ctrl+g", "toggle_gauge", "Gauge"),
    # Esc interrupts a running turn; twice on an empty, idle prompt it opens /rewind.
    "interrupt": ("escape", "interrupt_or_rewind", "Interrupt"),
    "interrupt_or_quit": ("ctrl+c", "interrupt_or_quit", ""),
    "quit": ("ctrl+q", "quit", "Quit"),
    # Shift+Tab, as in the peers (the prompt hands it up when it has nothing to complete);
    # in a dialog it still moves the focus back (tui/plan_actions.py).
    "cycle_mode": ("shift+tab", "cycle_mode", ""),
}


def bindings() -> list[BindingType]:
    """The app's BINDINGS (ctrl+q is a priority binding: it works in every screen)."""
    out: list[BindingType] = []
    for name, (key, action, label) in DEFAULT_KEYS.items():
        out.append(
            Binding(
                key,
                action,
                label,
                show=bool(label),
                priority=name == "quit",
                id=PREFIX + name,
            )
        )
    return out


MODIFIERS = {"ctrl", "shift", "alt", "meta", "super", "hyper"}
_STANDALONE = {f"f{n}" for n in range(1, 25)} | {"escape", "insert"}
"""Keys that may be bound without a modifier (they type nothing into the prompt)."""
_NAMED = {
    "escape", "insert", "delete", "home", "end", "pageup", "pagedown", "up", "down", "left",
    "right", "space", "backspace", "tab", "enter",
}  # fmt: skip


def key_problem(key: str) -> str | None:
    """Why `key` (one Textual key, e.g. `ctrl+g`) cannot be bound; None when it can."""
    *mods, base = key.strip().lower().split("+")
    known = len(base) == 1 or base in _NAMED or base in _STANDALONE
    if not known or any(m not in MODIFIERS for m in mods):
        return "not a key (write e.g. ctrl+g, alt+x or f5)"
    if not set(mods) - {"shift"} and base not in _STANDALONE:
        return "it would be typed into the prompt; add ctrl+ or alt+"
    return None


def keymap(keys: Mapping[str, Any] | None) -> tuple[dict[str, str], list[str]]:
    """(Textual keymap, warnings) from the `ui.keys` setting. A bad entry is skipped with a
    warning; so is a key another picobot binding keeps."""
    out: dict[str, str] = {}
    warnings: list[str] = []
    wanted: dict[str, str] = {}
    for name, value in (keys or {}).items():
        where = f"ui.keys.{name}"
        if name not in DEFAULT_KEYS:
            warnings.append(f"{where}: unknown binding (known: {', '.join(DEFAULT_KEYS)})")
            continue
        if not isinstance(value, str) or not value.strip():
            warnings.append(f'{where}: the value must be a key such as "ctrl+g"')
            continue
        listed = [k.strip().lower() for k in value.split(",")]
        problems = [f"{k!r}: {p}" for k in listed if (p := key_problem(k))]
        if problems:
            warnings.append(f"{where}: {'; '.join(problems)} (kept {DEFAULT_KEYS[name][0]})")
            continue
        wanted[name] = ",".join(listed)
    effective = {name: wanted.get(name, default[0]) for name, default in DEFAULT_KEYS.items()}
    for name, value in wanted.items():
        others = {
            k for other, keys_ in effective.items() if other != name for k in keys_.split(",")
        }
        clash = [k for k in value.split(",") if k in others]
        if clash:
            warnings.append(
                f"ui.keys.{name}: {', '.join(clash)} is already bound in picobot "
                f"(kept {DEFAULT_KEYS[name][0]})"
            )
            continue
        out[PREFIX + name] = value
    return out, warnings


def apply_keymap(
    app: App[Any], keys: Mapping[str, Any] | None, show: Callable[[NoticeShown], Awaitable[None]]
) -> dict[str, str]:
    """Bind `ui.keys` on `app`; each warning is shown (as a notice) once the app is idle."""
    mapped, warnings = keymap(keys)
    app.set_keymap(mapped)
    for warning in warnings:
        app.call_later(show, NoticeShown("warning", f"config: {warning}"))
    return mapped


def key_label(keymap_: Mapping[str, str], name: str) -> str:
    """How to write binding `name`'s (first) key for a person, e.g. `Ctrl+C`."""
    key = keymap_.get(PREFIX + name, DEFAULT_KEYS[name][0]).split(",")[0]
    return "+".join(part.capitalize() for part in key.split("+"))


def again_hint(keymap_: Mapping[str, str]) -> str:
    return f"Press {key_label(keymap_, 'interrupt_or_quit')} again to quit"


def ask_to_quit(app: App[Any], quit: Callable[[int], None]) -> bool:
    """Ask (a small dialog) before quitting while a turn runs; `quit(0)` if the user says
    so. False when the dialog is already up: the quit key pressed again quits."""
    from picobot_tui.widgets.quit_dialog import QuitDialog

    if isinstance(app.screen, QuitDialog):
        return False

    def answered(yes: bool | None) -> None:
        if yes:
            quit(0)

    app.push_screen(QuitDialog(), answered)
    return True


def scroll_transcript(conversation: ConversationPane, key: str) -> None:
    """PgUp/PgDn a page, Home the top, End the bottom (following new output again)."""
    transcript = conversation.transcript
    if key == "pageup":
        transcript.scroll_page_up(animate=False)
    elif key == "pagedown":
        transcript.scroll_page_down(animate=False)
    elif key == "home":
        transcript.scroll_home(animate=False)
    elif key == "end":
        conversation.jump_to_end()


CtrlC = Literal["interrupt", "arm", "quit"]


class DoublePress:
    """Ctrl+C: interrupt a running turn; on an idle prompt the first press arms, a second
    one within `window` seconds quits."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, window: float = 2.0) -> None:
        self.clock = clock
        self.window = window
        self._armed_at: float | None = None

    def press(self, *, running: bool) -> CtrlC:
        if running:
            self._armed_at = None
            return "interrupt"
        now = self.clock()
        if self._armed_at is not None and now - self._armed_at <= self.window:
            self._armed_at = None
            return "quit"
        self._armed_at = now
        return "arm"
