"""The session modes `picobot acp` offers (`session/set_mode`)."""

MODES: dict[str, tuple[str, str]] = {
    "default": ("Default", "Ask before file changes and commands (tools.approval as configured)."),
    "read-only": (
        "Read-only",
        "Reads only: file changes and commands are refused (tools.approval readonly).",
    ),
}
"""id -> (name, description). `read-only` is tools.approval `readonly` for that session."""
