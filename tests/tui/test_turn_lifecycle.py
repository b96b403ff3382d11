"""The turn's lifecycle: what Esc, busy checks and the end of the worker read."""

from picobot_tui.tui.turn_lifecycle import TurnLifecycle


def test_nothing_to_cancel_before_a_turn_begins():
    lifecycle = TurnLifecycle()
    assert lifecycle.phase == "starting" and not lifecycle.running
    assert lifecycle.cancel() is False
    assert not lifecycle.cancelling


def test_a_cancelled_turn_reads_cancelled_until_the_next_begins():
    lifecycle = TurnLifecycle()
    lifecycle.begin()
    assert lifecycle.running and lifecycle.outcome is None
    assert lifecycle.cancel() is True
    lifecycle.end()
    assert not lifecycle.running and lifecycle.cancelled
    lifecycle.begin()  # the next turn starts afresh
    assert not lifecycle.cancelling and not lifecycle.cancelled


def test_a_turn_that_ended_cancelled_counts_as_cancelled_without_esc():
    lifecycle = TurnLifecycle()
    lifecycle.begin()
    lifecycle.outcome = "cancelled"  # e.g. the loop stopped the turn itself
    lifecycle.end()
    assert lifecycle.cancelled
