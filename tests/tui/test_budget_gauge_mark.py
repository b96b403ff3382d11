"""The gauge's 80 % mark sits at 80 % of the bar, also on an empty session (issue 15)."""

from __future__ import annotations

from picobot_tui.config.settings import Settings
from picobot_tui.core.events import BudgetChanged
from tests.tui.app_support import make_app, wait_for


def _bar(app) -> str:
    return app.gauge.render().plain.splitlines()[0]


async def test_the_mark_is_at_80_percent_on_an_empty_session(settings: Settings) -> None:
    settings.agents.defaults.token_budget = 100_000
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.status.state == "idle", "app idle")
        await pilot.pause()
        width = app.gauge.content_region.width
        bar = _bar(app)
        assert len(bar) == width and set(bar) == {"░", "┃"}  # nothing used yet
        assert bar.index("┃") == round(width * 0.8), bar
        # The same cell once the loop reports the threshold.
        await app.router.apply(BudgetChanged(0, 100_000, 80_000))
        await pilot.pause()
        assert _bar(app).index("┃") == round(width * 0.8)
