"""Config: camelCase file, snake_case accepted, env overrides, friendly errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from picobot_tui.config.jsonc import strip_json_comments
from picobot_tui.config.onboard import default_config_text
from picobot_tui.config.settings import ConfigError, load_settings


def write(home: Path, text: str) -> Path:
    path = home / "config.json"
    path.write_text(text)
    return path


def test_defaults_without_file(picobot_home: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    s, warnings = load_settings()
    d = s.agents.defaults
    assert (d.max_tokens, d.temperature, d.max_tool_iterations) == (8192, 0.7, 20)
    assert (d.token_budget, d.max_history_messages) == (128000, 50)
    assert s.tools.restrict_to_workspace is True
    assert s.tools.exec.timeout == 60
    assert s.tools.approval == "ask" and s.tools.tool_result_max_chars == 8000
    assert s.workspace_path == tmp_path.resolve()  # the current directory
    assert not s.workspace_explicit
    assert s.sessions_dir == picobot_home / "sessions"
    assert s.traces_path == picobot_home / "data" / "traces" / "traces.jsonl"
    assert warnings == []


def test_camel_and_snake_keys_and_env_override(
    picobot_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        picobot_home,
        json.dumps(
            {
                "agents": {
                    "defaults": {"model": "openai/m", "maxTokens": 100, "max_tool_iterations": 3}
                },
                "providers": {"openai": {"apiKey": "sk-secret-123", "apiBase": "http://x/v1"}},
                "tools": {"restrictToWorkspace": False, "exec": {"timeout": 5}},
            }
        ),
    )
    monkeypatch.setenv("PICOBOT_AGENTS__DEFAULTS__MODEL", "anthropic/claude")
    s, _ = load_settings()
    assert s.agents.defaults.model == "anthropic/claude"
    assert s.agents.defaults.max_tokens == 100
    assert s.agents.defaults.max_tool_iterations == 3
    assert s.providers.openai.api_base == "http://x/v1"
    assert s.secrets() == ["sk-secret-123"]
    assert "sk-secret-123" not in repr(s)
    assert s.tools.restrict_to_workspace is False and s.tools.exec.timeout == 5


def test_broken_json_names_file_and_line(picobot_home: Path) -> None:
    path = write(picobot_home, '{\n  "agents": {\n    "defaults": {"model": }\n  }\n}')
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert str(path) in str(e.value) and "line 3" in str(e.value)


def test_wrong_type_names_key_and_line(picobot_home: Path) -> None:
    write(picobot_home, '{\n "agents": {\n  "defaults": {\n   "maxTokens": "lots"\n  }\n }\n}')
    with pytest.raises(ConfigError) as e:
        load_settings()
    msg = str(e.value)
    assert "agents.defaults.maxTokens" in msg and "line 4" in msg


def test_unknown_keys_warn(picobot_home: Path) -> None:
    write(picobot_home, '{"tools": {"restrictToWorkspac": false}, "agentz": {}}')
    _, warnings = load_settings()
    assert any("tools.restrictToWorkspac" in w for w in warnings)
    assert any("agentz" in w for w in warnings)


def test_non_object_config(picobot_home: Path) -> None:
    write(picobot_home, "[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        load_settings()


def test_onboard_text_is_valid_commented_json(picobot_home: Path) -> None:
    text = default_config_text()
    assert "//" in text
    data = json.loads(strip_json_comments(text))
    assert data["agents"]["defaults"]["maxToolIterations"] == 20
    # No empty key (a missing one stays null) and no pinned workspace.
    assert all(p["apiKey"] is None for p in data["providers"].values())
    assert data["agents"]["defaults"]["workspace"] is None
    write(picobot_home, text)
    s, warnings = load_settings()
    assert warnings == [] and s.agents.defaults.token_budget == 128000


def test_comment_stripping_keeps_strings() -> None:
    assert json.loads(strip_json_comments('{"u": "http://x//y"} // c')) == {"u": "http://x//y"}


def test_provider_entries_match_the_provider_table() -> None:
    from picobot_tui.core.settings import ProvidersConfig
    from picobot_tui.core.shapes.providers import PROVIDER_NAMES

    assert tuple(ProvidersConfig.model_fields) == PROVIDER_NAMES
