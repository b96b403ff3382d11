"""Textual widgets for the picobot TUI (installed as picobot_tui.widgets)."""
