"""The published JSON Schema of the headless protocol, built from the code's own types (the
loop's events, headless/protocol.py's requests and result) with pydantic's generator.

The built schema ships as `picobot_tui/headless/protocol.schema.json` (what `picobot
schema` prints, read as a file) and `docs/protocol.schema.json`;
`python scripts/protocol_schema.py` writes both, and the suite fails when they differ from
what the code builds, or when the shape changed without a version bump.

Output objects (`emits`) always carry every field, `protocol` included, and nothing else;
requests (`accepts`) need only what has no default.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Annotated, Any, Union, get_args

from picobot_tui.core.events import Event
from picobot_tui.headless.protocol import PROTOCOL_VERSION, Request, RunResult

SCHEMA_FILE = "protocol.schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _union_schema(members: tuple[type, ...]) -> dict[str, Any]:
    """A discriminated union: `type` picks the member, so a validator names the right one."""
    from pydantic import Field, TypeAdapter

    if len(members) == 1:  # its own definition goes in $defs beside the ones it uses
        own = TypeAdapter(members[0]).json_schema(ref_template="#/$defs/{model}")
        defs = own.pop("$defs", {})
        defs[members[0].__name__] = own
        return {"$ref": f"#/$defs/{members[0].__name__}", "$defs": defs}
    # A union built at run time from the Event alias's members: no static type to name.
    tagged: Any = Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007
    return TypeAdapter(tagged).json_schema(ref_template="#/$defs/{model}")


def _strip_titles(node: Any) -> Any:
    """Pydantic's generated titles ("Prompt Tokens") say nothing the names do not."""
    if isinstance(node, dict):
        return {
            k: _strip_titles(v)
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def _closed(defn: dict[str, Any], *, output: bool) -> None:
    """An output has every field, `protocol` too, and no other; a request needs `type`."""
    if defn.get("type") != "object" or "properties" not in defn:
        return
    props = defn["properties"]
    line = "type" in props  # a line's object, not one nested in it (usage, a tool call)
    if output:
        defn["additionalProperties"] = False
        if line:
            props["protocol"] = {"const": PROTOCOL_VERSION}
        defn["required"] = list(props)
    else:  # a request's unknown fields are ignored (a newer client's), its `type` is not
        props["protocol"] = {"anyOf": [{"const": PROTOCOL_VERSION}, {"type": "null"}]}
        defn["required"] = [*defn.get("required", []), "type"]
    # Pydantic writes the discriminator as `const` with a default: keep only the const.
    if "type" in props:
        props["type"].pop("default", None)


def build() -> dict[str, Any]:
    """The whole schema: `$defs` for every object, `event`, `request` and `result` as the
    entry points, and the document itself accepting any line of either direction."""
    events = _union_schema(get_args(Event))
    requests = _union_schema(get_args(Request))
    result = _union_schema((RunResult,))
    defs: dict[str, Any] = {}
    outputs: set[str] = set()
    for part, is_output in ((events, True), (result, True), (requests, False)):
        for name, defn in part.pop("$defs", {}).items():
            defs[name] = defn
            if is_output:
                outputs.add(name)
    for name, defn in defs.items():
        _closed(defn, output=name in outputs)
    defs["event"] = events
    defs["request"] = requests
    defs["result"] = result
    return _strip_titles(
        {
            "$schema": DIALECT,
            "$id": f"urn:picobot:protocol:{PROTOCOL_VERSION}",
            "title": f"picobot headless protocol {PROTOCOL_VERSION}",
            "description": (
                "One JSON object per line. picobot writes `event` objects (`agent --json`, "
                "`agent -m --output-format stream-json`) and a `result` object (the last line "
                "of `--output-format json` and `stream-json`); `agent --json` reads `request` "
                "objects. Validate a line against `#/$defs/event`, `#/$defs/result` or "
                "`#/$defs/request`."
            ),
            "x-protocol-version": PROTOCOL_VERSION,
            "anyOf": [
                {"$ref": "#/$defs/event"},
                {"$ref": "#/$defs/result"},
                {"$ref": "#/$defs/request"},
            ],
            "$defs": defs,
        }
    )


def dump(schema: dict[str, Any]) -> str:
    """The file's text: stable key order, one trailing newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def shape_digest(schema: dict[str, Any]) -> str:
    """The sha256 of the schema's shape: without descriptions, so rewording a docstring
    needs no new version, while any field, type or value change does."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "description"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    shape = strip(copy.deepcopy(schema))
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()
