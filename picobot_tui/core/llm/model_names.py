"""Is a model name one LiteLLM can route, or the server serves? Checked before the first call.

`--model nonsense-model` used to reach LiteLLM, fail inside the call and come back as a cut
provider error. `unknown_model()` asks LiteLLM's own provider resolution first (no network:
`get_llm_provider` reads its tables, the price map is the bundled one) and names close known
models (difflib over LiteLLM's local model map). Names picobot routes itself pass without
LiteLLM: `demo`, a provider prefix picobot knows (`openai/anything`), and any name when the
provider entry it routes to has an `apiBase` (an OpenAI-compatible server decides its own
names: it is asked for them, `GET /models`, core/llm/served_models.py). A bare name LiteLLM
routes by its start but does not know, one edit away from a name it knows
(`claude-sonet-4-5`), is a typo: "did you mean", before any key check. Everything else
imports LiteLLM: call it from a thread in the TUI.
"""

from __future__ import annotations

import difflib
import os
import threading
from types import ModuleType
from typing import Any

from picobot_tui.core.llm.client import load_litellm, provider_for, resolve_route
from picobot_tui.core.llm.demo import DEMO_MODEL, is_demo
from picobot_tui.core.llm.served_models import served_models, served_name, serves
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.shapes.providers import (
    MODEL_PREFIXES,
    OPENAI_COMPATIBLE,
    PROVIDER_ENV,
    PROVIDER_NAMES,
)

TYPO_CUTOFF = 0.9
"""How close (difflib's ratio) a name LiteLLM does not know must be to one it knows to be
called a typo: one letter in a name of ten or more (`claude-sonet-4-5` is 0.97). Looser
matches are only suggestions; a newer model than LiteLLM's map passes with a prefix."""

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


def _served_problem(settings: CoreSettings, model: str, how: str) -> str | None:
    """`unknown model …` when the OpenAI-compatible server `model` routes to lists its
    models and `model` is not one of them; None when it is, or the server gave no list."""
    route = resolve_route(settings, model)
    base = route.kwargs.get("api_base")
    if not base or route.provider not in OPENAI_COMPATIBLE:
        return None
    key = route.kwargs.get("api_key")
    ids = served_models(base, key, route.kwargs.get("extra_headers"))
    name = served_name(route.model)
    if ids is None or serves(ids, name):
        return None
    close = close_names(name, ids)
    offer = close or list(ids[:10])
    listed = ", ".join(f"`{i}`" for i in offer) + (" …" if not close and len(ids) > 10 else "")
    said = f"Did you mean {listed.replace(', ', ' or ')}?" if close else f"It serves {listed}."
    return (
        f"unknown model `{model}`: the server at {base} (providers.{route.provider}.apiBase) "
        f"does not serve `{name}`. {said} Use one of its names ({how} NAME"
        + (", or agents.defaults.model)." if how == "--model" else ").")
    )


def _typo(litellm: ModuleType, model: str) -> list[str]:
    """Known names `model` is a near-typo of, when LiteLLM does not know `model` itself."""
    if "/" in model or model in _all_names(litellm):
        return []
    return difflib.get_close_matches(model, list(_all_names(litellm)), n=2, cutoff=TYPO_CUTOFF)


def unknown_model(settings: CoreSettings, model: str, *, how: str = "--model") -> str | None:
    """The user-facing message when LiteLLM cannot route `model`, or the server it goes to
    does not serve it (None when fine). `how` is the way to name another model where the
    message is shown (`--model`, `/model`). May import LiteLLM (3-4 s the first time) and
    ask an OpenAI-compatible server for its models (at most 2 s, once a process)."""
    if not model.strip():
        return f"the model name is empty: pass {how} NAME (e.g. openai/gpt-4o-mini or demo)."
    if is_demo(model):
        return None
    if problem := _served_problem(settings, model, how):
        return problem
    if not needs_litellm(settings, model):
        return None
    litellm = load_litellm()
    route = resolve_route(settings, model)
    known = provider_for(model)
    if _resolves(litellm, route.model, route.kwargs.get("custom_llm_provider")):
        typos = _typo(litellm, model)
        if not typos:
            return None
        mean = " or ".join(f"`{g}`" for g in typos)
        return (
            f"unknown model `{model}`: LiteLLM does not know it. Did you mean {mean}? "
            f"If it is newer than LiteLLM's list, name its provider: `{known or 'openai'}/"
            f"{model}`."
        )
    prefix, sep, rest = model.partition("/")
    if sep:
        providers = [*MODEL_PREFIXES, *(str(p) for p in getattr(litellm, "provider_list", ()))]
        guesses = [f"{p}/{rest}" for p in close_names(prefix, providers, n=2)]
        what = f"`{prefix}` is not a provider LiteLLM knows"
    else:
        guesses = close_names(model, _all_names(litellm))
        if known and not guesses:  # a name newer than LiteLLM's map: the prefix routes it
            guesses.append(f"{known}/{model}")
        what = "LiteLLM cannot tell which provider serves it"
    mean = " or ".join(f"`{g}`" for g in guesses)
    return (
        f"unknown model `{model}`: {what}."
        + (f" Did you mean {mean}?" if guesses else "")
        + f" Name the provider as a prefix (e.g. `openai/{rest or model}`, which goes to "
        f"providers.openai.apiBase when it is set), or use `{how} {DEMO_MODEL}`."
    )


def choices(settings: CoreSettings, current: str, litellm: ModuleType | None = None) -> list[str]:
    """What `/model` with no name offers, in this order: the model in use, the configured
    one, `demo`; the models the server of their route lists, when an OpenAI-compatible
    `apiBase` serves either (asked once a process, `served_models`); then LiteLLM's chat models
    of the providers that are set up (a key in the config or its env var, the current or the
    configured model's provider; not one behind an `apiBase`, whose server decides), only when
    `litellm` is given. Blocking when the server was not asked yet: call it from a thread."""
    first = [current, settings.agents.defaults.model, DEMO_MODEL]
    served: list[str] = []
    for model in dict.fromkeys(first[:2]):
        route = resolve_route(settings, model)
        base = route.kwargs.get("api_base")
        if not base or route.provider not in OPENAI_COMPATIBLE:
            continue
        ids = served_models(base, route.kwargs.get("api_key"), route.kwargs.get("extra_headers"))
        # Named as that model is: `openai/x` when it is `openai/…`, else the bare id.
        head, sep, _ = model.partition("/")
        prefix = f"{head}/" if sep and head in MODEL_PREFIXES else ""
        served += [f"{prefix}{i}" for i in ids or ()]
    known: list[str] = []
    if litellm is not None:
        ready = {provider_for(current), provider_for(settings.agents.defaults.model)} | {
            name
            for name in PROVIDER_NAMES
            if getattr(settings.providers, name).api_key is not None
            or os.environ.get(PROVIDER_ENV.get(name, ""))
        }
        ready -= {n for n in PROVIDER_NAMES if getattr(settings.providers, n).api_base}
        # Not `ft:…`: LiteLLM's price entries for fine-tunes, not names one can call.
        known = [
            n
            for n in picobot_names(litellm)
            if provider_for(n) in ready and not n.partition("/")[2].startswith("ft:")
        ]
    return [n for n in dict.fromkeys([*first, *served, *known]) if n]
