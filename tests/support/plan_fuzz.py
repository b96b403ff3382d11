"""A scripted model that tries to change things in plan mode: `calls(seed, n)` mixes calls
that would change files, run commands, write the todo list, fetch a URL or call a mutating
MCP tool with calls that only read; `script(...)` streams them `per_reply` at a time and ends
with a plan. `state(ws, home)` is what must be byte-identical afterwards: every file of the
workspace and of the checkpoints' shadow git."""

from __future__ import annotations

import hashlib
import itertools
import random
from pathlib import Path

from tests.support.openai_server import Step, ToolCall, text_reply, tool_calls_reply

PLAN = "1. Read a.txt\n2. Change alpha to omega\n3. Run the tests"
FILES = {"a.txt": "alpha\nbeta\n", "sub/b.txt": "bravo\n", "TODO.md": "- [ ] first\n"}
MCP = "mcp_t_echo"
"""The test MCP server's `echo` (not marked read-only: it must not run)."""
MCP_READ = "mcp_t_peek"
"""Its `peek`, marked readOnlyHint: it runs."""


def workspace(ws: Path) -> Path:
    for name, text in FILES.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    return ws


def _mutating(rng: random.Random, i: int, mcp: bool) -> ToolCall:
    kinds = ["write", "edit", "exec", "todo", "fetch"] + (["mcp"] if mcp else [])
    kind = rng.choice(kinds)
    path = rng.choice(["a.txt", "sub/b.txt", f"new-{i}.txt", "sub/deep/x.txt", "TODO.md"])
    match kind:
        case "write":
            return ToolCall("write_file", {"path": path, "content": f"pwned {i}\n"})
        case "edit":
            return ToolCall("edit_file", {"path": "a.txt", "old_text": "alpha", "new_text": "x"})
        case "exec":
            command = rng.choice(
                [f"touch pwned-{i}", "echo x > a.txt", "rm -rf sub", f"mkdir d{i}", "ls"]
            )
            return ToolCall("exec", {"command": command})
        case "todo":
            action = rng.choice(["add", "check", "remove", "write", "uncheck"])
            args: dict[str, object] = {"action": action}
            if action == "add":
                args["text"] = f"item {i}"
            elif action == "write":
                args["content"] = f"- [ ] replaced {i}\n"
            else:
                args["index"] = 1
            return ToolCall("todo", args)
        case "fetch":
            return ToolCall("web_fetch", {"url": f"http://127.0.0.1:9/plan-{i}"})
    return ToolCall(MCP, {"text": f"echo {i}"})


def _reading(rng: random.Random, i: int, mcp: bool) -> ToolCall:
    kinds = ["read", "list", "todo"] + (["mcp"] if mcp else [])
    match rng.choice(kinds):
        case "read":
            return ToolCall("read_file", {"path": rng.choice(["a.txt", "sub/b.txt"])})
        case "list":
            return ToolCall("list_dir", {"path": rng.choice([".", "sub"])})
        case "todo":
            return ToolCall("todo", {"action": "read"})
    return ToolCall(MCP_READ, {"text": f"peek {i}"})


def calls(seed: int, mutating: int, *, mcp: bool = False, reads: float = 0.25) -> list[ToolCall]:
    """`mutating` calls that would change something, with read-only ones mixed in (about
    `reads` of all); ids `c<seed>_<i>`."""
    rng = random.Random(seed)
    out: list[ToolCall] = []
    while sum(not is_read(c) for c in out) < mutating:
        i = len(out)
        make = _reading if rng.random() < reads else _mutating
        call = make(rng, i, mcp)
        out.append(ToolCall(call.name, call.args, f"c{seed}_{i}"))
    return out


def script(planned: list[ToolCall], per_reply: int = 10) -> list[Step]:
    it = iter(planned)
    steps: list[Step] = []
    while batch := list(itertools.islice(it, per_reply)):
        steps.append(tool_calls_reply(batch, parts=1))
    return [*steps, text_reply(PLAN)]


def state(*roots: Path) -> dict[str, str]:
    """Every file (and link) under `roots`, by path, with its content's sha256."""
    out: dict[str, str] = {}
    for root in roots:
        if not root.exists():
            continue
        for p in sorted(root.rglob("*")):
            key = str(p)
            if p.is_symlink():
                out[key] = "link:" + str(p.readlink())
            elif p.is_file():
                out[key] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[key] = "dir"
    return out


def is_read(call: ToolCall) -> bool:
    args = call.args if isinstance(call.args, dict) else {}
    return call.name in ("read_file", "list_dir", MCP_READ) or (
        call.name == "todo" and args.get("action") == "read"
    )
