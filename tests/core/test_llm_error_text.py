"""No library internals reach the user: every exception class LiteLLM defines, built with
the texts LiteLLM really writes (its prefixes, aiohttp's object repr, its "Handle with"
tip), goes through `classify`, and neither the message nor the hint names a library class,
an object repr or LiteLLM's tips (issue 25, point 3)."""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any

import httpx
import pytest

from picobot_tui.core.llm.client import load_litellm
from picobot_tui.core.llm.error_text import clean, connection_cause, is_loopback
from picobot_tui.core.llm.errors import classify

URL = "http://127.0.0.1:8000/v1"
REQ = httpx.Request("POST", f"{URL}/chat/completions")
# What LiteLLM's anthropic route printed for a refused connection (seen through `picobot`).
RAW = (
    "AnthropicException - Cannot connect to host 127.0.0.1:8000 "
    "ssl:<ssl.SSLContext object at 0x7f87f4580ef0> [Connect call failed ('127.0.0.1', 8000)]."
    " Handle with `litellm.InternalServerError`"
)


def _litellm_classes() -> list[type[BaseException]]:
    exceptions = load_litellm().exceptions
    return [
        cls
        for _, cls in sorted(vars(exceptions).items())
        if isinstance(cls, type)
        and issubclass(cls, BaseException)
        and cls.__module__.startswith("litellm")
    ]


@functools.cache
def _library_names() -> frozenset[str]:
    """Every exception class name of litellm, openai and httpx (what must not show)."""
    import openai

    names = {c.__name__ for c in _litellm_classes()}
    for module in (openai, httpx):
        for n in list(dir(module)):
            c = getattr(module, n, None)
            if isinstance(c, type) and issubclass(c, Exception):
                names.add(n)
    return frozenset(n for n in names if n.endswith(("Error", "Exception", "Timeout")))


_VALUES: dict[str, Any] = {
    "message": RAW,
    "model": "anthropic/claude-sonnet-4-5",
    "llm_provider": "anthropic",
    "custom_llm_provider": "anthropic",
    "response": httpx.Response(500, request=REQ),
    "request": REQ,
    "status_code": 500,
    "current_cost": 2.0,
    "max_budget": 1.0,
    "raw_response": RAW,
    "schema": "{}",
    "request_data": {},
    "failures": [],
    "entity_type": "user",
    "route_to_model": "x",
    "session_id": "s",
    "original_exception": ConnectionRefusedError(111, "Connect call failed"),
}


def _build(cls: type[BaseException]) -> BaseException:
    """An instance of `cls` with LiteLLM's own wording, whatever its constructor takes."""
    kwargs = {}
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in _VALUES:
            kwargs[name] = _VALUES[name]
        elif param.default is inspect.Parameter.empty:
            kwargs[name] = RAW
    try:
        return cls(**kwargs)
    except TypeError:
        return cls(RAW)  # ModelNotMappedError and the like take *args


CLASSES = _litellm_classes()


def test_litellm_still_defines_its_exceptions() -> None:
    """The enumeration below is not empty by accident (LiteLLM 1.110 defines 37)."""
    assert len(CLASSES) >= 30
    assert {"InternalServerError", "APIConnectionError", "MidStreamFallbackError"} <= {
        c.__name__ for c in CLASSES
    }


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_no_library_internals_reach_the_user(cls: type[BaseException]) -> None:
    exc = _build(cls)
    error = classify(exc, model="anthropic/claude-sonnet-4-5", provider="anthropic", url=URL)
    shown = f"{error.message}\n{error.hint}"
    assert "object at 0x" not in shown and "<ssl." not in shown, shown
    assert "Handle with" not in shown and "litellm." not in shown.lower(), shown
    named = {n for n in _library_names() if re.search(rf"\b{n}\b", shown)}
    assert not named, (named, shown)
    assert "\n" not in error.message and error.message.strip(), shown  # one line
    assert error.hint != error.message, shown


def test_a_refused_loopback_connection_names_the_url_and_is_final() -> None:
    """LiteLLM's InternalServerError "Connection error." over a refused connect."""
    exceptions = load_litellm().exceptions
    exc = exceptions.InternalServerError(RAW, llm_provider="anthropic", model="m")
    exc.__cause__ = ConnectionRefusedError(111, "Connect call failed")
    error = classify(exc, model="m", provider="anthropic", url=URL)
    assert error.kind == "connection" and not error.transient
    assert f"nothing listening on {URL}" in error.message
    assert "providers.anthropic.apiBase" in error.hint


def test_clean_keeps_the_words_that_matter() -> None:
    assert clean(RAW) == (
        "Cannot connect to host 127.0.0.1:8000 [Connect call failed ('127.0.0.1', 8000)]"
    )
    assert clean("litellm.RateLimitError: RateLimitError: OpenAIException - slow down") == (
        "slow down"
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:1234", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        (None, False),
    ],
)
def test_loopback(url: str | None, expected: bool) -> None:
    assert is_loopback(url) is expected


def test_a_missing_host_is_said_so() -> None:
    import socket

    said = connection_cause(
        [socket.gaierror(-2, "Name or service not known")], "http://x.invalid/v1"
    )
    assert said is not None and said[0].startswith("cannot resolve the host x.invalid")
