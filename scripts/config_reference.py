"""Print the configuration reference (Markdown) from the settings models' docstrings.

Run: python scripts/config_reference.py   (its output is pasted into README.md)
"""

from __future__ import annotations

import json
from typing import get_args, get_origin

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from picobot_tui.config.settings import Settings


def rows(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        key = prefix + to_camel(name)
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            if prefix == "providers.":
                # Every provider entry has the same shape: document it once.
                if name == "openai":
                    out.extend(rows(ann, "providers.<name>."))
                continue
            out.extend(rows(ann, key + "."))
            continue
        default = field.get_default(call_default_factory=True)
        shown = "—" if default is None else f"`{json.dumps(default)}`"
        # One line per cell: a docstring's line breaks would end the table row.
        meaning = " ".join((field.description or "").split()).replace("|", "/")
        out.append(f"| `{key}` | {shown} | {meaning} |")
        # A map of named entries (tools.mcpServers): each entry's keys, once.
        args = get_args(ann) if get_origin(ann) is dict else ()
        if len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
            out.extend(rows(args[1], key + ".<name>."))
    return out


if __name__ == "__main__":
    print("| key | default | meaning |\n|---|---|---|")
    print("\n".join(rows(Settings)))
