"""Wiring shared by the front ends: settings -> store, tools, tracer, model client, loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from picobot_tui.config.settings import Settings
from picobot_tui.config.workspace_rules import load_rules
from picobot_tui.core.approval import ConfirmFn
from picobot_tui.core.llm.demo import DemoModel, is_demo
from picobot_tui.core.llm.model import ModelClient
from picobot_tui.core.loop import AgentLoop
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.tools.base import ToolContext
from picobot_tui.core.tools.registry import ToolRegistry, default_registry
from picobot_tui.core.tracing import Tracer
from picobot_tui.run.exit_codes import EXIT_USAGE
from picobot_tui.run.options import RunError
from picobot_tui.run.session_stores import session_store
from picobot_tui.run.workspace import check_workspace, untrusted_note

if TYPE_CHECKING:
    from picobot_tui.core.hooks.fire import Hooks
    from picobot_tui.core.mcp.manager import McpManager


@dataclass
class Runtime:
    settings: Settings
    store: SessionStore
    loop: AgentLoop
    model: ModelClient
    tracer: Tracer
    tools: ToolRegistry
    scrub: Scrubber
    banner: str | None = None
    """Shown when the run starts (the offline demo picobot fell back to, run/context.py)."""
    mcp: McpManager | None = None
    """The configured MCP servers (None with none): a front end starts them (`start`, in its
    loop) and must `await close()` on the way out; the first turn waits for them."""


def make_model_client(settings: Settings, model: str) -> ModelClient:
    """The demo model, or the lazy LiteLLM client (litellm is imported on first use)."""
    if is_demo(model):
        return DemoModel.paced(settings.demo.words_per_second)
    from picobot_tui.core.llm.client import LiteLLMClient

    return LiteLLMClient(settings)


def use_model(runtime: Runtime, name: str, *, real: ModelClient | None = None) -> None:
    """Run the next model calls on `name`, swapping the client when the kind changes: the
    demo model for `demo`, else the current non-demo client, else `real` (a client given
    to the front end) or a new LiteLLM client."""
    current = runtime.model
    client: ModelClient
    if is_demo(name):
        client = (
            current
            if isinstance(current, DemoModel)
            else DemoModel.paced(runtime.settings.demo.words_per_second)
        )
    elif not isinstance(current, DemoModel):
        client = current
    else:
        client = real or make_model_client(runtime.settings, name)
    runtime.model = runtime.loop.model = client
    runtime.loop.model_name = name


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
    # Exists (a named one is made: the CLI refused a missing one already), is a directory,
    # and is not an implicit $HOME or /.
    ws = check_workspace(settings, create=True)
    scrub = Scrubber(settings.secrets())
    store = session_store(settings.sessions_dir, scrub=scrub, workspace=ws)
    tracer = Tracer(settings.traces_path, scrub=scrub)
    ctx = ToolContext(
        workspace=ws,
        config=settings.tools,
        secrets=tuple(settings.secrets()),
        saved=load_rules(ws),  # the always-allow answers saved for this workspace only
    )
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
    runtime = Runtime(settings, store, loop, client, tracer, tools, scrub)
    loop.hooks = load_hooks(settings, ws, scrub)
    if settings.tools.mcp_servers:
        from picobot_tui.core.mcp.manager import McpManager

        runtime.mcp = McpManager(
            settings.tools.mcp_servers,
            workspace=ws,
            registry=tools,
            connect_timeout=settings.tools.mcp_connect_timeout,
            scrub=scrub,
            log_path=settings.log_path,
            default_cwd=settings.data_dir / "mcp",  # an --ephemeral run's scratch folder too
        )
        loop.before_turn = runtime.mcp.ready_for_turn
    return runtime


def load_hooks(settings: Settings, ws: Path, scrub: Scrubber) -> Hooks | None:
    """The user's hooks, then the project's (`.picobot/config.json`); None with none.
    RunError (exit 2) for a project file that cannot be used."""
    from picobot_tui.config.project_hooks import project_hooks
    from picobot_tui.config.settings import ConfigError

    try:
        project = project_hooks(ws)
    except ConfigError as e:
        raise RunError(str(e), EXIT_USAGE) from None
    if not settings.hooks.any() and not project.any():
        return None
    from picobot_tui.core.hooks.fire import Hooks, entries

    found = entries(settings.hooks, "user") + entries(project, "project")
    return Hooks(found, workspace=ws, secrets=tuple(settings.secrets()), scrub=scrub)


def set_plan(runtime: Runtime, on: bool) -> None:
    """Plan mode on or off for the next calls (core/plan_mode.py); hooks see the mode."""
    runtime.tools.ctx.plan = on
    if runtime.loop.hooks is not None:
        runtime.loop.hooks.mode = "plan" if on else "default"


def make_untrusted(runtime: Runtime) -> None:
    """No context files from the workspace, no tool that changes anything, and no MCP
    server started (every call of one would be refused; starting it runs code)."""
    ws = runtime.tools.ctx.workspace
    runtime.tools.ctx.read_only = untrusted_note(ws)
    if runtime.loop.hooks is not None:  # the project's own hooks run only when trusted
        runtime.loop.hooks.drop("project")
    runtime.loop.context.workspace_files = False
    if runtime.mcp is not None:
        runtime.mcp.hold(f"not started: the workspace {ws} is not trusted")


@asynccontextmanager
async def mcp_running(runtime: Runtime) -> AsyncIterator[None]:
    """The run's MCP servers connect (in the background) while the block runs and are all
    closed after it, however it ends: no server process outlives the run."""
    mcp = runtime.mcp
    if mcp is None:
        yield
        return
    mcp.start()
    try:
        yield
    finally:
        await mcp.close()
