"""The model: the selection clients see, and the provider the next call uses (PROTOCOL §9.2).

``set_model`` changes the selection at once (recorded, ``model_changed``), but the provider it needs
is swapped in only at the next provider-call boundary (:meth:`ModelSelection.take_provider`), so a
call in flight finishes on the model it started with. Reasoning levels belong to the selection; a
switch resets the level to the new model's default. Compaction summarizes with the active selection.

The selection also knows the active model's context window (``providers/window.py``): a model
without ``context_window`` in config.toml has its server asked once, in the background after
``sync`` (and after a switch), and whoever needs the figure — a turn's first call, ``list_models``,
``shard run``'s first line — awaits that one answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from shard.agent.catalog import ModelCatalog, ModelEntry, capabilities_for, descriptor
from shard.agent.config.settings import Config
from shard.agent.providers.base import Provider
from shard.agent.providers.registry import build_provider
from shard.agent.providers.sdk import preload
from shard.agent.providers.window import ContextWindow, known, learn
from shard.agent.sandbox.bwrap import for_config
from shard.protocol.agent_events import ModelChanged, ReasoningLevelChanged
from shard.protocol.agent_results import (
    ListModelsResult,
    ListReasoningLevelsResult,
    SetModelResult,
    SetReasoningLevelResult,
)
from shard.protocol.agents import ModelDescriptor, ReasoningLevel
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.event_base import EventBase

Record = Callable[..., Any]

NO_MODEL_HELP = (
    "No model is configured, so there is nothing to send the prompt to. Configure a provider in "
    "{config} — for example a local OpenAI-compatible server:\n\n"
    '    default_model = "local/qwen2.5-coder"\n\n'
    "    [[providers]]\n"
    '    name = "local"\n'
    '    kind = "openai"\n'
    '    base_url = "http://127.0.0.1:11434/v1"\n'
    '    models = [{{ id = "qwen2.5-coder", context_window = 32768 }}]\n\n'
    "or pick a model with --model (the offline demo is scripted/demo)."
)


class ModelSelection:
    def __init__(
        self,
        *,
        config: Config,
        catalog: ModelCatalog,
        model: ModelEntry | None,
        reasoning: str | None,
        record: Record,
        emit: Callable[[EventBase], None],
    ) -> None:
        self._config = config
        self._catalog = catalog
        self._record = record
        self._emit = emit
        self.model: ModelEntry | None = model
        self.reasoning: str | None = reasoning
        self._current: tuple[ModelEntry, Provider] | None = None
        self._next: tuple[ModelEntry, Provider] | None = None
        # A default model whose provider cannot be built (say its key variable is unset) must not
        # stop the agent from starting: the problem is reported when a prompt needs the provider.
        self._problem: ShardError | None = None
        self._learning: dict[str, asyncio.Future[ContextWindow | None]] = {}
        self.told_too_small: set[str] = set()  # models whose window was said to be too small
        if model is not None:
            try:
                self._next = (model, build_provider(model, config))
            except ShardError as exc:
                self._problem = exc

    def capabilities(self) -> list[str]:
        return capabilities_for(self.model, for_config(self._config).capabilities())

    def window(self) -> ContextWindow | None:
        """The active model's context window as known now (never waits)."""
        return known(self.model) if self.model else None

    async def learn_window(self) -> ContextWindow | None:
        """The active model's context window, its server asked the first time (once per model)."""
        if self.model is None:
            return None
        return await asyncio.shield(self._learn(self.model))

    def _begin_learning(self, entry: ModelEntry) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop to learn in: whoever needs the window learns it
        self._learn(entry)

    def _learn(self, entry: ModelEntry) -> asyncio.Future[ContextWindow | None]:
        future = self._learning.get(entry.id)
        if future is None:
            future = self._learning[entry.id] = asyncio.ensure_future(learn(entry))
        return future

    def require_model(self) -> None:
        """Before a prompt is taken: with no model configured there is nothing to send it to."""
        if self.model is None:
            help_text = NO_MODEL_HELP.format(config=self._config.home / "config.toml")
            raise ShardError(ErrorCode.PROVIDER_ERROR, help_text)

    def take_provider(self) -> tuple[ModelEntry, Provider]:
        """At a provider-call boundary: swap in a pending selection, return what to call."""
        if self._next is not None:
            self._current, self._next = self._next, None
        if self._current is None:
            raise self._problem or ShardError(ErrorCode.PROVIDER_ERROR, "no model is selected")
        return self._current

    def summarizer(self) -> tuple[ModelEntry, Provider]:
        """The provider compaction summarizes with: the active selection."""
        if self._next is not None:
            return self._next
        if self._current is not None:
            return self._current
        if self._problem is not None:
            raise ShardError(ErrorCode.NOT_FOUND, f"no model can summarize: {self._problem.message}")
        raise ShardError(ErrorCode.NOT_FOUND, "no model is configured, so nothing can summarize the session")

    def preload(self) -> None:
        """Begin importing the active provider's SDK so the first prompt need not wait, and begin
        learning its window (in a running loop)."""
        if self.model is not None and self._problem is None:
            preload(self.model)
            self._begin_learning(self.model)

    # --- commands -----------------------------------------------------------------------------

    async def list_models(self) -> ListModelsResult:
        """The catalog; the active model with its context window (learnt first, if need be)."""
        await self.learn_window()
        return ListModelsResult(
            models=[describe_model(e) for e in self._catalog.entries],
            active=describe_model(self.model) if self.model else None,
        )

    def set_model(self, selection: str) -> SetModelResult:
        entry = self._catalog.resolve(selection)
        if entry is None:
            raise ShardError(ErrorCode.NOT_FOUND, self._catalog.unknown(selection))
        provider = build_provider(entry, self._config)  # a construction failure is NOT_FOUND
        previous = self.model
        result = SetModelResult(
            previous=describe_model(previous) if previous else None, active=describe_model(entry)
        )
        if previous is not None and previous.id == entry.id:
            return result
        reasoning = entry.default_reasoning
        self._record("model_change", model=entry.id, reasoning=reasoning)
        self.model, self.reasoning = entry, reasoning
        self._next = (entry, provider)
        self._problem = None
        preload(entry)
        self._begin_learning(entry)
        self._emit(
            ModelChanged(previous=result.previous, active=result.active, capabilities=self.capabilities())
        )
        return result

    def list_reasoning_levels(self) -> ListReasoningLevelsResult:
        entry = self._reasoning_entry()
        return ListReasoningLevelsResult(
            model=describe_model(entry),
            levels=[
                ReasoningLevel(id=lv.id, label=lv.label, description=lv.description)
                if lv.description
                else ReasoningLevel(id=lv.id, label=lv.label)
                for lv in entry.model.reasoning_levels
            ],
            active=self.reasoning or entry.default_reasoning or "",
        )

    def set_reasoning_level(self, model: str, effort: str) -> SetReasoningLevelResult:
        entry = self._reasoning_entry()
        if model != entry.id:
            raise ShardError(
                ErrorCode.CONFLICT,
                f"the active model is {entry.id}, not {shown(model)}: refresh the reasoning picker",
            )
        ids = [lv.id for lv in entry.model.reasoning_levels]
        if effort not in ids:
            raise ShardError(
                ErrorCode.NOT_FOUND,
                f"unknown reasoning level {shown(effort)} for {entry.id} (levels: {', '.join(ids)})",
            )
        previous = self.reasoning or entry.default_reasoning or ""
        result = SetReasoningLevelResult(model=describe_model(entry), previous=previous, active=effort)
        if effort != previous:
            self._record("reasoning_change", model=entry.id, reasoning=effort, previous=previous)
            self.reasoning = effort
            self._emit(ReasoningLevelChanged(model=result.model, previous=previous, active=effort))
        return result

    def _reasoning_entry(self) -> ModelEntry:
        if self.model is None or not self.model.has_reasoning:
            name = self.model.id if self.model else "no model"
            raise ShardError(
                ErrorCode.CONFLICT,
                f"the active model ({name}) has no reasoning levels; check sync.capabilities",
            )
        return self.model


def describe_model(entry: ModelEntry) -> ModelDescriptor:
    """The model with its context window, once known, and where that came from."""
    window = known(entry)
    return ModelDescriptor.model_validate(descriptor(entry, window[:2] if window else None))
