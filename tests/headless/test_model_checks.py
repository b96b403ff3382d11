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
    llm_server.models = ["my-local-model-q4"]
    llm_server.script([text_reply("local answer")])
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "my-local-model-q4")
    assert res.returncode == 0, res.stderr
    assert "local answer" in res.stdout
    assert llm_server.last_body["model"] == "my-local-model-q4"


def _served(home: Path, server: OpenAITestServer, *models: str) -> None:
    """The README's custom-endpoint recipe, pointing at the local server listing `models`."""
    _config(
        home,
        {
            "agents": {"defaults": {"model": "openai/my-model"}},
            "providers": {"openai": {"apiBase": server.url, "apiKey": "local"}},
        },
    )
    server.models = list(models)


def _model_lists(server: OpenAITestServer) -> int:
    return sum(1 for r in server.requests if r.method == "GET" and r.path.endswith("/models"))


def test_a_name_the_server_does_not_serve_exits_2_with_its_close_names(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    """Issue 25, point 2: before, `--model gpt-4o-mni` passed the offline check and failed
    at call time, exit 1, with no "did you mean"."""
    _served(picobot_home, llm_server, "gpt-4o-mini", "llama3:latest")
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "gpt-4o-mni")
    assert res.returncode == 2, res.stderr
    assert (
        "unknown model `gpt-4o-mni`" in res.stderr and "Did you mean `gpt-4o-mini`?" in res.stderr
    )
    assert f"the server at {llm_server.url} (providers.openai.apiBase)" in res.stderr
    assert "providers.custom" not in res.stderr  # the key the user has, not another
    assert not llm_server.completions and _model_lists(llm_server) == 1


def test_a_name_the_server_serves_runs_after_one_question(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    _served(picobot_home, llm_server, "gpt-4o-mini", "llama3:latest")
    llm_server.script([text_reply("served")])
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "openai/llama3")
    assert res.returncode == 0, res.stderr
    assert "served" in res.stdout and llm_server.last_body["model"] == "llama3"
    assert _model_lists(llm_server) == 1
    assert llm_server.requests[0].method == "GET"  # asked before the first call


def test_a_server_that_lists_nothing_decides_nothing(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    _served(picobot_home, llm_server)  # an empty list: not a judgement on any name
    llm_server.script([text_reply("still answered")])
    res = run_cli(picobot_home, "agent", "-m", "hi")
    assert res.returncode == 0, res.stderr
    assert "still answered" in res.stdout


def test_a_near_typo_of_a_known_name_says_did_you_mean_before_the_key(
    picobot_home: Path,
) -> None:
    """Before: "No API key … set ANTHROPIC_API_KEY" for a name that cannot work anyway."""
    res = run_cli(picobot_home, "agent", "-m", "hi", "--model", "claude-sonet-4-5")
    assert res.returncode == 2, res.stderr
    assert "Did you mean `claude-sonnet-4-5`" in res.stderr
    assert "API key" not in res.stderr
    assert "`anthropic/claude-sonet-4-5`" in res.stderr  # the way past it, for a newer model


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
    assert "OPENAI_API_KEY" in res.stderr and "providers.openai.apiKey" in res.stderr
    assert "picobot onboard" not in res.stderr  # often just run: it would not help
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
