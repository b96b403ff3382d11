"""Turns whatever LiteLLM (or the HTTP stack under it) raised into one classified LLMError.

Classification is by exception type and HTTP status, walking the exception's cause chain
(LiteLLM wraps connection failures as `InternalServerError("Connection error.")` and mid-stream
failures as `MidStreamFallbackError`, but keeps the original httpx/openai error in the chain).
Strings are a last resort: an error not typed as auth, not found or context-window whose
text says `rate_limit`, `timeout`, `connection`, `429`, `503` or `overloaded` is transient.
Messages are one line: the cause, a short provider detail, and what to do; configured API
keys are scrubbed out.

No LiteLLM import at module level: the litellm classes are looked up only when an exception
is being classified, and only if litellm is already loaded.
"""

from __future__ import annotations

import ast
import email.utils
import json
import math
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from picobot_tui.core import json_input
from picobot_tui.core.llm.error_text import (
    clean,
    connection_cause,
    connection_hint,
    is_loopback,
    request_url,
)
from picobot_tui.core.llm.model import LLMError
from picobot_tui.core.visible import label

Scrub = Callable[[str], str]

_PREFIX_RE = re.compile(r"^\s*(?:litellm\.)?[A-Za-z]*(?:Error|Exception|Timeout)\s*[:\-]\s*")
_CUT_MARKERS = (" Original exception:", " Error_str:", "Received Model Group", "LiteLLM Retried")
_MAX_DETAIL = 200


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, its causes/contexts and LiteLLM's `original_exception`, each once."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop(0)
        if item is None or any(item is s for s in seen) or len(seen) > 20:
            continue
        seen.append(item)
        yield item
        original = getattr(item, "original_exception", None)
        todo += [item.__cause__, item.__context__]
        if isinstance(original, BaseException):
            todo.append(original)


def _any(exc: BaseException, types: tuple[type[BaseException], ...]) -> bool:
    return bool(types) and any(isinstance(e, types) for e in _chain(exc))


def _headers(exc: BaseException) -> Mapping[str, str]:
    for source in (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
    ):
        if source:
            try:
                return {str(k).lower(): str(v) for k, v in dict(source).items()}
            except (TypeError, ValueError):
                continue
    return {}


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` (seconds or an HTTP date)."""
    lower = {k.lower(): v for k, v in headers.items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms:
        try:
            value = float(raw_ms) / 1000
            if math.isfinite(value):
                return max(0.0, value)
        except ValueError:
            pass
    raw = (lower.get("retry-after") or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
        return max(0.0, value) if math.isfinite(value) else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def _own_status(exc: BaseException) -> int | None:
    for key in ("status_code", "status"):
        value = getattr(exc, key, None)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    return None


def _status(exc: BaseException) -> int | None:
    """The HTTP status. LiteLLM maps statuses it has no class for (Anthropic's 529) to a
    made-up 500 while the provider's error in the cause chain keeps the real one."""
    status = _own_status(exc)
    if status == 500:
        for item in _chain(exc):
            inner = _own_status(item)
            if inner is not None and inner != 500:
                return inner
    return status


# Word-bounded numbers, so "4290 tokens" is not a 429.
_TEXT_KINDS = (
    (re.compile(r"rate_limit|\b429\b"), "rate_limit"),
    (re.compile(r"overloaded|\b503\b"), "server"),
    (re.compile(r"timeout"), "timeout"),
    (re.compile(r"connection"), "connection"),
)


def _text_kind(exc: BaseException) -> str | None:
    """The transient kind the error's words name (the whole cause chain's), or None."""
    text = " ".join(str(e) for e in _chain(exc)).lower()
    return next((kind for pattern, kind in _TEXT_KINDS if pattern.search(text)), None)


def _overloaded(exc: BaseException) -> bool:
    return _status(exc) == 529 or any("overloaded" in str(e).lower() for e in _chain(exc))


def _body_error(exc: BaseException) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, str):
        try:
            body = json_input.loads(body)
        except ValueError:
            return {}
    if isinstance(body, dict):
        inner = body.get("error", body)
        return inner if isinstance(inner, dict) else {"message": str(inner)}
    return {}


def _detail(exc: BaseException, scrub: Scrub) -> str:
    """A short, one-line provider detail without LiteLLM's wrapper prefixes, its controls
    and invisible characters shown as stand-ins. Scrubbed before it is shortened, so a key
    cut in half cannot slip through."""
    text = scrub(str(_body_error(exc).get("message") or getattr(exc, "message", None) or exc))
    for marker in _CUT_MARKERS:
        text = text.split(marker, 1)[0]
    text = re.sub(r"\b(?:OpenAI|Anthropic)(?:Exception|Error) - ", "", text)
    previous = None
    while previous != text:
        previous = text
        text = _PREFIX_RE.sub("", text)
    # The provider's text is shown by every front end: a label, its controls visible.
    text = label(clean(_json_message(text.strip()))).strip(" .")
    return label(text, _MAX_DETAIL)


def _json_message(text: str) -> str:
    """The `error.message` of a raw JSON body (LiteLLM shows Anthropic's as `b'{...}'`),
    else `text` unchanged."""
    raw: Any = text
    if text[:2] in ("b'", 'b"'):
        try:
            raw = ast.literal_eval(text).decode("utf-8", "replace")
        except (ValueError, SyntaxError, AttributeError):
            return text
    if not str(raw).lstrip().startswith("{"):
        return text
    try:
        body = json_input.loads(raw)
    except ValueError:
        return str(raw) if raw is not text else text
    inner = body.get("error", body) if isinstance(body, dict) else body
    message = inner.get("message") if isinstance(inner, dict) else inner
    return str(message) if isinstance(message, str | int | float) and message != "" else raw


def _litellm_types() -> dict[str, tuple[type[BaseException], ...]]:
    """LiteLLM / openai / httpx exception classes, if those modules are already loaded."""
    out: dict[str, tuple[type[BaseException], ...]] = {}

    def get(module: str, *names: str) -> tuple[type[BaseException], ...]:
        mod = sys.modules.get(module)
        return tuple(t for n in names if isinstance(t := getattr(mod, n, None), type))

    ll = "litellm.exceptions"
    out["context"] = get(ll, "ContextWindowExceededError")
    out["midstream"] = get(ll, "MidStreamFallbackError")
    out["rate"] = get(ll, "RateLimitError") + get("openai", "RateLimitError")
    out["timeout"] = (
        get(ll, "Timeout")
        + get("openai", "APITimeoutError")
        + get("httpx", "TimeoutException")
        + (TimeoutError,)
    )
    out["connection"] = (
        get(ll, "APIConnectionError")
        + get("openai", "APIConnectionError")
        + get("httpx", "TransportError")
        + (ConnectionError,)
    )
    out["auth"] = get(ll, "AuthenticationError", "PermissionDeniedError") + get(
        "openai", "AuthenticationError", "PermissionDeniedError"
    )
    out["not_found"] = get(ll, "NotFoundError") + get("openai", "NotFoundError")
    out["server"] = get(
        ll, "ServiceUnavailableError", "InternalServerError", "BadGatewayError"
    ) + get("openai", "InternalServerError")
    out["bad_request"] = get(
        ll, "BadRequestError", "UnprocessableEntityError", "UnsupportedParamsError"
    ) + get("openai", "BadRequestError", "UnprocessableEntityError")
    return out


_ACTIONS = {
    "rate_limit": "wait a moment and retry, or check your plan's rate limits",
    "quota": "check the provider account's billing and quota",
    "timeout": "retry, or raise agents.defaults.requestTimeout",
    "connection": "check the network and providers.{provider}.apiBase, then retry",
    "server": "the provider is having trouble; retry in a moment",
    "auth": "set a valid key in providers.{provider}.apiKey{env}, or try `--model demo`",
    "not_found": "check the model name (agents.defaults.model or --model) and "
    "providers.{provider}.apiBase",
    "context_window": "the conversation is too long for this model; start a new session or "
    "lower agents.defaults.tokenBudget",
    "bad_request": "the provider refused the request; check the model and its parameters",
    "internal": "this looks like a bug; run with --logs and report it",
}
_CAUSES = {
    "rate_limit": "Rate limited by the provider",
    "quota": "The provider account is out of quota",
    "timeout": "The provider did not answer in time",
    "connection": "Could not reach the provider",
    "server": "The provider had a server error",
    "overloaded": "The provider is overloaded",
    "auth": "The provider rejected the API key",
    "not_found": "The model was not found",
    "context_window": "The request is larger than the model's context window",
    "bad_request": "The provider rejected the request",
    "internal": "Unexpected error calling the model",
}
_TRANSIENT = {"rate_limit", "timeout", "connection", "server"}


def _repeating(exc: BaseException) -> bool:
    """LiteLLM's loop guard: it ends a stream after 100 identical chunks."""
    return any("repeating the same chunk" in str(e) for e in _chain(exc))


_MISSING_KEY = ("missing credentials", "api_key client option must be set")


def _missing_key(exc: BaseException) -> bool:
    """No key was sent at all. LiteLLM reports the OpenAI SDK's refusal to call without one
    as a made-up HTTP 500 ("Missing credentials"): never a server error, never retried."""
    text = " ".join(str(e) for e in _chain(exc)).lower()
    return any(marker in text for marker in _MISSING_KEY)


def _unrouted(exc: BaseException) -> bool:
    """LiteLLM could not tell which provider serves the model (it never sent a request)."""
    return any("llm provider not provided" in str(e).lower() for e in _chain(exc))


def _kind(exc: BaseException, t: dict[str, tuple[type[BaseException], ...]]) -> str:
    status = _status(exc)
    code = str(_body_error(exc).get("code") or getattr(exc, "code", None) or "")
    if isinstance(exc, t["context"]) or code == "context_length_exceeded":
        return "context_window"
    if isinstance(exc, t["rate"]) or status == 429:
        return "quota" if code == "insufficient_quota" else "rate_limit"
    if _any(exc, t["timeout"]) or status == 408:
        return "timeout"
    if isinstance(exc, t["midstream"]):
        if _any(exc, (json.JSONDecodeError,)) or _repeating(exc):
            return "server"
        # A provider's error event mid-stream ("overloaded") is not a broken connection.
        named = _text_kind(exc)
        return named if named in ("rate_limit", "server") else "connection"
    if isinstance(exc, t["auth"]) or status in (401, 403) or _missing_key(exc):
        return "auth"
    if isinstance(exc, t["not_found"]) or status == 404 or _unrouted(exc):
        return "not_found"
    # LiteLLM reports a refused/reset connection as InternalServerError("Connection error.")
    # with a fabricated 500 response: the cause chain still holds the transport error.
    if _any(exc, t["connection"]):
        return "connection"
    if isinstance(exc, t["server"]) or (status is not None and status >= 500):
        return "server"
    # Anything not typed auth / not found / context window whose words name a transient
    # fault is one, typed as a bad request or not typed at all.
    kind = _text_kind(exc)
    if kind is not None:
        return kind
    if isinstance(exc, t["bad_request"]) or status in (400, 413, 422):
        return "bad_request"
    return "internal"


def classify(
    exc: BaseException,
    *,
    scrub: Scrub = lambda s: s,
    model: str = "",
    provider: str | None = None,
    env_var: str | None = None,
    url: str | None = None,
) -> LLMError:
    """Classify `exc` into an LLMError: a one-line, key-free message (the cause, and for a
    connection the URL tried) and a hint saying what to do, empty when it would only repeat
    the message. No library class name, object repr or LiteLLM tip reaches either.

    `provider` (the `providers.<name>` entry) and `env_var` (its standard key variable) make
    the advice name the exact setting to change; `url` is the apiBase the call went to.
    """
    if isinstance(exc, LLMError):
        return exc
    types = _litellm_types()
    kind = _kind(exc, types)
    status = _status(exc)
    headers = _headers(exc)
    cause = _CAUSES[kind]
    midstream = isinstance(exc, types["midstream"])
    if midstream:
        status = None  # LiteLLM puts a made-up 500 on every mid-stream failure
        if kind == "connection":
            cause = "The response stream broke off before it finished"
        elif _repeating(exc):
            cause = "The model kept repeating the same output, so LiteLLM stopped the stream"
        elif _any(exc, (json.JSONDecodeError,)):
            cause = "The provider sent a malformed stream chunk"
        elif _overloaded(exc):
            cause = "The provider is overloaded"
        elif kind == "rate_limit":
            cause = "Rate limited by the provider in the middle of the answer"
        else:
            cause = "The provider sent an error in the middle of the answer"
    elif kind in ("connection", "timeout") and not headers:
        status = None  # LiteLLM's made-up 500/408 when no HTTP response came back
    elif kind == "auth" and _missing_key(exc):
        cause = "No API key was sent"
        if status is not None and status >= 500:
            status = None  # LiteLLM's made-up 500 for a request it never sent
    elif kind == "server" and _overloaded(exc):
        cause = _CAUSES["overloaded"]
    detail = _detail(exc, scrub)
    html_page = False
    if re.fullmatch(r"Error code: \d+", detail):  # the SDK's stand-in for a body not JSON
        html_page = "html" in headers.get("content-type", "")
        detail = "an HTML page came back, not the API's JSON" if html_page else ""
    if _unrouted(exc):  # LiteLLM's long how-to, cut mid-word: say it in a few words
        cause, status = "Unknown model", None
        detail = "LiteLLM cannot tell which provider serves it; add a provider prefix"
    where = ", ".join(p for p in (model, f"HTTP {status}" if status else "") if p)
    retry_after = parse_retry_after(headers) if kind in _TRANSIENT else None
    action = _ACTIONS[kind].format(
        provider=provider or "<name>", env=f" or {env_var}" if env_var else ""
    )
    if retry_after is not None:
        action = f"retry after {retry_after:g} s"
    hint = action[0].upper() + action[1:] + "."
    if html_page and url:  # a web page at apiBase: most often its address, not an outage
        setting = f"providers.{provider}.apiBase" if provider else "the provider's apiBase"
        hint = f"Check that {setting} ({url}) is the API's address (it often ends in /v1)."
    transient = kind in _TRANSIENT
    if kind == "connection" and not midstream:
        chain = list(_chain(exc))
        tried = url or request_url(chain)
        described = connection_cause(chain, tried)
        if described is not None:
            detail, failure = described
            setting = f"providers.{provider}.apiBase" if provider else "the provider's apiBase"
            hint = connection_hint(failure, tried, setting)
            # Nothing listens on this machine's port: a retry 2 s later finds the same.
            transient = not (failure == "refused" and is_loopback(tried))
    message = cause + (f" ({where})" if where else "") + (f": {detail}" if detail else "")
    return LLMError(
        scrub(" ".join(message.split())).rstrip(".") + ".",
        kind=kind,
        transient=transient,
        status=status,
        retry_after=retry_after,
        hint=scrub(hint),
    )
