"""The session modes `picobot acp` offers (`session/set_mode`)."""

MODES: dict[str, tuple[str, str]] = {
    "default": ("Default", "Ask before file changes and commands (tools.approval as configured)."),
    "read-only": (
        "Read-only",
        "Reads only: file changes and commands are refused (tools.approval readonly).",
    ),
    "plan": (
        "Plan",
        "Plan first: only reading tools run; the agent answers with a plan. Switch back to "
        "Default and say go ahead to carry it out.",
    ),
}
"""id -> (name, description). `read-only` is tools.approval `readonly` for that session;
`plan` is plan mode (core/plan_mode.py): calls that could change anything are not run."""
