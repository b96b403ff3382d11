"""`/model NAME`: check the name, swap the model client, show it; the names `/model `
completes; and `/model` alone, a picker of them (widgets/model_picker.py).

The check asks LiteLLM's provider resolution (core/llm/model_names.py), which may import
LiteLLM: it runs in a thread, never on the UI thread. An unknown name is a warning in the
conversation and no switch; a known one without a key switches and says what to do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from picobot_tui.run.context import credentials_hint, model_problem
from picobot_tui.run.runtime import use_model
from picobot_tui.tui.view_events import ModelShown, NoticeShown, ViewEvent
from picobot_tui.widgets.prompt import Completion

if TYPE_CHECKING:
    from picobot_tui.config.settings import Settings
    from picobot_tui.core.llm.model import ModelClient
    from picobot_tui.run.runtime import Runtime
    from picobot_tui.widgets.prompt import PromptArea

log = logging.getLogger("picobot")

COMMAND = "/model "
SHOWN = 20
"""At most this many names in the completion list (LiteLLM knows hundreds)."""


class ModelCompletion:
    """The prompt's completion source for `/model NAME`: the known names starting with
    what is typed (with or without the provider prefix), the exact name first."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def __call__(self, text: str) -> list[Completion]:
        if not text.lower().startswith(COMMAND) or "\n" in text:
            return []
        typed = text[len(COMMAND) :].strip()
        lower = typed.lower()
        found = [
            n
            for n in self.names
            if n.lower().startswith(lower) or n.partition("/")[2].lower().startswith(lower)
        ]
        found.sort(key=lambda n: n != typed)  # stable: otherwise in the given order
        return [Completion(f"{COMMAND}{n}", n, submit=True) for n in found[:SHOWN]]


def complete_models(prompt: PromptArea, names: list[str]) -> None:
    """Let `prompt` complete `/model ` with `names` (UI thread)."""
    for source in prompt.completion_sources:
        if isinstance(source, ModelCompletion):
            source.names = names
            return
    prompt.completion_sources.append(ModelCompletion(names))


def model_names(settings: Settings, *, with_litellm: bool) -> list[str]:
    """`demo`, the configured model and (`with_litellm`: importing it) LiteLLM's chat models
    of picobot's providers."""
    from picobot_tui.core.llm.model_names import completions

    litellm = None
    if with_litellm:
        from picobot_tui.core.llm.client import load_litellm

        try:
            litellm = load_litellm()
        except Exception as e:  # completion then offers the configured names only
            log.warning("LiteLLM's model list is not available: %s", e)
    return completions(settings, litellm)


def unknown_problem(settings: Settings, name: str) -> str | None:
    try:
        return model_problem(settings, name, how="/model")
    except Exception as e:  # the first real call reports the problem anyway
        log.warning("model name check failed: %s", e)
        return None


async def switch_model(
    runtime: Runtime,
    name: str,
    *,
    real: ModelClient | None,
    show: Callable[[ViewEvent], Awaitable[None]],
    notify: Callable[[str], None],
) -> bool:
    """Switch the next turns to `name` (False, with a warning, when it is unknown). `real`:
    the client the app was given (tests), used again when leaving the demo model."""
    settings = runtime.settings
    if problem := await asyncio.to_thread(unknown_problem, settings, name):
        await show(NoticeShown("error", f"Model not switched: {problem}"))
        return False
    use_model(runtime, name, real=real)
    await show(ModelShown(name))
    if real is None and (hint := credentials_hint(settings, name, how="/model")):
        await show(NoticeShown("error", hint))
    notify(f"Model switched to {name} for the next turns")
    return True


def picker_names(settings: Settings, current: str, *, with_litellm: bool) -> list[str]:
    """The names `/model` offers (core/llm/model_names.choices). LiteLLM's list only when it
    is imported already or `with_litellm` (then this imports it): call it from a thread."""
    import sys

    from picobot_tui.core.llm.model_names import choices

    litellm = sys.modules.get("litellm")
    if litellm is None and with_litellm:
        from picobot_tui.core.llm.client import load_litellm

        try:
            litellm = load_litellm()
        except Exception as e:  # the picker then offers the configured names only
            log.warning("LiteLLM's model list is not available: %s", e)
    try:
        return choices(settings, current, litellm)
    except Exception as e:  # a broken list must not keep the user from switching
        log.warning("the model list failed: %s", e)
        return [current, settings.agents.defaults.model]


def open_picker(app: Any, *, with_litellm: bool) -> None:
    """`/model` with no name: the picker over the app, at once with the names known without
    asking anyone; the full list (a server's, LiteLLM's) fills in from a thread. Choosing
    one runs `/model NAME` (the app's `action_model`); Esc changes nothing."""
    from picobot_tui.widgets.model_picker import ModelPicker

    runtime = app.runtime
    if runtime is None:
        app.notify("Still starting: try again in a moment")
        return
    settings, current = runtime.settings, runtime.loop.model_name
    configured = settings.agents.defaults.model
    picker = ModelPicker(list(dict.fromkeys([current, configured, "demo"])), current, configured)

    async def chosen(name: str | None) -> None:
        if name and name != current:
            await app.action_model(name)

    async def fill() -> None:
        names = await asyncio.to_thread(picker_names, settings, current, with_litellm=with_litellm)
        if picker.is_attached:
            picker.names = tuple(names)

    app.push_screen(picker, chosen)
    app.run_worker(fill(), group="model-list", exclusive=True, exit_on_error=False)
