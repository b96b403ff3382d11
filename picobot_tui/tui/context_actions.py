"""`/context`, `/hooks`, `/help`, the palette and the custom commands in the TUI (a mixin of
`PicobotApp`, which it reaches as `self`). `/context`'s report is core/context_report.py's,
the same as `picobot context` prints; the custom commands and skills (core/custom_commands.py)
join the prompt's completion, `/help` and the palette once the app is ready, and `/name
args` of one is sent as a message (the loop fills it in)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.screen import Screen

from picobot_tui.tui.commands import PALETTE_COMMANDS, SLASH_COMMANDS, help_rows
from picobot_tui.tui.hooks_text import hooks_text
from picobot_tui.tui.view_events import HelpShown, NoticeShown
from picobot_tui.widgets.prompt import SlashCommand

if TYPE_CHECKING:
    from picobot_tui.core.custom_commands import CustomCommand
    from picobot_tui.tui.checkpoint_host import AppHost


class ContextActions:
    """Mixed into PicobotApp; `self` is the app, seen as an `AppHost` (app.py checks it)."""

    custom: dict[str, CustomCommand] = {}  # noqa: RUF012  (replaced, never mutated)
    """The custom commands and skills by name (loaded by `load_commands`)."""

    def _app(self) -> AppHost:
        return self  # type: ignore[return-value]

    def is_custom(self, name: str) -> bool:
        return name in self.custom

    async def load_commands(self) -> None:
        """Read the custom commands and skills; say which files were refused."""
        app = self._app()
        if app.runtime is None:
            return
        catalog = app.runtime.loop.context.commands()
        self.custom = catalog.commands
        app.prompt.commands[:] = [*SLASH_COMMANDS, *self._custom_slash()]
        for why in catalog.refused:
            await app.router.apply(NoticeShown("warning", app.runtime.scrub(why)))

    def _custom_slash(self) -> list[SlashCommand]:
        return [
            SlashCommand(c.name, c.argument_hint, c.description or f"({c.kind}: {c.path.name})")
            for c in self.custom.values()
        ]

    async def action_help(self) -> None:
        await self._app().router.apply(HelpShown(help_rows(self._custom_slash())))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)  # type: ignore[misc]
        app = self._app()
        for command in PALETTE_COMMANDS:
            yield SystemCommand(
                command.title, command.help, partial(app.run_action, command.action)
            )
        for c in self.custom.values():
            help_text = c.description or f"{c.kind} from {c.path}"
            yield SystemCommand(f"/{c.name}", help_text, partial(app.send, f"/{c.name}"))

    def _started(self) -> bool:
        app = self._app()
        if not app.ready or app.runtime is None:
            app.notify("Still starting: try again in a moment")
            return False
        return True

    async def action_hooks(self) -> None:
        app = self._app()
        if self._started() and app.runtime is not None:
            await app.router.apply(NoticeShown("info", hooks_text(app.runtime.loop.hooks)))

    async def action_context(self) -> None:
        app = self._app()
        if not self._started() or app.runtime is None:
            return
        # Imported here: the report is not needed for the first frame.
        from picobot_tui.core.context_report import context_report, report_text
        from picobot_tui.core.textsafe import terminal_safe

        runtime = app.runtime
        report = context_report(runtime.loop, app.sessions.session)
        text = terminal_safe(runtime.scrub(report_text(report)))
        await app.router.apply(NoticeShown("info", text))
