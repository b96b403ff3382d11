"""Configuration: ~/.picobot/config.json (camelCase keys) overridden by PICOBOT_* env vars.

The file may hold `//` line comments (`picobot onboard` writes a commented file); they are
stripped before parsing, keeping line numbers so errors can point at the right line.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasGenerator, BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic.alias_generators import to_camel, to_snake
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from picobot_tui.config.jsonc import strip_json_comments  # also imported from here
from picobot_tui.config.paths import config_path, picobot_home  # also imported from here
from picobot_tui.core.llm.providers import PROVIDER_NAMES


class Section(BaseModel):
    """Base for config groups: snake_case in Python, camelCase when written out."""

    model_config = ConfigDict(
        alias_generator=AliasGenerator(serialization_alias=to_camel),
        populate_by_name=True,
        extra="ignore",
        use_attribute_docstrings=True,
    )


class AgentDefaults(Section):
    """Defaults for every agent run."""

    model: str = "openai/gpt-4o-mini"
    """LiteLLM model string, e.g. `openai/gpt-4o-mini`, `anthropic/claude-sonnet-4-5`, `demo`."""
    workspace: str | None = None
    """Directory the tools work in. Default: `<PICOBOT_HOME>/workspace`."""
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
    """The `providers` group: one entry per provider in `core.llm.providers.PROVIDERS`."""

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
    """Hosts web_fetch may reach without asking (the approval's "always for this host" adds
    to this). Under `readonly`, and headless without `--yes`, only these are fetched."""


class ToolsConfig(Section):
    """The `tools` group."""

    restrict_to_workspace: bool = True
    """Refuse file paths (and exec working dirs) outside the workspace."""
    exec: ExecConfig = ExecConfig()
    web: WebConfig = WebConfig()
    approval: Literal["ask", "auto", "readonly"] = "ask"
    """`ask`: confirm commands and file changes; `auto`: allow all; `readonly`: refuse them."""
    always_allow: list[str] = []
    """Tools allowed without asking (the TUI's "always allow" adds to this)."""
    tool_result_max_chars: int = Field(default=8000, ge=100)
    """Tool results longer than this are truncated before they reach the model."""


class UiConfig(Section):
    """The `ui` group (TUI only)."""

    bell: Literal["never", "unfocused", "always"] = "unfocused"
    """Ring the terminal bell when a turn ends or approval is needed."""
    theme: str = "textual-dark"
    """Textual theme name."""
    show_timeline: bool = True
    """Show the tool-call timeline pane at start (ctrl+t toggles it)."""
    show_gauge: bool = True
    """Show the token-budget gauge at start (ctrl+b toggles it)."""


def _snake_keys(value: Any) -> Any:
    """Rename camelCase keys to field names, recursively (header dicts keep their keys)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = to_snake(k) if isinstance(k, str) else k
            out[key] = v if key == "extra_headers" else _snake_keys(v)
        return out
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value


class ConfigError(Exception):
    """A config problem the user must fix; the message says where and what."""


def _line_of_key(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line number of the last key of `loc` in the raw file."""
    for part in reversed(loc):
        if not isinstance(part, str):
            continue
        names = {part, to_camel(part)}
        for n, line in enumerate(text.splitlines(), 1):
            if any(f'"{name}"' in line for name in names):
                return n
    return None


def _read_config_file(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, ""
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config file: {e}") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(strip_json_comments(text))
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"{path}, line {e.lineno}, column {e.colno}: invalid JSON: {e.msg}.\n"
            "Fix the file, or move it away and run `picobot onboard` to write a fresh one."
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}, line 1: the config must be a JSON object {{...}}.")
    return _snake_keys(data), text


class _JsoncFileSource(PydanticBaseSettingsSource):
    """The (commented, camelCase) config file, already read and snake-cased by the loader.

    The loader reads it itself (from a path chosen at run time) so that a broken file gets
    a message with its line and column; this source only hands the result to pydantic.
    """

    def __init__(self, settings_cls: type[BaseSettings], data: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._data = data

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._data)


class Settings(BaseSettings):
    """All of picobot's configuration."""

    model_config = SettingsConfigDict(
        env_prefix="PICOBOT_",
        env_nested_delimiter="__",
        extra="ignore",
        alias_generator=AliasGenerator(serialization_alias=to_camel),
        populate_by_name=True,
        use_attribute_docstrings=True,
    )

    agents: AgentsConfig = AgentsConfig()
    providers: ProvidersConfig = ProvidersConfig()
    tools: ToolsConfig = ToolsConfig()
    ui: UiConfig = UiConfig()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        data = _FILE_DATA.get("data", {})
        return (init_settings, env_settings, _JsoncFileSource(settings_cls, data))

    # -- derived paths -------------------------------------------------------------------
    @property
    def home(self) -> Path:
        return picobot_home()

    @property
    def sessions_dir(self) -> Path:
        return self.home / "sessions"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def traces_path(self) -> Path:
        return self.data_dir / "traces" / "traces.jsonl"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "logs" / "picobot.log"

    @property
    def workspace_path(self) -> Path:
        ws = self.agents.defaults.workspace
        return Path(ws).expanduser().resolve() if ws else (self.home / "workspace").resolve()

    def secrets(self) -> list[str]:
        """Every configured API key and extra-header value, so writers can scrub them."""
        out = []
        for name in PROVIDER_NAMES:
            provider = getattr(self.providers, name)
            key = provider.api_key
            if key is not None and key.get_secret_value():
                out.append(key.get_secret_value())
            out.extend(v for v in provider.extra_headers.values() if v)
        return out


# The file's data is handed to the source through this slot because pydantic-settings
# builds sources from the class, not from an instance.
_FILE_DATA: dict[str, dict[str, Any]] = {}


def _unknown_keys(data: dict[str, Any], model: type[BaseModel], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, value in data.items():
        field = model.model_fields.get(key)
        path = f"{prefix}{to_camel(key)}"
        if field is None:
            out.append(path)
            continue
        ann = field.annotation
        if isinstance(value, dict) and isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_unknown_keys(value, ann, path + "."))
    return out


def load_settings(path: Path | None = None) -> tuple[Settings, list[str]]:
    """Load config from file + env. Returns the settings and warnings (e.g. unknown keys).

    Raises ConfigError with the file, line and key when the config is invalid.
    """
    path = path or config_path()
    data, text = _read_config_file(path)
    warnings = [
        f"{path}: unknown config key `{k}` (ignored)" for k in _unknown_keys(data, Settings)
    ]
    _FILE_DATA["data"] = data
    try:
        settings = Settings()
    except ValidationError as e:
        lines = []
        for err in e.errors():
            loc = tuple(err.get("loc", ()))
            key = ".".join(to_camel(p) if isinstance(p, str) else str(p) for p in loc)
            line = _line_of_key(text, loc) if text else None
            where = f"{path}, line {line}" if line else f"{path} (or PICOBOT_* env)"
            lines.append(f"{where}: `{key}`: {err.get('msg')}")
        raise ConfigError("Invalid configuration:\n  " + "\n  ".join(lines)) from None
    except SettingsError as e:
        # An env value pydantic-settings cannot even parse (a list or object field needs JSON).
        m = re.search(r'field "(\w+)"', str(e))
        prefix = f"PICOBOT_{m.group(1).upper()}" if m else "PICOBOT_"
        names = sorted(k for k in os.environ if k.upper().startswith(prefix)) or [prefix + "*"]
        raise ConfigError(
            f"Invalid configuration in the environment ({', '.join(names)}): {e}. Values of "
            "list and object settings must be JSON, e.g. "
            "PICOBOT_TOOLS__ALWAYS_ALLOW='[\"read_file\"]'."
        ) from None
    finally:
        _FILE_DATA.pop("data", None)
    return settings, warnings
