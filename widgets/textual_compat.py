"""Every use of a private Textual name, in one place (Textual is pinned >=8.2,<8.3).

tests/tui/test_textual_compat.py checks each one exists and behaves as used here, so a
Textual upgrade that renames or changes one fails there, loudly, not in a subtle UI bug."""

from __future__ import annotations

from textual import events
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import TextArea
from textual.widgets.text_area import Location


class ScrollUpdateHook(VerticalScroll):
    """A VerticalScroll whose `virtual_size_changed` runs after Textual has updated the
    scrollbars for a new virtual size (Textual's `_scroll_update`; there is no public event at that point, and
    `Resize` comes too late to re-anchor before the frame is painted)."""

    def _scroll_update(self, virtual_size: Size) -> None:
        super()._scroll_update(virtual_size)
        self.virtual_size_changed(virtual_size)

    def virtual_size_changed(self, virtual_size: Size) -> None:
        """Override: the content's size changed."""


def anchor_released(widget: Widget) -> bool:
    """True once the user scrolled an anchored widget away from the bottom (Textual keeps
    the anchor set but stops following; only `_anchor_released` says so)."""
    return bool(widget._anchor_released)


def drop_cached_placements(widget: Widget | None) -> None:
    """Make `widget`'s layout place its children anew on the next pass: Textual's
    vertical/horizontal layouts cache placements in `_cached_placements` and a skipped
    layout mark leaves them stale (see `ToolBlock` in blocks.py)."""
    layout = getattr(widget, "layout", None)
    if layout is not None and hasattr(layout, "_cached_placements"):
        layout._cached_placements = None


def stream_content_width(widget: Widget, width: int) -> int:
    """The width `widget`'s content really gets, for its `get_content_height(width)`.

    Textual 8.2's stream layout (the transcript's) measures a child's height at the
    container's width less the child's gutter, and then places it narrower by its left and
    right margins: a notice (margins 2 and 2) was measured 4 cells too wide and lost its
    last lines when they wrapped (issue 25, point 6; tests/tui/test_textual_compat.py
    checks Textual still does so). Elsewhere `width` is already right."""
    from textual.layouts.stream import StreamLayout

    parent = widget.parent
    if isinstance(getattr(parent, "layout", None), StreamLayout):
        margin = widget.styles.margin
        return max(1, width - margin.left - margin.right)
    return width


class KeyFirstTextArea(TextArea):
    """A TextArea that sees each key before TextArea's own handling (Textual's `_on_key`,
    which inserts text and runs before bindings)."""

    async def _on_key(self, event: events.Key) -> None:
        if not await self.key_first(event):
            await super()._on_key(event)

    async def key_first(self, event: events.Key) -> bool:
        """Override: True if the key was handled (TextArea then ignores it)."""
        return False

    async def run_own_binding(self, key: str) -> bool:
        """Run this widget's own (non-priority) binding for `key` now; True if an action ran
        (False when none matches, or it raised SkipAction, e.g. copy with no selection).

        Textual runs a focused widget's bindings only once the key has bubbled up to the app
        (`App._on_key` -> `_check_bindings`, one message queue per ancestor), while typed
        text and Enter are handled here at once: backspace then Enter typed quickly sent the
        text from before the backspace. Run here, an edit key takes effect in key order.
        Reads `_bindings` and the app's `_keymap` (as Textual's binding chain does)."""
        bindings = self._bindings
        keymap = self.app._keymap
        if keymap:  # a copy: the keymap is applied per lookup, as Textual does
            bindings = bindings.copy()
            bindings.apply_keymap(keymap)
        for binding in bindings.key_to_bindings.get(key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                return True
        return False

    def insert_as_typed(self, text: str, start: Location, end: Location) -> None:
        """Replace start..end with text as typing would (undo history, cursor, `Changed`),
        via Textual's `_replace_via_keyboard` (which also honours `read_only`)."""
        self._replace_via_keyboard(text, start, end)
