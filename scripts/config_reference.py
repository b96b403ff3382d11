"""Print the configuration reference (Markdown) from the settings models' docstrings.

Run: python scripts/config_reference.py   (its output is pasted into README.md)
"""

from __future__ import annotations

import json

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
    return out


if __name__ == "__main__":
    print("| key | default | meaning |\n|---|---|---|")
    print("\n".join(rows(Settings)))
