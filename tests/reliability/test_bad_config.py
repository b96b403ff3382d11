"""Bad config.json, property-based: wrong types, unknown keys, broken JSON, bad bytes.

In process (many examples): `load_settings()` either loads (unknown keys become warnings) or
raises ConfigError whose message names the file; never any other exception; the file is
never changed. Through the CLI in process (`sessions list`, typer's runner): exit 2 with a
"picobot: ..." message and no traceback. Through the console script (a few examples): exit
2, the file named on stderr, no traceback, the file untouched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from picobot_tui.cli import app
from picobot_tui.config.settings import ConfigError, load_settings
from tests.reliability.fuzz import fuzz, tally
from tests.reliability.support import Proc, saved_logging

VALID: dict[str, Any] = {
    "agents": {
        "defaults": {
            "model": "openai/test-model",
            "maxTokens": 1000,
            "temperature": 0.5,
            "maxToolIterations": 5,
            "tokenBudget": 64000,
            "requestTimeout": 30,
            "maxRetries": 1,
            "retryBackoff": 0.5,
        }
    },
    "providers": {"openai": {"apiKey": "sk-x-0123456789", "apiBase": "http://127.0.0.1:9/v1"}},
    "tools": {
        "restrictToWorkspace": True,
        "approval": "ask",
        "alwaysAllow": ["read_file"],
        "exec": {"timeout": 10, "denyPatterns": ["curl"]},
        "web": {"allowPrivate": False},
    },
    "ui": {"bell": "never", "theme": "textual-dark"},
}

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_scalars,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=10), kids, max_size=4)
    ),
    max_leaves=12,
)


def _paths(obj: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    return out


PATHS = _paths(VALID)


def _set(obj: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    obj = json.loads(json.dumps(obj))
    cur = obj
    for part in path[:-1]:
        if not isinstance(cur.get(part), dict):
            cur[part] = {}
        cur = cur[part]
    cur[path[-1]] = value
    return obj


@st.composite
def mutated_configs(draw: st.DrawFn) -> bytes:
    """A valid config with some values replaced, keys added, or the text broken."""
    obj: Any = VALID
    for _ in range(draw(st.integers(0, 4))):
        path = draw(st.sampled_from(PATHS))
        if draw(st.booleans()):
            obj = _set(obj, path, draw(json_values))  # wrong type / value
        else:  # unknown key next to a known one
            obj = _set(obj, (*path[:-1], draw(st.text(min_size=1, max_size=12))), draw(json_values))
    if draw(st.booleans()):
        obj = draw(st.one_of(st.just(obj), json_values))  # maybe not an object at all
    text = json.dumps(obj, indent=2)
    how = draw(st.sampled_from(["as is", "truncate", "splice", "bytes", "comment"]))
    if how == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif how == "splice":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=8)) + text[at:]
    elif how == "comment":
        text = "// picobot config\n" + text.replace(",\n", ", // note\n", 3)
    data = text.encode("utf-8", "surrogatepass")
    if how == "bytes":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=6)) + data[at:]
    return data


def _write(home: Path, data: bytes) -> Path:
    path = home / "config.json"
    path.write_bytes(data)
    return path


@fuzz(400, 5000)
@given(data=mutated_configs())
def test_load_settings_never_raises_anything_but_config_error(picobot_home, data) -> None:
    tally("config.json -> load_settings")
    path = _write(picobot_home, data)
    before = os.stat(path)
    try:
        s, warnings = load_settings()
    except ConfigError as e:
        msg = str(e)
        assert str(path) in msg, msg
        assert "Traceback" not in msg
    else:
        assert s.agents.defaults.max_tokens >= 1
        for w in warnings:
            assert str(path) in w and "unknown config key" in w
    assert path.read_bytes() == data
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns


@pytest.fixture
def fast_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo model without its typing delay."""
    import picobot_tui.run.runtime as runtime
    from picobot_tui.core.llm.demo import DemoModel

    monkeypatch.setattr(runtime, "make_model_client", lambda settings, model: DemoModel(0))


@fuzz(100, 1500)
@given(data=mutated_configs())
def test_cli_exits_2_with_a_message_on_any_bad_config(picobot_home, fast_demo, data) -> None:
    """`picobot agent -m` in process (typer's runner), with the offline demo model and a
    workspace given on the command line so no generated config can reach the network or
    make directories elsewhere."""
    tally("config.json -> `picobot agent -m --model demo` (in process)")
    path = _write(picobot_home, data)
    try:
        load_settings()
        valid = True
    except ConfigError:
        valid = False
    ws = picobot_home.parent / "ws"
    ws.mkdir(exist_ok=True)  # a named workspace must exist
    with saved_logging():
        result = CliRunner().invoke(
            app, ["agent", "-m", "hello", "--model", "demo", "--workspace", str(ws)]
        )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    if valid:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 2, result.output
        assert "picobot: " in result.output and "config.json" in result.output
    assert "Traceback" not in result.output
    assert path.read_bytes() == data


@fuzz(60, 600)
@given(
    name=st.sampled_from(
        [
            "PICOBOT_AGENTS__DEFAULTS__MAX_TOKENS",
            "PICOBOT_AGENTS__DEFAULTS__TEMPERATURE",
            "PICOBOT_TOOLS__APPROVAL",
            "PICOBOT_TOOLS__RESTRICT_TO_WORKSPACE",
            "PICOBOT_TOOLS__ALWAYS_ALLOW",
            "PICOBOT_AGENTS",
        ]
    ),
    value=st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        max_size=20,
    ),
)
def test_bad_env_overrides_are_config_errors(name, value) -> None:
    tally("PICOBOT_* env -> load_settings")
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        load_settings()
    except ConfigError as e:
        assert "PICOBOT_* env" in str(e) or name in str(e), str(e)
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def test_unparseable_env_value_of_a_list_setting_is_a_config_error(monkeypatch) -> None:
    """Regression: pydantic-settings' SettingsError (a list/object value that is not JSON)
    escaped as a traceback."""
    monkeypatch.setenv("PICOBOT_TOOLS__ALWAYS_ALLOW", ":")
    with pytest.raises(ConfigError, match=r"PICOBOT_TOOLS__ALWAYS_ALLOW.*must be JSON"):
        load_settings()
    result = CliRunner().invoke(app, ["agent", "-m", "hi", "--model", "demo"])
    assert result.exit_code == 2 and "PICOBOT_TOOLS__ALWAYS_ALLOW" in result.output


BAD_FILES = {
    "broken-json": b'{"agents": {"defaults": {"model": "x",}',
    "wrong-type": b'{"tools": {"restrictToWorkspace": "sometimes"}}',
    "not-an-object": b"[1, 2, 3]",
    "invalid-utf8": b'{"ui": {"theme": "\xff\xfe"}}',
    # Issue 21 round three: both were tracebacks (RecursionError; a bare ValueError)
    "nested-100k-deep": b'{"ui": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "number-of-5000-digits": b'{"agents": {"defaults": {"maxTokens": ' + b"9" * 5_000 + b"}}}",
}


@pytest.mark.e2e
def test_console_script_bad_config_exit_2_file_untouched(tmp_path) -> None:
    procs = {}
    for name, data in BAD_FILES.items():
        home = tmp_path / name
        home.mkdir()
        _write(home, data)
        procs[name] = Proc(home, ["agent", "-m", "hello"])
    for name, p in procs.items():
        tally("config.json -> `picobot agent -m` (subprocess)")
        assert p.finish(timeout=120) == 2, (name, p.stderr)
        assert "Traceback" not in p.stderr
        assert "config.json" in p.stderr and p.stdout == ""
        assert (tmp_path / name / "config.json").read_bytes() == BAD_FILES[name]
        assert not (tmp_path / name / "sessions").exists()
