"""Textual stylesheets (installed as picobot_tui.styles)."""
