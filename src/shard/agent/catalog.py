"""The model catalog: every selectable model, from config.toml plus the built-in offline provider.

The built-in ``scripted/demo`` model is Shard's offline demo: a deterministic script, not an LLM. It
is always listed (labelled as such) so a fresh install can be tried with no API key; it is never the
default — with no model configured the first prompt explains how to configure one.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from shard.agent.config import Config, ModelConfig, ProviderConfig

BUILTIN_SCRIPTED = ProviderConfig(
    name="scripted",
    kind="scripted",
    models=(ModelConfig(id="demo", context_window=200_000),),
    builtin=True,
)
DEMO_SCRIPT = Path(__file__).parent / "providers" / "scripts" / "demo.json"

BASE_CAPABILITIES = (
    "streaming-deltas",
    "mode-catalog",
    "mode-switch",
    "model-catalog",
    "model-switch",
)
REASONING_CAPABILITIES = ("reasoning-catalog", "reasoning-switch")


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
    def __init__(self, config: Config) -> None:
        providers = list(config.providers)
        if not any(p.name == BUILTIN_SCRIPTED.name for p in providers):
            providers.append(BUILTIN_SCRIPTED)
        self.entries: tuple[ModelEntry, ...] = tuple(ModelEntry(p, m) for p in providers for m in p.models)
        self.default_selection = config.default_model

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


def capabilities_for(entry: ModelEntry | None) -> list[str]:
    """The runtime's capability strings (PROTOCOL §7), which depend on the active model."""
    caps = list(BASE_CAPABILITIES)
    if entry is not None and entry.has_reasoning:
        caps.extend(REASONING_CAPABILITIES)
    return caps
