"""`-m --output-schema FILE.json`: the answer must be JSON matching a JSON Schema.

The model is told so in the message, and where the provider has a structured-output mode
(LiteLLM's `supports_response_schema`) the schema goes with every call as
`response_format`. The final answer is validated with `jsonschema`; on a mismatch the model
is asked once to correct it, and a second mismatch is exit 1 with the validation error.
Never exit 0 with an answer that does not validate.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from picobot_tui.run.exit_codes import EXIT_USAGE
from picobot_tui.run.options import RunError

MAX_SCHEMA_BYTES = 1024 * 1024
_FENCED = re.compile(r"\A```[a-zA-Z0-9_-]*[ \t]*\n(?P<body>.*)\n```\Z", re.DOTALL)


@dataclass(frozen=True)
class OutputSchema:
    schema: dict[str, Any]
    path: Path

    def instruction(self) -> str:
        """What the message says after the user's text."""
        text = json.dumps(self.schema, ensure_ascii=False, indent=2)
        return (
            "\n\nAnswer with a single JSON value that matches this JSON Schema, and nothing "
            "else: no prose, no code fence.\n\n" + text
        )

    def response_format(self) -> dict[str, Any]:
        """The OpenAI-shaped structured-output request LiteLLM translates per provider."""
        return {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": self.schema},
        }

    def check(self, answer: str) -> tuple[Any, str | None]:
        """(the parsed value, None) when `answer` validates, else (None, why not)."""
        from jsonschema import Draft202012Validator, validators

        text = answer.strip()
        fenced = _FENCED.match(text)
        if fenced:  # a model that fences its JSON anyway: the value inside is the answer
            text = fenced.group("body").strip()
        try:
            value = json.loads(text)
        except ValueError as e:
            return None, f"the answer is not JSON ({e})"
        cls = validators.validator_for(self.schema, default=Draft202012Validator)
        errors = sorted(cls(self.schema).iter_errors(value), key=lambda e: list(e.path))
        if not errors:
            return value, None
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(the whole value)"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return None, f"at {where}: {first.message}{more}"

    def correction(self, problem: str) -> str:
        """The one follow-up message after a mismatch."""
        return (
            f"Your answer does not match the required JSON Schema: {problem}. Answer again "
            "with only the corrected JSON value."
        )


def load(path: Path) -> OutputSchema:
    """Read and check the schema file; RunError (exit 2) before anything is sent when it is
    unreadable, not JSON, or not a valid JSON Schema."""
    from jsonschema import Draft202012Validator, SchemaError, validators

    where = f"--output-schema {path}"
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SCHEMA_BYTES + 1)
    except OSError as e:
        raise RunError(f"{where}: cannot read it: {e.strerror or e}", EXIT_USAGE) from None
    if len(data) > MAX_SCHEMA_BYTES:
        raise RunError(f"{where}: larger than {MAX_SCHEMA_BYTES:,} bytes", EXIT_USAGE)
    try:
        schema = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise RunError(f"{where}: not JSON ({e})", EXIT_USAGE) from None
    if not isinstance(schema, dict):
        raise RunError(f"{where}: a JSON Schema is an object", EXIT_USAGE)
    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        raise RunError(f"{where}: not a valid JSON Schema: {e.message}", EXIT_USAGE) from None
    return OutputSchema(schema, path)
