"""The protocol's models are made without postponed annotations (issue 31): with ``from __future__
import annotations`` pydantic evaluates every field's annotation from a string when the class is
made, nearly half of the protocol's import time on every start. bench/startup.py measures the time;
this pins the habit, so a new module of models does not bring the cost back. Likewise the base every
model derives from declares no annotation: pydantic evaluates every base's annotations again for each
subclass it makes."""

import __future__

import importlib
import pkgutil

import pydantic

import shard.protocol
from shard.protocol.base import WireModel


def _model_modules() -> list[str]:
    names = []
    for info in pkgutil.iter_modules(shard.protocol.__path__):
        module = importlib.import_module(f"shard.protocol.{info.name}")
        if any(
            isinstance(value, type)
            and issubclass(value, pydantic.BaseModel)
            and value.__module__ == module.__name__
            for value in vars(module).values()
        ):
            names.append(module.__name__)
    return names


def test_the_protocol_defines_its_models_in_modules_it_can_find() -> None:
    found = _model_modules()
    assert "shard.protocol.agent_events" in found
    assert "shard.protocol.commands" in found
    assert len(found) >= 15


def test_no_module_of_wire_models_postpones_its_annotations() -> None:
    postponed = [
        name
        for name in _model_modules()
        if vars(importlib.import_module(name)).get("annotations") is __future__.annotations
    ]
    assert postponed == []


def test_the_wire_base_declares_no_annotation_each_subclass_would_evaluate_again() -> None:
    assert vars(WireModel).get("__annotations__", {}) == {}
    assert WireModel._always_written == WireModel._not_null == WireModel._tags == frozenset()
