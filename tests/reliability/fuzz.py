"""Example counts for the property-based suites, and a tally of what really ran.

`examples(ci, slow)` is the `max_examples` of a hypothesis test: `ci` normally, `slow` with
`pytest --slow` (tests/reliability/conftest.py sets the switch before the modules import).
`tally(target)` counts each example a test body really ran; the counts are printed at the
end of the run, and RELIABILITY.md quotes them.
"""

from __future__ import annotations

from collections import Counter

SLOW = False
RAN: Counter[str] = Counter()
NOTES: list[str] = []
"""Figures of the non-hypothesis suites (e.g. the kill harness), printed at the end too."""


def examples(ci: int, slow: int) -> int:
    return slow if SLOW else ci


def tally(target: str) -> None:
    RAN[target] += 1


def fuzz(ci: int, slow: int, **kwargs: object):  # -> hypothesis.settings
    """hypothesis settings for a fuzz target: `examples(ci, slow)`, no deadline (subprocess
    and LiteLLM-free but disk-bound work varies a lot on a loaded machine)."""
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=examples(ci, slow),
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
        **kwargs,  # type: ignore[arg-type]
    )
