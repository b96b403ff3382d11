"""The LiteLLM model client: the only module that imports litellm, and only lazily.

`import litellm` costs 3-4 s, so nothing here imports it at module level. The first call
to `load_litellm()` (from `LiteLLMClient.stream/context_window/warm`) does, once, after
forcing the offline price map and silencing LiteLLM's terminal output.

`LiteLLMClient.stream()` turns one streamed completion into TextChunk / ToolCallChunk /
UsageChunk items (see core/model.py) and raises a classified LLMError on failure, whether
the call fails up front or mid-stream. It never retries: `max_retries=0` turns off the
OpenAI SDK's hidden retries so the loop owns retry policy and can show it. LiteLLM itself
still sends a request again after an HTTP 422 when `drop_params` is on (without the params
the provider named); every request LiteLLM sends is counted (`RequestCounter`) and each
extra one comes out as a `ResentChunk`, so the trace and the events show it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from picobot_tui.core.llm.cache_markers import mark, needs_markers
from picobot_tui.core.llm.demo import is_demo
from picobot_tui.core.llm.errors import classify
from picobot_tui.core.llm.litellm_compat import provider_sent_usage, proxy_cost
from picobot_tui.core.llm.model import (
    Chunk,
    LLMError,
    ModelRequest,
    ResentChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)
from picobot_tui.core.llm.usage import Rates, price, read_usage, rewrite_price, uncached_price
from picobot_tui.core.paths import config_path, shown
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.shapes.providers import (
    BARE_PREFIXES,
    MODEL_PREFIXES,
    OPENAI_COMPATIBLE,
    PROVIDER_ENV,
)

log = logging.getLogger("picobot.llm")

_LOCK = threading.Lock()
_LITELLM: ModuleType | None = None
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
_LOWERED_AT_IMPORT = ("httpx", "apscheduler.executors.default", "apscheduler.scheduler")
_COUNTS: dict[str, int] = {}
"""HTTP requests LiteLLM sent per picobot call id, for the calls in flight only."""
RESENT = (
    "LiteLLM sent the request again on its own (it does after an HTTP 422 with drop_params "
    "on, without the parameters the provider named)"
)

LOCAL_DUMMY_KEY = "sk-local"
"""Sent when an apiBase is configured without a key: LiteLLM refuses to call with no key."""


# -- the lazy import ------------------------------------------------------------------------


class _Forward(logging.Handler):
    """Hands LiteLLM's log records to picobot's logger (file / --logs), never the terminal."""

    def __init__(self, target: logging.Logger) -> None:
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        if self.target.isEnabledFor(record.levelno):
            self.target.handle(record)


def _quiet_logging() -> None:
    target = logging.getLogger("picobot.litellm")
    if not any(isinstance(h, logging.NullHandler) for h in target.handlers):
        # Without any handler in the chain, Python's last-resort handler would print
        # warnings to stderr; picobot's own handlers (if configured) still get them.
        target.addHandler(logging.NullHandler())
    for name in _LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False
        logger.addHandler(_Forward(target))
    # LiteLLM's import lowers these to WARNING (litellm._logging._suppress_loggers); said
    # again here so the result does not depend on whether the import ran before picobot's
    # logging set-up or after it: the warm server (picobot_tui/warm) imports LiteLLM first,
    # and `--logs` then showed every httpx request that a cold run hides.
    for name in _LOWERED_AT_IMPORT:
        logging.getLogger(name).setLevel(logging.WARNING)


def _install_request_counter(litellm: ModuleType) -> None:
    """Count each HTTP request LiteLLM sends: its `pre_call` log hook runs once per request,
    its own re-sends included. An input callback only (not `litellm.callbacks`), so the
    success/failure logging paths do not grow; ids picobot did not register are ignored."""
    try:
        from litellm.integrations.custom_logger import CustomLogger
    except ImportError:  # another LiteLLM layout: every call counts as one request
        log.warning("LiteLLM has no CustomLogger: its own re-sends cannot be counted")
        return

    class RequestCounter(CustomLogger):
        def log_pre_api_call(self, model: Any, messages: Any, kwargs: Any) -> None:
            call_id = kwargs.get("litellm_call_id") if isinstance(kwargs, dict) else None
            if call_id in _COUNTS:
                _COUNTS[call_id] += 1

    litellm.input_callback.append(RequestCounter())


def _requests_sent(call_id: str) -> int:
    """How many HTTP requests the call sent (at least one), forgetting the id."""
    return max(1, _COUNTS.pop(call_id, 1))


def load_litellm() -> ModuleType:
    """Import and configure LiteLLM once (thread-safe); returns the module."""
    global _LITELLM
    if _LITELLM is not None:
        return _LITELLM
    with _LOCK:
        if _LITELLM is None:
            # The import builds ~400k objects that live as long as the process and frees
            # almost none, so the collections it triggers are wasted work: ~0.6 s of its
            # ~2.6 s of CPU. The collector is paused for it (unless something else paused
            # it already) and on again once what it built is frozen below.
            paused = gc.isenabled()
            gc.disable()
            try:
                _LITELLM = _import_litellm()
            finally:
                if paused:
                    gc.enable()
    return _LITELLM


def litellm_loaded() -> bool:
    """LiteLLM is imported in this process (a call made now does not wait for it)."""
    return _LITELLM is not None


def _import_litellm() -> ModuleType:
    # Must be the string "True", set before the import, or LiteLLM tries to fetch its
    # price map over the network (up to 5 s, then a printed warning).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Provider List" prints
    litellm.drop_params = True  # drop params a provider does not support
    # Token counting for llama/cohere names downloads a tokenizer from Hugging Face,
    # synchronously inside the async call: offline that blocks ~25 s and prints retries.
    # Use the bundled tiktoken tokenizer instead.
    litellm.disable_hf_tokenizer_download = True
    _quiet_logging()
    _install_request_counter(litellm)
    # The import leaves ~400k long-lived objects. Every full garbage collection walks them
    # all: 0.2-0.4 s with the GIL held, a frozen TUI several times a minute while it
    # streams (bench #5: key-press latency p95 ~400 ms). Freezing moves what exists now
    # out of the collector's sight for good (with the ~2,000 cycles the import left as
    # garbage, ~1 MB: collecting them first would cost a full collection, ~0.3 s).
    gc.freeze()
    return litellm


# -- routing a model to its provider entry --------------------------------------------------


@dataclass(frozen=True)
class Route:
    """How one model string is called: the config entry it uses and LiteLLM's kwargs."""

    provider: str | None
    """The `providers.<name>` entry used, or None (LiteLLM's own env/defaults)."""
    model: str
    """The model string handed to LiteLLM."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    """api_key / api_base / extra_headers / custom_llm_provider."""


def _structured(litellm: ModuleType, route: Route) -> bool:
    """The provider has a structured-output mode for this model, by LiteLLM's model map
    (its local copy: never a network call)."""
    try:
        return bool(
            litellm.supports_response_schema(
                model=route.model, custom_llm_provider=route.kwargs.get("custom_llm_provider")
            )
        )
    except Exception:  # LiteLLM raises for a model it does not know, rather than answer
        return False


def provider_for(model: str) -> str | None:
    """The config entry a model string belongs to by its prefix (None if unknown)."""
    prefix, sep, _ = model.partition("/")
    if sep:
        return MODEL_PREFIXES.get(prefix)
    lower = model.lower()
    return next((name for start, name in BARE_PREFIXES if lower.startswith(start)), None)


def _with_v1(api_base: str) -> str:
    """OpenAI-compatible servers live under /v1; the SDK does not add it. Add it when
    the URL has no path at all (a URL with a path is left exactly as given)."""
    parts = urlsplit(api_base)
    if parts.scheme and parts.netloc and parts.path in ("", "/"):
        return api_base.rstrip("/") + "/v1"
    return api_base


def resolve_route(settings: CoreSettings, model: str) -> Route:
    """Pick the provider entry for `model` and build LiteLLM's connection kwargs."""
    name = provider_for(model)
    custom = settings.providers.custom
    if name is None and custom.api_base:
        name = "custom"
    if name is None:
        return Route(None, model, {})
    cfg = getattr(settings.providers, name)
    prefix, _, rest = model.partition("/")
    litellm_model = model
    kwargs: dict[str, Any] = {}
    if prefix == "vllm":
        litellm_model = f"hosted_vllm/{rest}"  # LiteLLM's "vllm/" is the in-process engine
    if name == "custom":
        if prefix == "custom":
            litellm_model = rest
        kwargs["custom_llm_provider"] = "openai"  # any OpenAI-compatible endpoint
    api_base = cfg.api_base
    if api_base:
        kwargs["api_base"] = _with_v1(api_base) if name in OPENAI_COMPATIBLE else api_base
    key = cfg.api_key.get_secret_value() if cfg.api_key is not None else ""
    env = PROVIDER_ENV.get(name)
    if key:
        kwargs["api_key"] = key
    elif api_base and not (env and os.environ.get(env)):
        kwargs["api_key"] = LOCAL_DUMMY_KEY
    if cfg.extra_headers:
        kwargs["extra_headers"] = dict(cfg.extra_headers)
    return Route(name, litellm_model, kwargs)


def check_credentials(settings: CoreSettings, model: str, *, how: str = "--model") -> str | None:
    """A user-facing message when `model` cannot work for lack of a key, else None.

    Local models (ollama, anything with an apiBase) and models of providers picobot does
    not know (LiteLLM finds their keys itself) pass. Offline and cheap (no LiteLLM import):
    the TUI says it as soon as its screen is up. The message names the variable and the
    config key, never `picobot onboard` (the user has often just run it). `how` is the way
    to name another model where the message is shown (`--model`, `/model`).
    """
    if is_demo(model):
        return None
    route = resolve_route(settings, model)
    name = route.provider
    if name is None or name == "ollama" or "api_base" in route.kwargs:
        return None
    if "api_key" in route.kwargs:
        return None
    env = PROVIDER_ENV.get(name)
    if env is None:  # vllm / custom with no apiBase
        return (
            f"Model `{model}` needs a server address: set providers.{name}.apiBase "
            f"(e.g. http://127.0.0.1:8000/v1) in {shown(config_path())}, or try `{how} demo`."
        )
    if os.environ.get(env):
        return None
    return (
        f"No API key for `{model}`: set {env} in the environment, or providers.{name}.apiKey "
        f"in {shown(config_path())}; or try `{how} demo` to see picobot without a provider."
    )


# -- the client -----------------------------------------------------------------------------


class IdleClock:
    """requestTimeout for a whole call's silence, not per read.

    httpx's read timeout restarts on every byte, so SSE keep-alive comments (`: ping`)
    kept a call alive forever. Here only time spent waiting on the provider counts, and
    only content, a tool-call delta or usage (`progress()`) starts it again; time the
    consumer spends between chunks is not held against the provider. Running out raises
    TimeoutError, which `classify` makes a transient "timeout" (retried by the loop).
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.left = seconds

    def progress(self) -> None:
        self.left = self.seconds

    async def wait(self, awaitable: Any) -> Any:
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = asyncio.timeout(max(self.left, 0.0))
        try:
            async with deadline:
                return await awaitable
        except TimeoutError:
            if not deadline.expired():
                raise  # the transport's own timeout: classified as it is
            raise TimeoutError(
                f"no content, tool call or usage for {self.seconds:g} s "
                "(agents.defaults.requestTimeout)"
            ) from None
        finally:
            self.left -= loop.time() - start


class LiteLLMClient:
    """ModelClient over `litellm.acompletion`, streaming."""

    def __init__(self, settings: CoreSettings) -> None:
        self.settings = settings
        self._windows: dict[str, int | None] = {}
        self._rates: dict[str, Rates | None] = {}

    def warm(self, model: str | None = None) -> None:
        """Import LiteLLM and run one offline mock completion of `model`, so the first real
        call does not pay LiteLLM's lazy imports and tokenizer load (~1.5 s). The model
        matters: LiteLLM loads the tokenizer of the model it counts for, and warming with
        another one kept two in memory (~60 MB, bench #6). Blocking: call it from a thread
        at start-up. Never raises."""
        litellm = load_litellm()
        route = self.route(model) if model else Route(None, "openai/gpt-4o-mini")
        provider = route.kwargs.get("custom_llm_provider")
        try:
            stream = litellm.completion(
                model=route.model,
                **({"custom_llm_provider": provider} if provider else {}),
                messages=[{"role": "user", "content": "warm-up"}],
                mock_response="ok",
                stream=True,
                stream_options={"include_usage": True},
            )
            for _ in stream:
                pass
        except Exception:  # warming is best effort
            log.debug("LiteLLM warm-up call failed", exc_info=True)

    def route(self, model: str) -> Route:
        return resolve_route(self.settings, model)

    def _scrubber(self, route: Route) -> Scrubber:
        scrub = Scrubber(self.settings.secrets())
        if route.kwargs.get("api_key") not in (None, LOCAL_DUMMY_KEY):
            scrub.add(route.kwargs["api_key"])
        return scrub

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        route = self.route(request.model)
        scrub = self._scrubber(route)
        messages = list(request.messages)
        marked = self._marked(route)
        if marked and request.cache_at:
            messages = mark(messages, request.cache_at, self.settings.cache.ttl)
        kwargs: dict[str, Any] = {
            "model": route.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "timeout": self.settings.agents.defaults.request_timeout,
            # picobot's loop is the only retry policy (it shows the wait, Esc cancels it):
            # the OpenAI SDK's two hidden retries and LiteLLM's own are off.
            "max_retries": 0,
            "num_retries": 0,
            **route.kwargs,
        }
        call_id = kwargs["litellm_call_id"] = f"picobot-{uuid.uuid4().hex}"
        if request.tools:
            kwargs["tools"] = list(request.tools)
        response: Any = None
        usage_chunk: Any = None
        resent = 0
        idle = IdleClock(float(self.settings.agents.defaults.request_timeout))
        try:
            if problem := check_credentials(self.settings, request.model):
                # No key at all: say what to do, never send (nor retry) a keyless request.
                raise LLMError(problem, kind="auth", transient=False)
            # Import off the event loop if nobody warmed LiteLLM up yet (3-4 s).
            litellm = _LITELLM if _LITELLM is not None else await asyncio.to_thread(load_litellm)
            if request.response_format is not None and _structured(litellm, route):
                kwargs["response_format"] = request.response_format
            # Up to the response headers, httpx's own timeouts apply: the first call also
            # pays LiteLLM's lazy imports here (~1.5 s of CPU), which is not provider silence.
            _COUNTS[call_id] = 0
            try:
                response = await litellm.acompletion(**kwargs)
            finally:
                resent = _requests_sent(call_id) - 1
            for _ in range(resent):
                yield ResentChunk(RESENT)
            was_resent, resent = resent > 0, 0
            if response is None and not was_resent:
                raise RuntimeError("LiteLLM returned no response")  # classified: internal
            if response is None:
                # LiteLLM's 422 re-send loop ends without raising when the second request
                # is refused too.
                raise LLMError(
                    f"The provider rejected the request ({request.model}, HTTP 422) again "
                    "after LiteLLM dropped the parameters it named — check the model and its "
                    "parameters.",
                    kind="bad_request",
                    transient=False,
                    status=422,
                    hint="Check the model and its parameters.",
                )
            chunks = response.__aiter__()
            while True:
                try:
                    chunk = await idle.wait(chunks.__anext__())
                except StopAsyncIteration:
                    break
                if getattr(chunk, "usage", None):
                    usage_chunk = chunk
                    idle.progress()
                if not chunk.choices:
                    continue
                delta = getattr(chunk.choices[0], "delta", None)
                if delta is None:
                    continue
                if getattr(delta, "content", None) or getattr(delta, "tool_calls", None):
                    idle.progress()
                elif getattr(delta, "reasoning_content", None):
                    idle.progress()  # a reasoning model thinking out loud is not idle
                if content := getattr(delta, "content", None):
                    yield TextChunk(content)
                for tc in getattr(delta, "tool_calls", None) or ():
                    fn = getattr(tc, "function", None)
                    yield ToolCallChunk(
                        index=getattr(tc, "index", None),
                        id=getattr(tc, "id", None),
                        name=getattr(fn, "name", None),
                        arguments=getattr(fn, "arguments", None),
                    )
        except Exception as exc:  # classified; CancelledError/GeneratorExit pass through
            for _ in range(resent):  # re-sends of a call that failed all the same
                yield ResentChunk(RESENT)
            error = classify(
                exc,
                scrub=scrub,
                model=request.model,
                provider=route.provider,
                env_var=PROVIDER_ENV.get(route.provider or ""),
                url=route.kwargs.get("api_base"),
            )
            log.info("model call failed: %s (%s)", error.message, type(exc).__name__)
            raise error from None
        finally:
            if response is not None and hasattr(response, "aclose"):
                try:
                    await response.aclose()
                except Exception:  # closing a broken stream must not mask the real error
                    log.debug("closing the stream failed", exc_info=True)
        if usage_chunk is not None and provider_sent_usage(response):
            yield self._usage(usage_chunk, route, marked and bool(request.cache_at))

    def _marked(self, route: Route) -> bool:
        return self.settings.cache.enabled and needs_markers(route.model, route.provider)

    def rates(self, model: str) -> Rates | None:
        """The model's five rates from LiteLLM's price table (None for an unknown model)."""
        if model not in self._rates:
            try:
                info = load_litellm().get_model_info(model)
            except Exception:  # unknown model (ModelNotMappedError and friends): no price
                info = None
            self._rates[model] = Rates.from_table(info) if info else None
        return self._rates[model]

    def _usage(self, chunk: Any, route: Route, marked: bool) -> UsageChunk:
        """The call's tokens, split the same way for every provider, and its cost: a LiteLLM
        Proxy's own figure when it sent one, else picobot's from the price table."""
        tokens = read_usage(chunk.usage)
        rates = self.rates(route.model)
        cost = proxy_cost(chunk)
        if cost is None and rates is not None:
            cost = price(tokens, rates)
        saved = rewrite = None
        if rates is not None:
            saved = uncached_price(tokens, rates) - price(tokens, rates)
            if marked:  # what the prefix this call left in the cache costs to write again
                prefix = tokens.cache_read + tokens.cache_write
                rewrite = rewrite_price(prefix, self.settings.cache.ttl, rates)
        return UsageChunk(
            tokens.prompt,
            tokens.output,
            cost,
            cache_read=tokens.cache_read,
            cache_write_5m=tokens.cache_write_5m,
            cache_write_1h=tokens.cache_write_1h,
            reasoning=tokens.reasoning,
            saved=saved,
            rewrite_cost=rewrite,
            cache_marked=marked,
        )

    def context_window(self, model: str) -> int | None:
        """Config `contextWindow` first, else LiteLLM's model map (offline; may import
        LiteLLM), else None."""
        configured = self.settings.agents.defaults.context_window
        if configured:
            return configured
        if model not in self._windows:
            window: int | None = None
            try:
                info = load_litellm().get_model_info(self.route(model).model)
                value = info.get("max_input_tokens") or info.get("max_tokens")
                window = int(value) if value else None
            except Exception:  # unknown model
                window = None
            self._windows[model] = window
        return self._windows[model]
