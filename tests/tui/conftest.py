"""Fixtures shared by the TUI tests (helpers live in app_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from picobot_tui.config.settings import Settings
from tests.tui.app_support import make_settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings for a hermetic app: scripted model name, a temp workspace, no bell."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return make_settings(workspace)
