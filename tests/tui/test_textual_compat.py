"""The private Textual names widgets/textual_compat.py relies on still exist and behave so."""

from __future__ import annotations

import inspect

from picobot_tui.widgets.textual_compat import (
    KeyFirstTextArea,
    ScrollUpdateHook,
    anchor_released,
    drop_cached_placements,
)
from textual import events
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Static, TextArea


def test_the_private_names_exist_with_the_signatures_used() -> None:
    assert list(inspect.signature(Widget._scroll_update).parameters) == ["self", "virtual_size"]
    assert inspect.iscoroutinefunction(TextArea._on_key)
    assert list(inspect.signature(TextArea._replace_via_keyboard).parameters) == [
        "self",
        "insert",
        "start",
        "end",
    ]
    assert anchor_released(VerticalScroll()) is False  # set in Widget.__init__


class _StreamHost(App[None]):
    CSS = "#transcript { layout: stream; }"  # as styles/app.tcss lays out the transcript

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="transcript"):
            for i in range(5):
                yield Static(f"block {i}")


async def test_cached_placements_are_what_the_stream_layout_reuses_and_can_be_dropped() -> None:
    """Textual's stream layout keeps `_cached_placements` after a pass; dropping it is what
    ToolBlock relies on to make the transcript place its blocks again."""
    async with _StreamHost().run_test() as pilot:
        transcript = pilot.app.query_one("#transcript")
        await pilot.pause()
        assert transcript.layout._cached_placements is not None  # filled by the layout pass
        drop_cached_placements(transcript)
        assert transcript.layout._cached_placements is None
        drop_cached_placements(None)  # no parent: nothing to do


class _Scroll(ScrollUpdateHook):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[Size] = []

    def virtual_size_changed(self, virtual_size: Size) -> None:
        self.sizes.append(virtual_size)


class _Area(KeyFirstTextArea):
    def __init__(self) -> None:
        super().__init__(tab_behavior="focus")
        self.seen: list[str] = []

    async def key_first(self, event: events.Key) -> bool:
        self.seen.append(event.key)
        if event.key == "x":
            self.insert_as_typed("[x]", *self.selection)
            event.stop()
            event.prevent_default()
            return True
        return False


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        with _Scroll():
            for i in range(30):
                yield Static(f"line {i}")
        yield _Area()


async def test_scroll_update_runs_on_a_new_virtual_size_and_the_anchor_release_is_seen() -> None:
    app = _Host()
    async with app.run_test(size=(40, 10)) as pilot:
        scroll = app.query_one(_Scroll)
        await pilot.pause()
        assert scroll.sizes and scroll.sizes[-1].height >= 30
        before = len(scroll.sizes)
        await scroll.mount(Static("one more"))
        await pilot.pause()
        assert len(scroll.sizes) > before
        scroll.anchor()
        await pilot.pause()
        assert scroll.is_anchored and not anchor_released(scroll)
        scroll.scroll_to(y=0, animate=False, immediate=True)  # the user scrolls away
        await pilot.pause()
        assert scroll.is_anchored and anchor_released(scroll)


async def test_text_area_keys_go_through_key_first_then_textarea() -> None:
    app = _Host()
    async with app.run_test() as pilot:
        area = app.query_one(_Area)
        area.focus()
        await pilot.press("a", "x", "b")
        assert area.seen == ["a", "x", "b"]
        assert area.text == "a[x]b"  # TextArea inserted a and b itself; x was ours
        area.read_only = True
        await pilot.press("x")
        assert area.text == "a[x]b"  # inserted as typed: read_only is honoured


class _EagerArea(KeyFirstTextArea):
    """Runs its own bindings at once and records what the text was at each Enter."""

    def __init__(self) -> None:
        super().__init__()
        self.at_enter: list[str] = []

    async def key_first(self, event: events.Key) -> bool:
        if event.key == "enter":
            self.at_enter.append(self.text)
        elif not await self.run_own_binding(event.key):
            return False
        event.stop()
        event.prevent_default()
        return True


class _EagerHost(App[None]):
    def compose(self) -> ComposeResult:
        yield _EagerArea()


def test_the_binding_lookup_names_run_own_binding_reads_exist() -> None:
    from textual.binding import BindingsMap

    area = _EagerArea()
    assert isinstance(area._bindings, BindingsMap)
    assert [b.action for b in area._bindings.key_to_bindings["backspace"]] == ["delete_left"]
    assert App()._keymap == {}


async def test_run_own_binding_applies_an_edit_key_before_the_next_key() -> None:
    """Backspace then Enter (no pause): the text Enter sees is the edited one; a key with no
    binding, and copy with nothing selected (SkipAction), report False."""
    app = _EagerHost()
    async with app.run_test() as pilot:
        area = app.query_one(_EagerArea)
        area.focus()
        await pilot.press("a", "b", "c", "backspace", "enter", "ctrl+w", "x", "enter")
        assert area.at_enter == ["ab", "x"]
        assert not await area.run_own_binding("ctrl+c")  # nothing selected: skipped
        assert not await area.run_own_binding("f12")
        app.set_keymap({"unrelated.id": "f5"})  # a keymap is applied to a copy
        assert await area.run_own_binding("backspace") and area.text == ""


async def test_the_stream_layout_measures_a_child_with_its_margins_and_the_fix_undoes_it() -> None:
    """Textual 8.2's stream layout asks a child's height at the container's width without
    the child's margins; `stream_content_width` takes them off again. When Textual fixes
    it, this fails: drop the correction then (it would take the margins off twice)."""
    from picobot_tui.widgets.textual_compat import stream_content_width

    asked: list[int] = []

    class Measured(Static):
        def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
            asked.append(width)
            return super().get_content_height(container, viewport, width)

    class StreamApp(App[None]):
        CSS = "#box { layout: stream; } Measured { margin: 0 3; }"

        def compose(self) -> ComposeResult:
            with VerticalScroll(id="box"):
                yield Measured("word " * 40)

    app = StreamApp()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        widget = app.query_one(Measured)
        assert asked and asked[-1] == widget.content_region.width + 6  # the margins counted
        assert stream_content_width(widget, asked[-1]) == widget.content_region.width
        assert stream_content_width(Static(), 40) == 40  # not in a stream layout: as given
