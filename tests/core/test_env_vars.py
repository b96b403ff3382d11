"""`PICOBOT_*` variables: an invalid value names its variable, an unknown name is warned
about (issue 15, point 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

from picobot_tui.config.env_vars import unknown_variables, variable_for
from picobot_tui.config.settings import ConfigError, Settings, load_settings


def test_known_names_groups_and_mapping_keys_are_no_warning() -> None:
    env = {
        "PICOBOT_HOME": "/x",
        "picobot_agents__defaults__max_tokens": "5",  # pydantic-settings ignores the case
        "PICOBOT_TOOLS": "{}",
        "PICOBOT_PROVIDERS__OPENAI__EXTRA_HEADERS__X_TEAM": "a",
        "PICOBOT_UI__THEME": "nord",
        "OTHER": "1",
    }
    assert unknown_variables(Settings, env) == []


def test_unknown_names_are_warned_with_the_close_one() -> None:
    env = {
        "PICOBOT_AGENTS__DEFAULTS__MAXTOKENS": "abc",
        "PICOBOT_TOOLS__EXEC__TIMEOUT__X": "1",  # below a plain value
        "PICOBOT_NOPE": "1",
    }
    assert unknown_variables(Settings, env) == [
        "environment variable PICOBOT_AGENTS__DEFAULTS__MAXTOKENS names no setting (ignored); "
        "did you mean PICOBOT_AGENTS__DEFAULTS__MAX_TOKENS?",
        "environment variable PICOBOT_NOPE names no setting (ignored)",
        "environment variable PICOBOT_TOOLS__EXEC__TIMEOUT__X names no setting (ignored); "
        "did you mean PICOBOT_TOOLS__EXEC__TIMEOUT?",
    ]


def test_the_variable_behind_a_value() -> None:
    loc = ("agents", "defaults", "max_tokens")
    assert variable_for(loc, {"picobot_agents__defaults__max_tokens": "x"}) == (
        "picobot_agents__defaults__max_tokens"
    )
    assert variable_for(loc, {"PICOBOT_AGENTS": '{"defaults": {"max_tokens": "x"}}'}) == (
        "PICOBOT_AGENTS"
    )
    # A group's JSON that does not hold the value did not set it: the file did.
    assert variable_for(loc, {"PICOBOT_AGENTS": '{"defaults": {"temperature": 1}}'}) is None
    assert variable_for(loc, {}) is None


def test_load_settings_names_the_variable(
    picobot_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (picobot_home / "config.json").write_text('{\n  "agents": {"defaults": {"maxTokens": 9}}\n}')
    monkeypatch.setenv("PICOBOT_AGENTS__DEFAULTS__MAX_TOKENS", "abc")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "environment variable PICOBOT_AGENTS__DEFAULTS__MAX_TOKENS: " in str(info.value)
    assert "config.json" not in str(info.value)
