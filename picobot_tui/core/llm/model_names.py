"""Is a model name one LiteLLM can route? Checked before the first call, offline.

`--model nonsense-model` used to reach LiteLLM, fail inside the call and come back as a cut
provider error. `unknown_model()` asks LiteLLM's own provider resolution first (no network:
`get_llm_provider` reads its tables, the price map is the bundled one) and names close known
models (difflib over LiteLLM's local model map). Names picobot routes itself pass without
LiteLLM: `demo`, a provider prefix picobot knows (`openai/anything`), and any name when the
provider entry it routes to has an `apiBase` (an OpenAI-compatible server decides its own
names). Everything else imports LiteLLM: call it from a thread in the TUI.
"""

from __future__ import annotations

import difflib
import threading
from types import ModuleType
from typing import Any

from picobot_tui.core.llm.client import load_litellm, provider_for, resolve_route
from picobot_tui.core.llm.demo import DEMO_MODEL, is_demo
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.shapes.providers import MODEL_PREFIXES, PROVIDER_NAMES

_LOCK = threading.Lock()
_KNOWN: dict[str, tuple[str, ...]] = {}
_CHECKED: dict[tuple[str, str | None], bool] = {}


def _chat_models(litellm: ModuleType) -> dict[str, dict[str, Any]]:
    cost = getattr(litellm, "model_cost", None) or {}
    return {
        name: info
        for name, info in cost.items()
        if isinstance(info, dict) and info.get("mode") in ("chat", None) and name != "sample_spec"
    }


def picobot_names(litellm: ModuleType) -> tuple[str, ...]:
    """Chat models of the providers picobot has a config entry for, as picobot names them
    (`openai/gpt-4o`, `anthropic/claude-...`): what `/model ` completes. Cached."""
    with _LOCK:
        if "picobot" not in _KNOWN:
            names: set[str] = set()
            for name, info in _chat_models(litellm).items():
                provider = info.get("litellm_provider")
                if provider not in PROVIDER_NAMES:
                    continue
                prefix = name.partition("/")[0]
                names.add(name if prefix in MODEL_PREFIXES else f"{provider}/{name}")
            _KNOWN["picobot"] = tuple(sorted(names))
        return _KNOWN["picobot"]


def _all_names(litellm: ModuleType) -> tuple[str, ...]:
    with _LOCK:
        if "all" not in _KNOWN:
            _KNOWN["all"] = tuple(sorted(_chat_models(litellm)))
    return _KNOWN["all"] + picobot_names(litellm)


def completions(settings: CoreSettings, litellm: ModuleType | None = None) -> list[str]:
    """Model names to offer after `/model `: `demo`, the configured model, then LiteLLM's
    chat models of picobot's providers (LiteLLM's list only when `litellm` is given)."""
    first = [DEMO_MODEL, settings.agents.defaults.model]
    rest = picobot_names(litellm) if litellm is not None else ()
    return list(dict.fromkeys([*first, *rest]))


def _resolves(litellm: ModuleType, model: str, custom_provider: str | None) -> bool:
    key = (model, custom_provider)
    if key not in _CHECKED:
        try:
            litellm.get_llm_provider(model=model, custom_llm_provider=custom_provider)
            _CHECKED[key] = True
        except Exception:  # LiteLLM's BadRequestError "LLM Provider NOT provided", and kin
            _CHECKED[key] = False
    return _CHECKED[key]


def close_names(model: str, names: tuple[str, ...] | list[str], n: int = 3) -> list[str]:
    """Up to `n` known names close to `model` (difflib), best first."""
    return difflib.get_close_matches(model, list(dict.fromkeys(names)), n=n, cutoff=0.6)


def needs_litellm(settings: CoreSettings, model: str) -> bool:
    """False when the name is accepted without asking LiteLLM (see the module docstring)."""
    if is_demo(model):
        return False
    prefix, sep, _ = model.partition("/")
    if sep and prefix in MODEL_PREFIXES:
        return False
    return "api_base" not in resolve_route(settings, model).kwargs


def unknown_model(settings: CoreSettings, model: str, *, how: str = "--model") -> str | None:
    """The user-facing message when LiteLLM cannot route `model` (None when it can). `how`
    is the way to name another model where the message is shown (`--model`, `/model`).
    May import LiteLLM (3-4 s the first time)."""
    if not model.strip():
        return f"the model name is empty: pass {how} NAME (e.g. openai/gpt-4o-mini or demo)."
    if not needs_litellm(settings, model):
        return None
    litellm = load_litellm()
    route = resolve_route(settings, model)
    if _resolves(litellm, route.model, route.kwargs.get("custom_llm_provider")):
        return None
    prefix, sep, rest = model.partition("/")
    if sep:
        providers = [*MODEL_PREFIXES, *(str(p) for p in getattr(litellm, "provider_list", ()))]
        guesses = [f"{p}/{rest}" for p in close_names(prefix, providers, n=2)]
        what = f"`{prefix}` is not a provider LiteLLM knows"
    else:
        guesses = close_names(model, _all_names(litellm))
        known = provider_for(model)
        if known and not guesses:  # a name newer than LiteLLM's map: the prefix routes it
            guesses.append(f"{known}/{model}")
        what = "LiteLLM cannot tell which provider serves it"
    mean = " or ".join(f"`{g}`" for g in guesses)
    return (
        f"unknown model `{model}`: {what}."
        + (f" Did you mean {mean}?" if guesses else "")
        + f" Name the provider as a prefix (e.g. `openai/{rest or model}`), set "
        "providers.custom.apiBase for an OpenAI-compatible server, or use "
        f"`{how} {DEMO_MODEL}`."
    )
