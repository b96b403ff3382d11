"""peek_ui: the first frame's theme and panes, read without pydantic; it must agree with
the validated settings wherever it answers at all."""

from __future__ import annotations

import pytest

from picobot_tui.config.settings import load_settings
from picobot_tui.core.paths import config_path
from picobot_tui.tui.peek import peek_ui


def _config(text: str) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(text, encoding="utf-8")


def test_no_config_peeks_nothing() -> None:
    assert peek_ui() == {}


def test_reads_a_commented_file_with_camel_or_snake_keys() -> None:
    _config(
        '{\n  // my look\n  "ui": {"theme": "nord", "showTimeline": false, "show_gauge": false}\n}'
    )
    assert peek_ui() == {"theme": "nord", "show_timeline": False, "show_gauge": False}


@pytest.mark.parametrize("raw, expected", [("0", False), ("TRUE", True), ("off", False)])
def test_env_overrides_the_file_like_the_settings_do(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool
) -> None:
    _config('{"ui": {"showGauge": true, "theme": "nord"}}')
    monkeypatch.setenv("picobot_ui__show_gauge", raw)
    monkeypatch.setenv("PICOBOT_UI__THEME", "gruvbox")
    peek = peek_ui()
    assert peek == {"theme": "gruvbox", "show_gauge": expected}
    settings, _ = load_settings()
    assert settings.ui.show_gauge is peek["show_gauge"]
    assert settings.ui.theme == peek["theme"]


@pytest.mark.parametrize(
    "text",
    ["{not json", "[1, 2]", '{"ui": 3}', '{"ui": {"theme": 5, "showTimeline": "maybe"}}', "\xff"],
)
def test_anything_unreadable_or_invalid_is_left_to_the_settings(text: str) -> None:
    _config(text)
    assert peek_ui() == {}
