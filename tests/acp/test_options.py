"""Modes and models as ACP shows them (shard.acp.options). The module is imported by the tests, not
at the top: it imports the ACP SDK, which every xdist worker collecting the suite would pay for."""

from __future__ import annotations

from shard.protocol.agents import ModeDescriptor, ModelDescriptor
from shard.protocol.results import ListModelsResult, ListModesResult


def test_the_mode_catalog_is_the_session_mode_state():
    from shard.acp.options import mode_state

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
    from shard.acp.options import MODEL_OPTION, model_option

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
