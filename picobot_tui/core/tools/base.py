"""What every tool is: a name, a JSON schema, and an async `run` confined by a ToolContext."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from picobot_tui.core.events import ToolStatus
from picobot_tui.core.saved_rules import SavedRules
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.settings import ToolsConfig

if TYPE_CHECKING:
    from picobot_tui.core.tools.file_access import FileAccess


class ToolError(Exception):
    """An expected tool failure; its message becomes the error result the model sees."""


@dataclass
class ToolContext:
    """Where and how tools may act."""

    workspace: Path
    config: ToolsConfig
    scrub: Scrubber | None = None
    """Known secrets, for tools that cut their output: they mask before they cut, so a key
    straddling the cut is not kept in pieces (the registry sets it from its own)."""
    secrets: tuple[str, ...] = ()
    """The config's secret values (API keys, extraHeaders): exec keeps them out of its env."""
    read_only: str | None = None
    """Why no tool may change anything here (an untrusted workspace), else None: the approval
    policy refuses every file change, command and todo write with this reason."""
    files: FileAccess | None = None
    """Where read_file, write_file and edit_file read and write text (an editor's buffers,
    through ACP), else None: the disk. See core/tools/file_access.py."""
    saved: SavedRules = field(default_factory=SavedRules)
    """The always-allow answers saved for this workspace only (the approval policy and
    web_fetch's redirects read them beside the config's lists)."""
    plan: bool = False
    """Plan mode: a call that could change anything is answered without running
    (core/plan_mode.py); the front end turns it on and off."""


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    content: str
    status: ToolStatus = "ok"


class Tool(ABC):
    """A tool the model can call. Subclasses set the class attributes and implement run()."""

    # Built-in tools set these on the class; an MCP tool sets them per instance.
    name: str
    description: str
    parameters: dict[str, Any]
    mutating: ClassVar[bool] = False
    """True when the tool changes files or runs commands: it passes through approval."""
    trusted: bool = False
    """The user trusts every call of this tool (an MCP server with `trust: "auto"`): it runs
    without asking under every policy, but never in an untrusted workspace."""

    def needs_approval(self, args: dict[str, Any]) -> bool:
        """Whether this call passes through approval (per call: `todo` reads need none).
        `args` are validated. Default: `mutating`."""
        return self.mutating

    def approval_host(self, args: dict[str, Any]) -> str | None:
        """The network host this call reaches, when approval is per host (web_fetch)."""
        return None

    def reads_only(self, args: dict[str, Any]) -> bool:
        """Whether this (validated) call changes nothing: it runs in plan mode. Default: it
        needs no approval and reaches no host (a `todo` read, read_file, list_dir)."""
        return not self.needs_approval(args) and self.approval_host(args) is None

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str:
        """What an approval prompt shows (a command, a diff). Default: the arguments.

        May raise ToolError (e.g. a path outside the workspace); ToolRegistry.preview turns
        that into text, so callers should go through the registry.
        """
        import json

        return json.dumps(args, indent=2, ensure_ascii=False)

    async def preview_async(self, args: dict[str, Any], ctx: ToolContext) -> str:
        """The preview when it needs to await (a file tool reading an editor's buffer through
        `ctx.files`). Default: `preview`. Same contract (may raise ToolError)."""
        return self.preview(args, ctx)

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str | ToolResult:
        """Do the work; raise ToolError for an expected failure.

        Return the text the model sees, or a ToolResult when the outcome is a failure that
        still has useful content (e.g. a command's non-zero exit). `args` were validated
        against `parameters` by the registry before this is called.
        """

    def describe(self, ctx: ToolContext) -> str:
        """The description the model sees; a tool whose truth depends on this machine or
        this config (exec: sandboxed or not) says it here."""
        return self.description

    def schema(self, ctx: ToolContext | None = None) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description if ctx is None else self.describe(ctx),
                "parameters": self.parameters,
            },
        }
