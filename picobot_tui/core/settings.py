"""The core's settings: what the agent, its model client and its tools read.

Plain pydantic models with no loading logic. `picobot_tui.config.settings.Settings` (the
pydantic-settings loader: config.json, JSONC, `PICOBOT_*` variables) extends `CoreSettings`
with the TUI's `ui` group, so the core never imports the configuration layer above it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, PrivateAttr, SecretStr, field_validator

from picobot_tui.core.hooks.config import HooksConfig
from picobot_tui.core.paths import picobot_home
from picobot_tui.core.settings_base import Section
from picobot_tui.core.shapes.mcp_server import McpServerConfig, check_server_names
from picobot_tui.core.shapes.providers import PROVIDER_NAMES

__all__ = ["CoreSettings", "McpServerConfig", "Section"]


class AgentDefaults(Section):
    """Defaults for every agent run."""

    model: str = "openai/gpt-4o-mini"
    """LiteLLM model string, e.g. `openai/gpt-4o-mini`, `anthropic/claude-sonnet-4-5`, `demo`."""
    workspace: str | None = None
    """Directory the tools work in (it must exist). Default: the current directory, which the
    TUI asks you to trust the first time (never your home directory or `/`)."""
    max_tokens: int = Field(default=8192, ge=1)
    """Maximum tokens per model response."""
    temperature: float = Field(default=0.7, ge=0, le=2)
    """Sampling temperature."""
    max_tool_iterations: int = Field(default=20, ge=1)
    """How many model calls with tool use one turn may make."""
    token_budget: int = Field(default=128000, ge=1000)
    """Context budget in tokens; the context is compacted at 80 % of it. It must leave room
    after the system prompt and tool schemas (picobot names the minimum)."""
    max_history_messages: int = Field(default=50, ge=2)
    """How many stored messages are sent to the model at most (every process: resumed, long
    TUI or `--json` runs); the session file keeps them all."""
    compaction: Literal["summarize", "drop"] = "summarize"
    """What replaces the older messages when the context reaches 80 % of tokenBudget:
    `summarize`, a summary the model writes in one extra call (dropping if that call fails);
    `drop`, a one-line notice."""
    context_window: int | None = Field(default=None, ge=1000)
    """The model's context window, if LiteLLM does not know it."""
    max_retries: int = Field(default=1, ge=0)
    """Retries of a transient provider error (rate limit, timeout, 5xx, overloaded)."""
    retry_backoff: float = Field(default=2.0, ge=0)
    """Seconds before the first retry (doubles each time; Retry-After wins)."""
    max_retry_wait: float = Field(default=30.0, ge=0)
    """The longest `Retry-After` picobot waits; a provider asking for longer fails the call
    at once, with a message naming the wait."""
    max_consecutive_failures: int = Field(default=3, ge=1)
    """Model calls in a row that failed after their retries, across turns, after which the
    agent stops taking turns (`--json` exits 1; the TUI waits for your next message)."""
    request_timeout: float = Field(default=120.0, gt=0)
    """Seconds to wait for the provider before giving up on a call."""


class AgentsConfig(Section):
    """The `agents` group."""

    defaults: AgentDefaults = AgentDefaults()


class ProviderConfig(Section):
    """Credentials and endpoint of one provider."""

    api_key: SecretStr | None = None
    """API key. Never written to sessions, traces or logs."""
    api_base: str | None = None
    """Base URL, e.g. `http://127.0.0.1:8000/v1` for an OpenAI-compatible server."""
    extra_headers: dict[str, str] = {}
    """Extra HTTP headers sent with every request. Their values are secrets: scrubbed from
    sessions, traces, logs and errors like the API key."""


class ProvidersConfig(Section):
    """The `providers` group: one entry per provider in `core.shapes.providers.PROVIDERS`."""

    openai: ProviderConfig = ProviderConfig()
    anthropic: ProviderConfig = ProviderConfig()
    openrouter: ProviderConfig = ProviderConfig()
    gemini: ProviderConfig = ProviderConfig()
    deepseek: ProviderConfig = ProviderConfig()
    groq: ProviderConfig = ProviderConfig()
    ollama: ProviderConfig = ProviderConfig()
    vllm: ProviderConfig = ProviderConfig()
    custom: ProviderConfig = ProviderConfig()


class ExecConfig(Section):
    """The `exec` tool."""

    timeout: float = Field(default=60.0, gt=0)
    """Seconds before a command is killed."""
    max_output_chars: int = Field(default=20000, ge=100)
    """Output kept from a command (head and tail) before toolResultMaxChars applies."""
    deny_patterns: list[str] = []
    """Extra regular expressions of commands to refuse (added to the built-in list)."""
    sandbox: Literal["auto", "bwrap", "none"] = "auto"
    """`auto`: run commands under bubblewrap when `bwrap` works, else unsandboxed (guard and
    approvals only); `bwrap`: refuse to run without it; `none`: never sandbox."""
    network: bool = False
    """Let sandboxed commands use the network (off: the sandbox has no network)."""
    env: Literal["clean", "inherit"] | list[str] = "clean"
    """Environment of commands: `clean` drops provider keys, the config's secrets and
    credential-like variables (`*_API_KEY`, `*_TOKEN`, `*_SECRET*`, `*PASSWORD*`, `AWS_*`, ...);
    `inherit` passes everything; a list of names passes those on top of `clean`."""


class WebConfig(Section):
    """The `web_fetch` tool."""

    timeout: float = Field(default=20.0, gt=0)
    """Seconds before a fetch is abandoned."""
    allow_private: bool = False
    """Allow loopback, link-local and private addresses (off: SSRF guard)."""
    allow_hosts: list[str] = []
    """Hosts web_fetch may reach without asking, in every workspace (the approval's
    "everywhere" adds to this; "always here" saves to permissions.json, for one workspace).
    Under `readonly`, and headless without `--yes`, only these (and the workspace's) are
    fetched."""


class ToolsConfig(Section):
    """The `tools` group."""

    restrict_to_workspace: bool = True
    """Refuse file paths (and exec working dirs) outside the workspace."""
    exec: ExecConfig = ExecConfig()
    web: WebConfig = WebConfig()
    approval: Literal["ask", "auto", "readonly"] = "ask"
    """`ask`: confirm commands and file changes; `auto`: allow all; `readonly`: refuse them."""
    always_allow: list[str] = []
    """Tools allowed without asking, in every workspace (the approval's "everywhere" adds to
    this; "always here" saves to permissions.json, for one workspace): a tool name, or an exec
    rule `"exec(git status:*)"` (docs/cli.md, "Always allow")."""
    tool_result_max_chars: int = Field(default=8000, ge=100)
    """Tool results longer than this are truncated before they reach the model."""
    mcp_servers: dict[str, McpServerConfig] = {}
    """MCP servers whose tools the agent may call, by name: `{"time": {"command": "python",
    "args": ["-m", "mcp_server_time"]}}` or `{"notes": {"url": "http://127.0.0.1:8931/mcp"}}`
    (docs/mcp.md)."""
    mcp_connect_timeout: float = Field(default=10.0, gt=0)
    """Seconds the first turn waits for MCP servers to connect; it then goes on without the
    ones still connecting (a notice names them)."""
    plan_read_only: list[str] = []
    """Tools that run in plan mode though they could change something: `web_fetch`, or an
    MCP tool (`mcp_<server>_<tool>`) its server does not mark `readOnlyHint` (docs/plan.md)."""

    _names = field_validator("mcp_servers")(check_server_names)

    @field_validator("plan_read_only")
    @classmethod
    def _plan_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if name != "web_fetch" and not name.startswith("mcp_"):
                raise ValueError(
                    f"{name!r} cannot run in plan mode: only web_fetch and MCP tools "
                    "(mcp_<server>_<tool>) may be listed; file changes, commands and todo "
                    "writes never run there"
                )
        return names


class CheckpointsConfig(Section):
    """The `checkpoints` group: what picobot keeps so every change of the agent can be
    undone (`picobot sessions rewind`, `/rewind`)."""

    enabled: bool = True
    """Record the prior state of every file write_file, edit_file and todo change, and
    snapshot the workspace around exec (a shadow git repository, never your `.git`)."""
    max_files: int = Field(default=20000, ge=1)
    """Workspaces with more files than this (outside `.gitignore`) are not snapshotted around
    exec: those calls are marked "not checkpointed" (you are told once)."""
    max_file_bytes: int = Field(default=5 * 1024 * 1024, ge=0)
    """Files larger than this are not kept: such a change is "not undoable" (the approval
    preview says so)."""
    max_bytes: int = Field(default=500 * 1024 * 1024, ge=0)
    """Storage cap of `~/.picobot/data/checkpoints`; the oldest sessions' checkpoints go
    first."""


class DemoConfig(Section):
    """The `demo` group: the offline demo model (`--model demo`)."""

    words_per_second: float = Field(default=50.0, ge=0)
    """How fast the demo types its answers, as a provider streams; `0` answers at once (the
    test suite runs the demo so: at 50, a test spent 2-9 s watching it type)."""


class CacheConfig(Section):
    """The `cache` group: prompt caching. Anthropic's models (also on Bedrock and Vertex)
    cache only where picobot marks the prompt: it marks the system prompt with the tools,
    the end of the kept head after a compaction, and the newest message of each call, and
    never a call whose prompt is not sent again (a compaction's summary, a one-shot `-m`
    without tools). OpenAI, DeepSeek and Gemini cache by themselves; picobot reads and
    prices their cached tokens either way."""

    enabled: bool = True
    """Mark prompts for the provider's cache (off: no markers; cached tokens a provider
    reports by itself are still read and priced)."""
    ttl: Literal["5m", "1h"] = "5m"
    """How long a marked prefix stays cached after its last use: `5m` (writes cost 1.25x
    the input price) or `1h` (2x; worth it when you pause longer than five minutes).
    Reads cost 0.1x either way."""


class CoreSettings(Section):
    """The groups the core reads: `agents`, `providers`, `tools`, `checkpoints`, `demo`,
    `cache`, `hooks`, and the derived paths."""

    agents: AgentsConfig = AgentsConfig()
    providers: ProvidersConfig = ProvidersConfig()
    tools: ToolsConfig = ToolsConfig()
    checkpoints: CheckpointsConfig = CheckpointsConfig()
    demo: DemoConfig = DemoConfig()
    cache: CacheConfig = CacheConfig()
    hooks: HooksConfig = HooksConfig()

    _state_home: Path | None = PrivateAttr(default=None)

    # -- derived paths -------------------------------------------------------------------
    @property
    def home(self) -> Path:
        """Where the user's config, templates, trust and saved rules are read from."""
        return picobot_home()

    @property
    def state_home(self) -> Path:
        """Where a run writes its sessions, traces, logs and checkpoints: the home, or the
        private scratch folder of an `--ephemeral` run (`use_state_home`)."""
        return self._state_home or self.home

    def use_state_home(self, path: Path) -> None:
        self._state_home = path

    @property
    def sessions_dir(self) -> Path:
        return self.state_home / "sessions"

    @property
    def data_dir(self) -> Path:
        return self.state_home / "data"

    @property
    def traces_path(self) -> Path:
        return self.data_dir / "traces" / "traces.jsonl"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "logs" / "picobot.log"

    @property
    def workspace_explicit(self) -> bool:
        """The workspace was named (`--workspace`, the config or its variable); else it is
        the current directory."""
        return bool(self.agents.defaults.workspace)

    @property
    def workspace_path(self) -> Path:
        ws = self.agents.defaults.workspace
        return Path(ws).expanduser().resolve() if ws else Path.cwd().resolve()

    def secrets(self) -> list[str]:
        """Every configured API key, extra-header value and MCP server env/header value, so
        writers can scrub them."""
        out = []
        for name in PROVIDER_NAMES:
            provider = getattr(self.providers, name)
            key = provider.api_key
            if key is not None and key.get_secret_value():
                out.append(key.get_secret_value())
            out.extend(v for v in provider.extra_headers.values() if v)
        for server in self.tools.mcp_servers.values():
            out.extend(v for v in (*server.env.values(), *server.headers.values()) if v)
            # `Authorization: Bearer <token>`: the token alone is masked too.
            out.extend(v.split()[-1] for v in server.headers.values() if len(v.split()) > 1)
        return out
