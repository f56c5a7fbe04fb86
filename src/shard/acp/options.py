"""Modes and models in ACP's terms (pure): our mode catalog is ACP's ``SessionModeState``
(session/set_mode switches it), and our model catalog is one ``select`` config option of category
``model`` (session/set_config_option switches it) — the 0.12 SDK has no session/set_model."""

from __future__ import annotations

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption, SessionMode, SessionModeState

from shard.protocol.agents import ModelDescriptor
from shard.protocol.results import ListModelsResult, ListModesResult

MODEL_OPTION = "model"


def mode_state(catalog: ListModesResult) -> SessionModeState:
    modes = [
        SessionMode(id=m.name, name=m.name.capitalize(), description=m.description) for m in catalog.modes
    ]
    return SessionModeState(current_mode_id=catalog.active, available_modes=modes)


def _label(model: ModelDescriptor) -> str:
    extra = getattr(model, "label", None)  # additive field: "scripted: …" says what a model is
    return f"{model.id} ({extra})" if isinstance(extra, str) and extra else model.id


def model_option(catalog: ListModelsResult) -> SessionConfigOptionSelect | None:
    """The model picker; None when there is nothing to pick (no model configured)."""
    if catalog.active is None or not catalog.models:
        return None
    return SessionConfigOptionSelect(
        id=MODEL_OPTION,
        name="Model",
        category="model",
        type="select",
        current_value=catalog.active.id,
        options=[SessionConfigSelectOption(value=m.id, name=_label(m)) for m in catalog.models],
    )
