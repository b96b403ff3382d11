"""The TUI's plan mode: `/plan` and Shift+Tab switch it, the status bar and the prompt show
it, and a turn that ends with a plan asks what to do with it (widgets/plan_choice.py).

A mixin of `PicobotApp` (app.py stays small); what plan mode refuses is decided in the core
(core/plan_mode.py), where calls are dispatched. The choices: carry it out (plan mode ends
and "go ahead" is sent: the plan stays in the context), keep planning, discard (a note for
the model is recorded: do not carry it out), or save its steps to TODO.md (the todo tool,
in a trusted workspace only).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from picobot_tui.tui.checkpoint_host import AppHost

MODES = ("default", "plan")
"""What Shift+Tab cycles through."""
_STEP = re.compile(r"^\s{0,3}(?:\d+[.)]|[-*+])\s+(?:\[[ xX]\]\s+)?(.+?)\s*$")
MAX_STEPS = 50


def plan_steps(plan: str) -> list[str]:
    """The top-level numbered or bulleted lines of a plan (its first line when none)."""
    steps = [m.group(1) for line in plan.splitlines() if (m := _STEP.match(line))]
    if not steps:
        first = next((line.strip() for line in plan.splitlines() if line.strip()), "")
        steps = [first] if first else []
    return [s[:300] for s in steps[:MAX_STEPS]]


class PlanActions:
    """Mixed into PicobotApp; `self` is the app, seen as an `AppHost` (app.py checks it)."""

    def _app(self) -> AppHost:
        return self  # type: ignore[return-value]  # the app; app.py checks it is a host

    @property
    def mode(self) -> str:
        """ "plan" or "default": the run's options hold it (a runtime loaded later, or a new
        session's, follows them: `set_mode`)."""
        return "plan" if self._app().options.plan else "default"

    def set_mode(self, mode: str) -> None:
        """Switch plan mode on or off for the next calls, and show it."""
        from picobot_tui.run.runtime import set_plan

        app = self._app()
        app.options.plan = mode == "plan"  # a runtime loaded later starts in it
        if app.runtime is not None:
            set_plan(app.runtime, mode == "plan")
        app.status.mode = "plan" if mode == "plan" else ""
        app.prompt.set_mode(mode)

    def _announce(self) -> None:
        text = (
            "Plan mode: only reading tools run; the agent answers with a plan (Shift+Tab "
            "or /plan to leave)."
            if self.mode == "plan"
            else "Plan mode is off: tools run as usual (with approval)."
        )
        self._app().notify(text, title="mode")

    def action_plan(self) -> None:
        self.set_mode("default" if self.mode == "plan" else "plan")
        self._announce()

    def action_cycle_mode(self) -> None:
        app = self._app()
        if app.screen is not app.main_screen:  # in a dialog Shift+Tab moves the focus back
            app.screen.focus_previous()
            return
        self.set_mode(MODES[(MODES.index(self.mode) + 1) % len(MODES)])
        self._announce()

    def on_prompt_area_mode_cycle_requested(self, message: object) -> None:
        self.action_cycle_mode()

    def offer_plan(self) -> bool:
        """After a turn: in plan mode, an answer asks what to do with it. True when asked."""
        app = self._app()
        if self.mode != "plan" or app.lifecycle.outcome != "final" or app.queue:
            return False
        from picobot_tui.widgets.plan_choice import PlanChoice

        app.push_screen(PlanChoice(), self._plan_chosen)
        return True

    async def _plan_chosen(self, choice: str | None) -> None:
        from picobot_tui.core import plan_mode
        from picobot_tui.tui.view_events import NoticeShown

        app = self._app()
        if choice == "go":
            self.set_mode("default")
            await app.send(plan_mode.GO_AHEAD, user_sent=True)
        elif choice == "discard":
            if app.runtime is not None and app.sessions.session is not None:
                app.runtime.loop.note(app.sessions.session, plan_mode.DISCARDED)
            await app.router.apply(NoticeShown("info", "Plan discarded (still in plan mode)."))
        elif choice == "todo":
            await app.router.apply(NoticeShown("info", await self._save_steps()))
        app.prompt.input.focus()

    async def _save_steps(self) -> str:
        app = self._app()
        runtime = app.runtime
        steps = plan_steps(app.conversation.last_response() or "")
        if runtime is None or not steps:
            return "No plan to save."
        if runtime.tools.ctx.read_only is not None:
            return f"Not saved: {runtime.tools.ctx.read_only}"
        for step in steps:
            result = await runtime.tools.execute("todo", {"action": "add", "text": step})
            if not result.ok:
                return f"Not saved: {result.content}"
        return f"Saved {len(steps)} step(s) of the plan to TODO.md (still in plan mode)."
