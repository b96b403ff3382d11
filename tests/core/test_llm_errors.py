"""Error classification (core/llm_errors.py) on constructed exceptions; the end-to-end
versions over real HTTP are in test_llm_client.py."""

from __future__ import annotations

import email.utils
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr

from picobot_tui.core.llm.client import load_litellm
from picobot_tui.core.llm.errors import classify, parse_retry_after
from picobot_tui.core.llm.model import LLMError

SECRET = "sk-test-SECRET-0123456789abcdef"
REQ = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


@pytest.fixture(scope="module")
def le():
    return load_litellm().exceptions


def _resp(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers or {}, request=REQ)


# -- Retry-After ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "5"}, 5.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"Retry-After": "-3"}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "inf"}, None),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": ""}, None),
        ({}, None),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),
        ({"retry-after-ms": "junk", "Retry-After": "9"}, 9.0),
    ],
)
def test_parse_retry_after_seconds(headers, expected):
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date():
    now = 1_700_000_000.0
    future = email.utils.formatdate(now + 30, usegmt=True)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"Retry-After": future}, now=now) == pytest.approx(30)
    assert parse_retry_after({"Retry-After": past}, now=now) == 0.0


# -- by type --------------------------------------------------------------------------------


def test_rate_limit_with_retry_after(le):
    exc = le.RateLimitError("slow down", "openai", "m", response=_resp(429, {"retry-after": "7"}))
    err = classify(exc, model="openai/m")
    assert (err.kind, err.transient, err.status, err.retry_after) == ("rate_limit", True, 429, 7.0)
    assert "openai/m" in err.message and "7 s" in err.hint


def test_rate_limit_without_retry_after(le):
    err = classify(le.RateLimitError("slow down", "openai", "m", response=_resp(429)))
    assert (err.kind, err.transient, err.retry_after) == ("rate_limit", True, None)


def test_insufficient_quota_is_not_retried(le):
    exc = le.RateLimitError("You exceeded your quota", "openai", "m", response=_resp(429))
    exc.code = "insufficient_quota"
    err = classify(exc)
    assert (err.kind, err.transient) == ("quota", False)


def test_context_window_is_checked_before_bad_request(le):
    exc = le.ContextWindowExceededError("too long", "m", "openai", response=_resp(400))
    assert isinstance(exc, le.BadRequestError)
    err = classify(exc)
    assert (err.kind, err.transient) == ("context_window", False)
    assert "new session" in err.hint


def test_bad_request_with_context_code_in_body(le):
    exc = le.BadRequestError("x", "m", "openai", response=_resp(400))
    exc.body = {"error": {"message": "too many tokens", "code": "context_length_exceeded"}}
    assert classify(exc).kind == "context_window"


@pytest.mark.parametrize(
    ("factory", "kind", "transient"),
    [
        (lambda le: le.ServiceUnavailableError("busy", "openai", "m", _resp(503)), "server", True),
        (lambda le: le.InternalServerError("boom", "openai", "m", _resp(500)), "server", True),
        (lambda le: le.BadGatewayError("bad gw", "openai", "m", _resp(502)), "server", True),
        (
            lambda le: le.APIError(529, "Overloaded", "openai", "m", response=_resp(529)),
            "server",
            True,
        ),
        (lambda le: le.Timeout("timed out", "m", "openai"), "timeout", True),
        (
            lambda le: le.APIConnectionError("refused", "openai", "m", request=REQ),
            "connection",
            True,
        ),
        (lambda le: le.AuthenticationError("bad key", "openai", "m", _resp(401)), "auth", False),
        (lambda le: le.PermissionDeniedError("no", "openai", "m", _resp(403)), "auth", False),
        (lambda le: le.NotFoundError("no model", "m", "openai", _resp(404)), "not_found", False),
        (lambda le: le.BadRequestError("bad", "m", "openai", _resp(400)), "bad_request", False),
        (
            lambda le: le.UnprocessableEntityError("bad", "m", "openai", _resp(422)),
            "bad_request",
            False,
        ),
    ],
)
def test_kinds_by_type(le, factory, kind, transient):
    err = classify(factory(le))
    assert (err.kind, err.transient) == (kind, transient)
    assert err.message and "\n" not in err.message


def test_midstream_cut_is_transient_connection(le):
    original = le.APIConnectionError("Connection error.", "openai", "m", request=REQ)
    exc = le.MidStreamFallbackError(
        "cut", "m", "openai", original_exception=original, generated_content="partial"
    )
    err = classify(exc)
    assert (err.kind, err.transient, err.status) == ("connection", True, None)
    assert "broke off" in err.message


def test_midstream_malformed_json_is_transient_server(le):
    try:
        json.loads('{"broken')
    except ValueError as bad:
        exc = le.MidStreamFallbackError("bad chunk", "m", "openai", original_exception=bad)
    err = classify(exc)
    assert (err.kind, err.transient) == ("server", True)
    assert "malformed" in err.message


def test_connection_error_disguised_as_internal_server_error(le):
    # LiteLLM reports connection refused as InternalServerError("Connection error.") with
    # a made-up 500; the transport error is still in the chain.
    exc = le.InternalServerError("Connection error.", "openai", "m", _resp(500))
    exc.__context__ = ConnectionRefusedError(111, "Connection refused")
    err = classify(exc)
    # Refused on this machine (REQ is 127.0.0.1): a retry 2 s later finds nothing either.
    assert (err.kind, err.transient, err.status) == ("connection", False, None)
    err = classify(exc, url="https://llm.example.com/v1")
    assert (err.kind, err.transient, err.status) == ("connection", True, None)
    assert "nothing listening on https://llm.example.com/v1" in err.message


def test_plain_python_errors():
    assert classify(ConnectionResetError()).kind == "connection"
    assert classify(TimeoutError()).kind == "timeout"
    assert classify(httpx.ReadTimeout("slow")).kind == "timeout"
    assert classify(RuntimeError("the model is overloaded")).kind == "server"
    err = classify(ValueError("weird"))
    assert (err.kind, err.transient) == ("internal", False)
    assert "ValueError" not in err.message and "weird" in err.message  # no class names


def test_llm_error_passes_through():
    original = LLMError("x", kind="auth", transient=False)
    assert classify(original) is original


def test_provider_name_in_advice(le):
    exc = le.AuthenticationError("bad key", "openai", "m", _resp(401))
    err = classify(exc, provider="groq", env_var="GROQ_API_KEY")
    assert "providers.groq.apiKey" in err.hint and "GROQ_API_KEY" in err.hint
    assert "picobot onboard" not in err.hint and "--model demo" in err.hint


def test_wrapper_prefixes_are_stripped(le):
    exc = le.NotFoundError(
        "NotFoundError: OpenAIException - The model `x` does not exist", "m", "openai", _resp(404)
    )
    err = classify(exc)
    assert "OpenAIException" not in err.message and "litellm." not in err.message
    assert "The model `x` does not exist" in err.message


def test_long_multiline_detail_becomes_one_short_line():
    err = classify(RuntimeError("line one\nline two " + "x" * 1000))
    assert "\n" not in err.message and len(err.message) < 400


@given(st.text(max_size=200), st.sampled_from([401, 404, 429, 500, 400]))
def test_key_never_leaks(prefix, status):
    from picobot_tui.core.secrets import Scrubber

    le = load_litellm().exceptions
    text = f"{prefix} Incorrect API key provided: {SECRET} {prefix}"
    exc = le.APIError(status, text, "openai", "m", response=_resp(status))
    err = classify(exc, scrub=Scrubber([SECRET], include_env=False), model="openai/m")
    assert SECRET not in err.message and SECRET not in err.hint
    assert "\n" not in err.message


def test_key_cut_by_truncation_does_not_leak(le):
    from picobot_tui.core.secrets import Scrubber

    for pad in range(150, 210):
        exc = le.AuthenticationError("x" * pad + f" key {SECRET} end", "openai", "m", _resp(401))
        err = classify(exc, scrub=Scrubber([SECRET], include_env=False))
        assert SECRET[:12] not in err.message


# -- transient by its words (issue 9, point 7) -----------------------------------------------


@pytest.mark.parametrize(
    ("words", "kind"),
    [
        ("upstream rate_limit_exceeded, slow down", "rate_limit"),
        ("proxy said: 429 Too Many Requests", "rate_limit"),
        ("gateway TIMEOUT talking to the model", "timeout"),
        ("Connection closed by the upstream", "connection"),
        ("HTTP 503 from the backend", "server"),
        ("The model is Overloaded right now", "server"),
    ],
)
def test_untyped_errors_naming_a_transient_fault_are_retried(le, words, kind):
    """No HTTP status, or only a 400: the words decide (case-insensitive)."""
    for exc in (RuntimeError(words), le.BadRequestError(words, "m", "openai", _resp(400))):
        err = classify(exc)
        assert (err.kind, err.transient) == (kind, True), (type(exc), words)


@pytest.mark.parametrize(
    ("factory", "kind"),
    [
        (lambda le: le.AuthenticationError("timeout of key", "openai", "m", _resp(401)), "auth"),
        (lambda le: le.NotFoundError("connection 503", "m", "openai", _resp(404)), "not_found"),
        (
            lambda le: le.ContextWindowExceededError("overloaded with 429 tokens", "m", "openai"),
            "context_window",
        ),
    ],
)
def test_typed_auth_not_found_and_context_window_stay_permanent(le, factory, kind):
    err = classify(factory(le))
    assert (err.kind, err.transient) == (kind, False)


def test_numbers_inside_other_numbers_are_not_a_status():
    err = classify(ValueError("the prompt has 14290 tokens and 5031 words"))
    assert (err.kind, err.transient) == ("internal", False)


def test_midstream_provider_error_overloaded_is_server_not_connection(le):
    original = le.InternalServerError("AnthropicError - Overloaded", "anthropic", "m", _resp(500))
    exc = le.MidStreamFallbackError("overloaded", "m", "anthropic", original_exception=original)
    err = classify(exc)
    assert (err.kind, err.transient, err.status) == ("server", True, None)
    assert err.message.startswith("The provider is overloaded")
    assert "broke off" not in err.message and "apiBase" not in err.message


# -- an Anthropic 529 through the real LiteLLM (issue 9, point 12) ---------------------------


class _AnthropicStub(BaseHTTPRequestHandler):
    """POST /v1/messages: `529` answers Anthropic's overloaded error; `mid` streams a text
    delta and then an `error` event, as Anthropic does when it is overloaded mid-answer."""

    mode = "529"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        overloaded = {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
        }
        if self.mode == "529":
            data = json.dumps(overloaded).encode()
            self.send_response(529)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        message = {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": [],
                   "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
        frames = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": "Partial"}}),
            ("error", overloaded),
        ]  # fmt: skip
        for name, payload in frames:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode())
            self.wfile.flush()


@pytest.mark.parametrize("mode", ["529", "mid"])
async def test_anthropic_overloaded_reads_as_overloaded(mode, picobot_home):
    """Before: "HTTP 500" and a raw b'{...}' body (529), "stream broke off ... apiBase"
    (mid-stream). Now: the real status, Anthropic's own message, a server-side cause."""
    from picobot_tui.config.settings import load_settings
    from picobot_tui.core.llm.client import LiteLLMClient
    from picobot_tui.core.llm.model import ModelRequest

    handler = type("Stub", (_AnthropicStub,), {"mode": mode})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = load_settings()[0]
        settings.providers.anthropic.api_base = f"http://127.0.0.1:{server.server_address[1]}"
        settings.providers.anthropic.api_key = SecretStr(SECRET)
        client = LiteLLMClient(settings)
        request = ModelRequest("anthropic/claude-test", [{"role": "user", "content": "hi"}],
                               [], 64, 0.0)  # fmt: skip
        with pytest.raises(LLMError) as info:
            async for _ in client.stream(request):
                pass
    finally:
        server.shutdown()
        server.server_close()
    err = info.value
    assert (err.kind, err.transient) == ("server", True)
    assert err.message.startswith("The provider is overloaded (anthropic/claude-test")
    assert err.message.endswith(": Overloaded.")
    assert "b'" not in err.message and "{" not in err.message and "HTTP 500" not in err.message
    assert err.status == (529 if mode == "529" else None)
    assert ("HTTP 529" in err.message) == (mode == "529")
    assert SECRET not in err.message
