"""The model out of the box, through the `picobot` script: an unknown model name and a
missing (or empty) key are usage errors (exit 2) found before any call; auth errors are
never retried nor called a server error; headless never falls back to the demo model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.headless.conftest import SECRET, run_cli
from tests.support.openai_server import OpenAITestServer, error, text_reply

pytestmark = pytest.mark.e2e


def _config(home: Path, data: dict) -> None:
    (home / "config.json").write_text(json.dumps(data))


def test_unknown_model_exits_2_at_once(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "nonsense-model")
    assert res.returncode == 2, res.stderr
    assert "unknown model `nonsense-model`" in res.stderr
    assert "--model demo" in res.stderr  # what to do instead
    assert "Traceback" not in res.stderr and res.stdout == ""


def test_unknown_model_suggests_the_close_name(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "gpt-4o-mimi")
    assert res.returncode == 2, res.stderr
    assert "Did you mean" in res.stderr and "`gpt-4o-mini`" in res.stderr
    # The typo itself is not offered back as a suggestion (with a prefix added).
    assert "`openai/gpt-4o-mimi`?" not in res.stderr and "or `openai/gpt-4o-mimi`" not in res.stderr


def test_unknown_provider_prefix_suggests_the_provider(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "opneai/gpt-4o-mini")
    assert res.returncode == 2, res.stderr
    assert "`opneai` is not a provider" in res.stderr and "`openai/gpt-4o-mini`" in res.stderr


def test_any_name_goes_to_a_configured_openai_compatible_server(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    _config(picobot_home, {"providers": {"custom": {"apiBase": llm_server.url}}})
    llm_server.script([text_reply("local answer")])
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "my-local-model-q4")
    assert res.returncode == 0, res.stderr
    assert "local answer" in res.stdout
    assert llm_server.last_body["model"] == "my-local-model-q4"


@pytest.mark.parametrize("config", [{}, {"providers": {"openai": {"apiKey": ""}}}])
def test_no_key_or_an_empty_key_exits_2_without_falling_back(
    picobot_home: Path, config: dict
) -> None:
    """Headless keeps exiting 2 (no demo fallback: a script must not get demo answers)."""
    if config:
        _config(picobot_home, config)
    res = run_cli(picobot_home, "agent", "-m", "hi", OPENAI_API_KEY="")
    assert res.returncode == 2, res.stderr
    assert "No API key for `openai/gpt-4o-mini`" in res.stderr
    assert "OPENAI_API_KEY" in res.stderr and "picobot onboard" in res.stderr
    assert "demo model" not in res.stdout


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_are_not_retried_nor_a_server_error(
    picobot_home: Path, llm_server: OpenAITestServer, status: int
) -> None:
    _config(
        picobot_home,
        {
            "agents": {"defaults": {"model": "openai/test-model", "maxRetries": 3}},
            "providers": {"openai": {"apiKey": SECRET, "apiBase": llm_server.url}},
        },
    )
    llm_server.script([error(status)])
    res = run_cli(picobot_home, "agent", "-m", "hi")
    assert res.returncode == 1, res.stderr
    assert "rejected the API key" in res.stderr
    assert "server error" not in res.stderr and "retry" not in res.stderr.lower()
    assert len(llm_server.completions) == 1
