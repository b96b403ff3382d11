"""The check a server's tool inputSchema passes before the tool is offered."""

from __future__ import annotations

from typing import Any


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why a server's inputSchema cannot be offered, or None: it must be a valid JSON Schema
    whose `$ref`s all point inside it. A broken one made every argument check raise (the
    registry validates with it) and would have a provider refuse the whole request."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
        refs = list(_refs(schema))
    except SchemaError as e:
        return f"its inputSchema is not a valid JSON Schema: {e.message}"
    except RecursionError:
        return "its inputSchema is nested too deeply"
    for ref in refs:
        if not ref.startswith("#") or not _resolves(schema, ref[1:]):
            return f"its inputSchema has a $ref that points nowhere in it: {ref}"
    return None


def _refs(node: Any) -> Any:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _resolves(schema: Any, pointer: str) -> bool:
    """Whether the JSON pointer (the part of a `$ref` after `#`) names a part of `schema`."""
    from urllib.parse import unquote

    node = schema
    for raw in unquote(pointer).split("/")[1:] if pointer else ():
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True
