"""IdleCollector: full collections only when the app is quiet, or when far overdue."""

from __future__ import annotations

import gc

import pytest

from picobot_tui.tui.idle_gc import NEVER, IdleCollector


@pytest.fixture
def collector():
    ran: list[int] = []
    c = IdleCollector(due=2, force=5, quiet=2.0, collect=lambda: ran.append(1))
    c.ran = ran  # type: ignore[attr-defined]
    saved = gc.get_threshold()
    c.install()
    yield c
    c.uninstall()
    assert gc.get_threshold() == saved


def _younger_collections(n: int) -> None:
    for _ in range(n):
        gc.collect(1)  # counts towards generation 2, like CPython's own


def test_install_stops_cpythons_full_collections_and_keeps_the_young_ones(collector):
    gen0, gen1, gen2 = gc.get_threshold()
    assert gen2 == NEVER and gen0 > 0 and gen1 > 0


def test_runs_when_due_and_quiet_only(collector):
    gc.collect()  # start from zero younger collections
    _younger_collections(2)
    assert not collector.tick(now=10.0, last_input=9.5, busy=False)  # typing
    assert not collector.tick(now=10.0, last_input=None, busy=True)  # a turn is running
    assert collector.tick(now=10.0, last_input=7.0, busy=False)
    assert collector.ran == [1]


def test_not_due_means_no_collection(collector):
    gc.collect()
    assert not collector.tick(now=10.0, last_input=None, busy=False)
    assert collector.ran == []


def test_far_overdue_runs_even_while_busy(collector):
    gc.collect()
    _younger_collections(5)
    assert collector.tick(now=10.0, last_input=9.99, busy=True)
    assert collector.ran == [1]
