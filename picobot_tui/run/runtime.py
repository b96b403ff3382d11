"""Wiring shared by the front ends: settings -> store, tools, tracer, model client, loop."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from picobot_tui.config.settings import Settings
from picobot_tui.core.approval import ConfirmFn
from picobot_tui.core.llm.demo import DemoModel, is_demo
from picobot_tui.core.llm.model import ModelClient
from picobot_tui.core.loop import AgentLoop
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.registry import ToolRegistry, default_registry
from picobot_tui.core.tracing import Tracer


@dataclass
class Runtime:
    settings: Settings
    store: SessionStore
    loop: AgentLoop
    model: ModelClient
    tracer: Tracer
    tools: ToolRegistry
    scrub: Scrubber


def make_model_client(settings: Settings, model: str) -> ModelClient:
    """The demo model, or the lazy LiteLLM client (litellm is imported on first use)."""
    if is_demo(model):
        return DemoModel()
    from picobot_tui.core.llm.client import LiteLLMClient

    return LiteLLMClient(settings)


def ensure_workspace(ws: Path) -> None:
    """Create the workspace if needed; RunError (exit 2) when it cannot be a directory."""
    from picobot_tui.run.options import RunError

    try:
        ws.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        pass  # a file, or a link to one: reported below
    except OSError as e:
        raise RunError(
            f"cannot create the workspace {ws}: {e.strerror or e}. "
            "Pass --workspace DIR, or set agents.defaults.workspace in the config.",
            2,
        ) from None
    if not ws.is_dir():
        raise RunError(
            f"the workspace {ws} is not a directory. "
            "Pass --workspace DIR, or set agents.defaults.workspace in the config.",
            2,
        )


def build_runtime(
    settings: Settings,
    *,
    model: str | None = None,
    workspace: Path | None = None,
    confirm: ConfirmFn | None = None,
    model_client: ModelClient | None = None,
) -> Runtime:
    if workspace is not None:
        settings.agents.defaults.workspace = str(workspace)
    model_name = model or settings.agents.defaults.model
    ws = settings.workspace_path
    ensure_workspace(ws)
    scrub = Scrubber(settings.secrets())
    store = SessionStore(settings.sessions_dir, scrub=scrub)
    tracer = Tracer(settings.traces_path, scrub=scrub)
    ctx = ToolContext(workspace=ws, config=settings.tools, secrets=tuple(settings.secrets()))
    tools = default_registry(ctx, scrub=scrub)
    client = model_client or make_model_client(settings, model_name)
    loop = AgentLoop(
        settings,
        model=client,
        store=store,
        tools=tools,
        tracer=tracer,
        confirm=confirm,
        model_name=model_name,
        scrub=scrub,
    )
    return Runtime(settings, store, loop, client, tracer, tools, scrub)
