"""The base of every config group: snake_case in Python, camelCase when written out."""

from __future__ import annotations

from pydantic import AliasGenerator, BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Section(BaseModel):
    """Base for config groups: snake_case in Python, camelCase when written out."""

    model_config = ConfigDict(
        alias_generator=AliasGenerator(serialization_alias=to_camel),
        populate_by_name=True,
        extra="ignore",
        use_attribute_docstrings=True,
    )
