"""Snapshots of plan mode: the plan's choice over the plan it is about (readable: not dimmed,
not hidden), the status bar's cell and the prompt's top border, at 80×24 and 120×40.
Update deliberately with `pytest tests/tui/test_plan_snapshot.py --snapshot-update` and
review the SVG."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from picobot_tui.core.events import BudgetChanged, UsageUpdated
from picobot_tui.core.llm.scripted import text
from picobot_tui.run.options import RunOptions
from tests.support import plan_fuzz
from tests.tui.app_support import make_app, type_and_send
from tests.tui.scenes import SESSION_KEY
from tests.tui.settle import settle, until


async def _plan_asked(pilot: Pilot) -> None:
    from picobot_tui.widgets.plan_choice import PlanChoice

    app = pilot.app
    await until(pilot, lambda: app.ready, "app loaded")
    await type_and_send(pilot, "how would you do it?")
    await until(pilot, lambda: isinstance(app.screen, PlanChoice), "the plan's choice")
    # The gauge's figures come from the system prompt, which names the (temporary)
    # workspace: fixed ones, as the scenes use.
    await app.router.apply(UsageUpdated(3_120, 214, 3_334, None, None))  # type: ignore[attr-defined]
    await app.router.apply(BudgetChanged(3_334, 128_000, 102_400))  # type: ignore[attr-defined]
    app.sessions.key = SESSION_KEY  # type: ignore[attr-defined]
    app.status.session = SESSION_KEY.removeprefix("cli:")  # type: ignore[attr-defined]
    await settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_plan_choice_shows_over_the_plan(snap_compare, settings, size) -> None:
    app = make_app(settings, [text(plan_fuzz.PLAN)], options=RunOptions(plan=True))
    assert snap_compare(app, terminal_size=size, run_before=_plan_asked)
