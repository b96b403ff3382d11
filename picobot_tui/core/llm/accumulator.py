"""Reassembles streamed tool-call fragments into whole OpenAI-format tool calls.

Written instead of LiteLLM's `stream_chunk_builder`, which drops calls without an `id` and
merges parallel calls without an `index` (the Groq style; LiteLLM also fills a missing
index with 0, so a new id is the only sign of a new call). The rules:

- fragments are keyed by `index`;
- a fragment with a new non-null `id` starts a new call, even at an index already in use
  or with no index; a repeated identical id continues its call;
- a fragment with neither index nor a new id continues the last call;
- a missing id is synthesised as `call_N`, and a duplicate id gets a `_N` suffix; the id
  is fixed when the call is first seen, so the live display and the final calls agree;
- name fragments are concatenated (a repeat of the whole name is ignored); arguments are
  concatenated exactly as received.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from picobot_tui.core.llm.model import ToolCallChunk

UNNAMED = "unnamed_tool"
"""The name given to a streamed tool call that came without one (it runs as an unknown tool)."""


@dataclass
class _Entry:
    position: int
    index: int | None
    id: str | None
    uid: str = ""
    """The unique id handed out (set once, when the call is first seen)."""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """Feed it every ToolCallChunk of one response; read the calls at the end."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._by_index: dict[int, _Entry] = {}
        self._uids: set[str] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def _new(self, index: int | None, call_id: str | None) -> _Entry:
        entry = _Entry(len(self._entries), index, call_id)
        base = call_id or f"call_{entry.position}"
        uid, n = base, 1
        while uid in self._uids:
            n += 1
            uid = f"{base}_{n}"
        entry.uid = uid
        self._uids.add(uid)
        self._entries.append(entry)
        if index is not None:
            self._by_index[index] = entry
        return entry

    def _entry_for(self, index: int | None, call_id: str | None) -> _Entry:
        last = self._entries[-1] if self._entries else None
        if index is None:
            if last is None or (call_id is not None and call_id != last.id):
                return self._new(None, call_id)
            return last
        entry = self._by_index.get(index)
        if entry is None or (call_id is not None and entry.id is not None and call_id != entry.id):
            return self._new(index, call_id)
        return entry

    def add(self, chunk: ToolCallChunk) -> tuple[str, str, str] | None:
        """Add one fragment. Returns (call_id, name so far, this arguments fragment) for a
        live display, or None when the fragment carries nothing."""
        call_id = chunk.id or None  # "" counts as missing
        if call_id is None and not chunk.name and not chunk.arguments:
            return None
        entry = self._entry_for(chunk.index, call_id)
        if entry.id is None and call_id is not None:
            entry.id = call_id
        if chunk.name and chunk.name != entry.name:
            entry.name += chunk.name
        fragment = chunk.arguments or ""
        if fragment:
            entry.arguments.append(fragment)
        return entry.uid, entry.name, fragment

    def calls(self) -> list[dict[str, Any]]:
        """The calls in the order they started, as OpenAI `tool_calls` entries.

        Entries with neither a name nor arguments (a lone id) are left out. A call whose
        name never arrived is named UNNAMED: recorded with an empty name, it would be sent
        back in every later request, and a provider rejects an empty function name.
        """
        out: list[dict[str, Any]] = []
        for entry in self._entries:
            arguments = "".join(entry.arguments)
            if not entry.name and not arguments:
                continue
            out.append(
                {
                    "id": entry.uid,
                    "type": "function",
                    "function": {"name": entry.name or UNNAMED, "arguments": arguments},
                }
            )
        return out
