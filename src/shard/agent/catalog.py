"""The model catalog: every selectable model, from config.toml plus the built-in providers.

Built-ins: ``anthropic`` when ANTHROPIC_API_KEY is set (ANTHROPIC_BASE_URL respected) and ``openai``
when OPENAI_API_KEY is set (OPENAI_BASE_URL respected), each with a curated model list; a
config.toml provider of the same name replaces the built-in. The built-in ``scripted/demo`` model is
Shard's offline demo: a deterministic script, not an LLM. It is always listed (labelled as such) so a
fresh install can be tried with no API key, and it is never the default here (a daemon with nothing
configured starts its new agents on it, and says so).

The default model: ``default_model`` from config.toml, else the first built-in API provider's first
model; with none, the first prompt explains how to configure one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from shard import _secrets
from shard.agent.config.settings import Config, ModelConfig, ProviderConfig, ReasoningLevelConfig
from shard.protocol.errors import shown

# Built-in model lists follow the installed SDKs' current model names. Prices are not built in: they
# change and cannot be checked from here — set input_price/output_price in config.toml for usage.cost.
_ANTHROPIC_LEVELS = (
    ReasoningLevelConfig("off", "Off", "No extended thinking", budget_tokens=0),
    ReasoningLevelConfig("low", "Low", "Adaptive thinking, low effort", effort="low"),
    ReasoningLevelConfig("medium", "Medium", "Adaptive thinking, medium effort", effort="medium"),
    ReasoningLevelConfig("high", "High", "Adaptive thinking, high effort", effort="high"),
    ReasoningLevelConfig("max", "Max", "Adaptive thinking, maximum effort", effort="max"),
)
_OPENAI_LEVELS = (
    ReasoningLevelConfig("none", "None", "No reasoning"),
    ReasoningLevelConfig("low", "Low"),
    ReasoningLevelConfig("medium", "Medium"),
    ReasoningLevelConfig("high", "High"),
    ReasoningLevelConfig("xhigh", "Extra high", "Most reasoning, slowest"),
)


def _claude(model: str) -> ModelConfig:
    return ModelConfig(
        id=model,
        context_window=200_000,
        reasoning_levels=_ANTHROPIC_LEVELS,
        default_reasoning="medium",
        max_output_tokens=64_000,
    )


def _gpt(model: str) -> ModelConfig:
    return ModelConfig(
        id=model,
        context_window=400_000,
        reasoning_levels=_OPENAI_LEVELS,
        default_reasoning="medium",
        max_output_tokens=128_000,
    )


ANTHROPIC_MODELS = (_claude("claude-sonnet-5-5"), _claude("claude-opus-5-5"), _claude("claude-haiku-5-5"))
OPENAI_MODELS = (_gpt("gpt-5.5"), _gpt("gpt-5.4"), _gpt("gpt-5.4-mini"))


_BUILTIN_KINDS = (("anthropic", ANTHROPIC_MODELS), ("openai", OPENAI_MODELS))  # preference order


BUILTIN_KEY_VARIABLES = tuple(f"{kind.upper()}_API_KEY" for kind, _ in _BUILTIN_KINDS)


def key_variables(config: Config) -> set[str]:
    """The environment variables that hold provider keys: the built-ins' and every ``api_key_env``."""
    return {*BUILTIN_KEY_VARIABLES, *(p.api_key_env for p in config.providers if p.api_key_env)}


def builtin_api_providers(env: Mapping[str, str]) -> list[ProviderConfig]:
    """The API providers whose key variable (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``) is set, in
    preference order; ``<KIND>_BASE_URL`` overrides the endpoint."""
    return [
        ProviderConfig(
            name=kind,
            kind=kind,
            base_url=env.get(f"{kind.upper()}_BASE_URL") or None,
            api_key_env=f"{kind.upper()}_API_KEY",
            models=models,
            builtin=True,
        )
        for kind, models in _BUILTIN_KINDS
        if env.get(f"{kind.upper()}_API_KEY")
    ]


BUILTIN_SCRIPTED = ProviderConfig(
    name="scripted",
    kind="scripted",
    models=(ModelConfig(id="demo", context_window=200_000),),
    builtin=True,
)
DEMO_MODEL = f"{BUILTIN_SCRIPTED.name}/{BUILTIN_SCRIPTED.models[0].id}"  # the offline demo's catalog id
DEMO_SCRIPT = Path(__file__).parent / "providers" / "scripts" / "demo.json"

BASE_CAPABILITIES = (
    "streaming-deltas",
    "mode-catalog",
    "mode-switch",
    "model-catalog",
    "model-switch",
    "message-queue",  # queue_changed, sync.queue and unqueue (Shard, additive)
    # the UI request kinds a runtime can send (PROTOCOL §7 spells ui:select and ui:editor)
    "ui:select",
    "ui:confirm",
    "ui:input",
    "ui:editor",
    "ui:notify",
)
REASONING_CAPABILITIES = ("reasoning-catalog", "reasoning-switch")


# A name that can be quoted back inside a config.toml snippet as it is.
_PLAIN = re.compile(r"[\w.:@+/-]{1,100}")


class ModelEntry(NamedTuple):
    provider: ProviderConfig
    model: ModelConfig

    @property
    def id(self) -> str:
        return f"{self.provider.name}/{self.model.id}"

    @property
    def has_reasoning(self) -> bool:
        return bool(self.model.reasoning_levels)

    @property
    def default_reasoning(self) -> str | None:
        levels = self.model.reasoning_levels
        if not levels:
            return None
        return self.model.default_reasoning or levels[0].id

    @property
    def label(self) -> str | None:
        if self.provider.kind == "scripted":
            return "scripted: offline deterministic script, not an LLM"
        return None


class ModelCatalog:
    def __init__(self, config: Config, env: Mapping[str, str] | None = None) -> None:
        providers = list(config.providers)
        names = {p.name for p in providers}
        if env is None:
            env = {**os.environ, **_secrets.held()}  # captured keys are no longer in os.environ
        builtins = [p for p in builtin_api_providers(env) if p.name not in names]
        providers += builtins
        if BUILTIN_SCRIPTED.name not in names:
            providers.append(BUILTIN_SCRIPTED)
        self.providers: tuple[ProviderConfig, ...] = tuple(providers)
        self.entries: tuple[ModelEntry, ...] = tuple(ModelEntry(p, m) for p in providers for m in p.models)
        self.default_selection = config.default_model
        if self.default_selection is None and builtins:
            self.default_selection = f"{builtins[0].name}/{builtins[0].models[0].id}"

    def resolve(self, selection: str) -> ModelEntry | None:
        """A catalog id (``provider/model``) or a model name that only one provider has."""
        for e in self.entries:
            if e.id == selection:
                return e
        if "/" not in selection:
            matches = [e for e in self.entries if e.model.id == selection]
            if len(matches) == 1:
                return matches[0]
        return None

    def default_mistake(self) -> str | None:
        """What is wrong with ``default_model`` (one line), or None: it names a model there is, or
        nothing is configured."""
        selection = self.default_selection
        if selection is None or self.resolve(selection) is not None:
            return None
        return self.unknown(selection, "unknown default_model")

    def unknown(self, selection: str, what: str = "unknown model") -> str:
        """One line for a selection that resolves to nothing: the models there are, and how to add
        this one (the same words for ``--model``, ``default_model`` and ``set_model``)."""
        known = ", ".join(e.id for e in self.entries)
        return f"{what} {shown(selection)} (models: {known}); {self._how_to_add(selection)}"

    def _how_to_add(self, selection: str) -> str:
        provider_name, slash, model = selection.partition("/")
        if not (_PLAIN.fullmatch(provider_name) and (not slash or _PLAIN.fullmatch(model))):
            return "models are listed under [[providers]] in config.toml (README: Configuration)"
        if not slash:
            offered = [e.id for e in self.entries if e.model.id == selection]
            if len(offered) > 1:
                return f"several providers offer it: name one of {', '.join(offered)}"
            return (
                "name it as <provider>/<model> and list the model under that provider in config.toml: "
                f'models = ["{selection}"] (README: Configuration)'
            )
        provider = next((p for p in self.providers if p.name == provider_name), None)
        if provider is not None:
            return (
                f"to add it, list it in provider {shown(provider_name)} in config.toml: "
                f'models = [..., "{model}"] (README: Configuration)'
            )
        builtin = dict(_BUILTIN_KINDS)
        if provider_name in builtin:
            return (
                f"the built-in {provider_name} provider appears when {provider_name.upper()}_API_KEY is set "
                "(README: Configuration)"
            )
        return (
            f'to add it, configure the provider in config.toml: [[providers]] name = "{provider_name}" '
            f'kind = "openai" base_url = "http://127.0.0.1:11434/v1" models = ["{model}"] '
            "(README: Configuration)"
        )


def stated_window(entry: ModelEntry) -> tuple[int, str] | None:
    """The context window config.toml (``config``) or Shard's built-in catalog (``builtin``) gives
    the model; a window learnt from its server is ``providers/window.py``'s."""
    if entry.model.context_window:
        return entry.model.context_window, ("builtin" if entry.provider.builtin else "config")
    return None


def descriptor(entry: ModelEntry, window: tuple[int, str] | None = None) -> dict[str, Any]:
    """The wire ModelDescriptor as a dict (phase A writes ``sync`` before pydantic loads): the
    window in use (``window``, else the stated one) and where it came from."""
    desc: dict[str, Any] = {"id": entry.id, "provider": entry.provider.name, "model": entry.model.id}
    window = window or stated_window(entry)
    if window is not None:
        desc["context_window"], desc["context_window_source"] = window
    if entry.label is not None:
        desc["label"] = entry.label  # additive field: tells a picker this is not a real LLM
    return desc


def cost(
    model: ModelConfig, inp: int, out: int, cache_read: int | None, cache_write: int | None
) -> float | None:
    """US dollars for one call from the catalog's per-million prices; None when they are unknown."""
    if model.input_price is None or model.output_price is None:
        return None
    total = inp * model.input_price + out * model.output_price
    total += (cache_read or 0) * (
        model.cache_read_price if model.cache_read_price is not None else model.input_price
    )
    total += (cache_write or 0) * (
        model.cache_write_price if model.cache_write_price is not None else model.input_price
    )
    return round(total / 1_000_000, 8)


def capabilities_for(entry: ModelEntry | None, extra: Sequence[str] = ()) -> list[str]:
    """The runtime's capability strings (PROTOCOL §7), which depend on the active model; ``extra``:
    the sandbox's (``Sandbox.capabilities``)."""
    caps = list(BASE_CAPABILITIES)
    if entry is not None and entry.has_reasoning:
        caps.extend(REASONING_CAPABILITIES)
    caps.extend(extra)
    return caps
