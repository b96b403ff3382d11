"""todo: the agent's own checklist, kept in `<workspace>/TODO.md` as `- [ ]` / `- [x]` items.

`read` needs no approval; every change (add, check, uncheck, remove, write) follows the
approval policy like write_file, and its preview is the diff of TODO.md. A TODO.md that is a
symbolic link is refused, even when it points inside the workspace: a repository shipping
`TODO.md -> Makefile` must not get its Makefile rewritten. Lines that are not checklist items
(headings, notes) are kept as they are.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.tools.base import Tool, ToolContext, ToolError
from picobot_tui.core.tools.paths import resolve_in_workspace, workspace_root
from picobot_tui.core.tools.text import encode_utf8, unified_diff

TODO_FILE = "TODO.md"
_ITEM_RE = re.compile(r"^(\s*[-*+]\s+\[)([ xX])(\]\s*)(.*)$")
ACTIONS = ("read", "add", "check", "uncheck", "remove", "write")


class TodoTool(Tool):
    name = "todo"
    description = (
        "Read or update your checklist in TODO.md. Actions: `read`; `add` (with `text`); "
        "`check` / `uncheck` / `remove` (with `index`, the item number `read` shows); "
        "`write` (with `content`, the whole new markdown file, replacing it)."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do."},
            "text": {"type": "string", "minLength": 1, "description": "Item text, for add."},
            "index": {
                "type": "integer",
                "minimum": 1,
                "description": "1-based item number, for check, uncheck and remove.",
            },
            "content": {"type": "string", "description": "Whole new TODO.md, for write."},
        },
        "required": ["action"],
        "additionalProperties": False,
    }

    def needs_approval(self, args: dict[str, Any]) -> bool:
        return args.get("action") != "read"

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = todo_path(ctx)
        new, _ = _plan(path, args)
        if new is None:
            return f"todo {args['action']} (no change to {TODO_FILE})"
        old = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
        return unified_diff(old, new, TODO_FILE)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return await asyncio.to_thread(_apply, todo_path(ctx), args)


def todo_path(ctx: ToolContext) -> Path:
    """`<workspace>/TODO.md`, refusing a symbolic link (checked with lstat, not followed)."""
    resolved = resolve_in_workspace(TODO_FILE, ctx)  # a link out: "outside the workspace"
    if (workspace_root(ctx) / TODO_FILE).is_symlink():
        raise ToolError(
            f"{TODO_FILE} is a symbolic link; todo does not follow links (it would write "
            "to the file the link points to). Remove the link or use write_file."
        )
    return resolved


def _need(args: dict[str, Any], key: str) -> Any:
    if args.get(key) is None:
        raise ToolError(f"action {args['action']!r} needs `{key}`")
    return args[key]


def _read(path: Path) -> list[str]:
    if not path.exists():
        return []
    if not path.is_file():
        raise ToolError(f"{TODO_FILE} is not a regular file")
    try:
        return path.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise ToolError(
            f"{TODO_FILE} is not UTF-8 text; fix or rewrite it with action=write"
        ) from None


def _items(lines: list[str]) -> list[int]:
    """Line numbers (0-based) of checklist items, in order."""
    return [i for i, line in enumerate(lines) if _ITEM_RE.match(line)]


def _show(lines: list[str]) -> str:
    matches = [m for m in map(_ITEM_RE.match, lines) if m]
    if not matches:
        return f"{TODO_FILE} has no checklist items yet (add one with action=add)."
    done = sum(m.group(2) in "xX" for m in matches)
    out = [f"{TODO_FILE}: {done} of {len(matches)} done"]
    for n, m in enumerate(matches, 1):
        out.append(f"{n}. [{'x' if m.group(2) in 'xX' else ' '}] {m.group(4)}")
    return "\n".join(out)


def _plan(path: Path, args: dict[str, Any]) -> tuple[str | None, str]:
    """(the new text of TODO.md or None when the action changes nothing, the reply)."""
    action = args["action"]
    if action == "write":
        content = _need(args, "content")
        text = content if content.endswith("\n") or not content else content + "\n"
        return text, _show(content.splitlines())
    lines = _read(path)
    if action == "read":
        return None, _show(lines)
    if action == "add":
        text = " ".join(_need(args, "text").split())
        if not text:
            raise ToolError("`text` is blank")
        lines.append(f"- [ ] {text}")
    else:
        n = _need(args, "index")
        idx = _items(lines)
        if not 1 <= n <= len(idx):
            raise ToolError(f"no item {n}: {TODO_FILE} has {len(idx)} item(s)")
        i = idx[n - 1]
        if action == "remove":
            del lines[i]
        else:
            m = _ITEM_RE.match(lines[i])
            assert m is not None
            mark = "x" if action == "check" else " "
            lines[i] = f"{m.group(1)}{mark}{m.group(3)}{m.group(4)}"
    return "\n".join(lines) + "\n", _show(lines)


def _apply(path: Path, args: dict[str, Any]) -> str:
    new, reply = _plan(path, args)
    if new is not None:
        _save(path, new)
    return reply


def _save(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, encode_utf8(text))
    except OSError as e:
        raise ToolError(f"cannot write {TODO_FILE}: {e.strerror or e}") from None
