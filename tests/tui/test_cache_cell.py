"""The prompt cache shown live (issue 24): the gauge's cache line (read, written, hit rate
of the call and the session), and the status bar's countdown of the cache's warm time, what
caching saved, and once it went cold what the next call's re-write costs."""

from __future__ import annotations

from pathlib import Path

from picobot_tui.core.events import UsageUpdated
from picobot_tui.core.llm.model import UsageChunk
from picobot_tui.core.llm.scripted import ScriptedModel, text
from picobot_tui.tui.app import PicobotApp
from picobot_tui.tui.cache_clock import CacheClock
from tests.tui.app_support import make_settings, type_and_send, wait_idle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_the_status_counts_the_cache_down_and_says_what_a_rewrite_costs(
    tmp_path: Path,
) -> None:
    usage = UsageChunk(
        5000,
        20,
        cost=0.01,
        cache_read=4000,
        cache_write_5m=800,
        saved=0.009,
        rewrite_cost=0.0144,
        cache_marked=True,
    )
    model = ScriptedModel([[*text("hi")[:-1], usage]])
    clock = Clock()
    app = PicobotApp(make_settings(tmp_path), model_client=model, deterministic=True, clock=clock)
    async with app.run_test(size=(140, 36)) as pilot:
        assert app.status.cache == ""  # nothing cached yet: no cell
        await type_and_send(pilot, "hello")
        await wait_idle(pilot)
        assert app.status.cache == "cache 5:00 · saved $0.0090"
        assert app.status.cache_state == "warm"
        assert "4.0k read · 800 written · 80% (session 80%)" in str(app.gauge.render())
        clock.now += 221
        app.router.cache_tick(clock())
        assert app.status.cache.startswith("cache 1:19")
        clock.now += 80
        app.router.cache_tick(clock())
        assert app.status.cache == (
            "cache cold: the next call re-writes it (+$0.0144) · saved $0.0090"
        )
        assert app.status.cache_state == "cold"
        assert "cache cold" in str(app.status.render())


def test_a_provider_without_markers_shows_savings_but_no_countdown() -> None:
    clock = CacheClock()
    assert clock.cell(0) == ("", "")
    event = UsageUpdated(1000, 10, 1010, 0.001, 0.001, session_saved=0.0004)
    clock.usage(event, 0)  # OpenAI: cached by itself, no TTL picobot knows
    assert clock.cell(10_000) == ("saved $0.0004", "warm")
    clock.usage(UsageUpdated(1000, 10, 1010, 0.001, 0.002, cache_ttl_s=3600.0), 50)
    assert clock.cell(50 + 3599)[0] == "cache 0:01 · saved $0.0004"
