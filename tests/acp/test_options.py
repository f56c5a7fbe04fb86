"""Modes and models as ACP shows them (shard.acp.options)."""

from __future__ import annotations

from shard.acp.options import MODEL_OPTION, mode_state, model_option
from shard.protocol.agents import ModeDescriptor, ModelDescriptor
from shard.protocol.results import ListModelsResult, ListModesResult


def test_the_mode_catalog_is_the_session_mode_state():
    catalog = ListModesResult(
        modes=[ModeDescriptor(name="build", description="b"), ModeDescriptor(name="plan", description="p")],
        active="plan",
    )
    state = mode_state(catalog)
    assert state.current_mode_id == "plan"
    assert [(m.id, m.name, m.description) for m in state.available_modes] == [
        ("build", "Build", "b"),
        ("plan", "Plan", "p"),
    ]


def test_the_model_catalog_is_one_select_option():
    a = ModelDescriptor(id="local/a", provider="local", model="a")
    b = ModelDescriptor(id="local/b", provider="local", model="b", label="scripted: offline")
    option = model_option(ListModelsResult(models=[a, b], active=b))
    assert option is not None
    assert (option.id, option.type, option.category, option.current_value) == (
        MODEL_OPTION,
        "select",
        "model",
        "local/b",
    )
    assert [(o.value, o.name) for o in option.options] == [
        ("local/a", "local/a"),
        ("local/b", "local/b (scripted: offline)"),
    ]
    assert model_option(ListModelsResult(models=[], active=None)) is None  # nothing configured: no picker
