"""A core schema pickled without this process's ids (``shard._schema_refs``, issue 31)."""

from __future__ import annotations

import sys
import types

import pytest

from shard import _schema_refs
from shard.protocol.render import TreeNode


def _ref(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}:{id(cls)}"


def test_a_reference_is_kept_without_its_id_and_read_with_this_processs() -> None:
    schema = {"type": "model", "ref": _ref(TreeNode), "cls": TreeNode, "meta": ["plain text", 3]}
    data = _schema_refs.dumps(schema, "shard.protocol.")
    assert str(id(TreeNode)).encode() not in data
    assert b"shard.protocol.render" in data
    assert _schema_refs.loads(data) == schema


def test_a_nested_class_is_found_by_its_qualified_name(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("shard.protocol._probe_nested")
    outer = type("Outer", (), {"__module__": module.__name__, "__qualname__": "Outer"})
    inner = type("Inner", (), {"__module__": module.__name__, "__qualname__": "Outer.Inner"})
    outer.Inner = inner  # type: ignore[attr-defined]
    module.Outer = outer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    data = _schema_refs.dumps({"schema_ref": _ref(inner)}, "shard.protocol.")
    assert _schema_refs.loads(data) == {"schema_ref": f"shard.protocol._probe_nested.Outer.Inner:{id(inner)}"}
    monkeypatch.delattr(outer, "Inner")  # gone by the time it is read: no reference to nothing
    with pytest.raises(LookupError):
        _schema_refs.loads(data)


_CANNOT_BE_CARRIED = {  # made in the test: ids differ between pytest-xdist's workers
    "a generic's arguments": lambda: f"{_ref(TreeNode)}[int:{id(int)}]",
    "an id of no class of that name": lambda: f"shard.protocol.render.TreeNode:{id(TreeNode) + 16}",
    "a module that holds no such class": lambda: f"shard.protocol.nowhere.TreeNode:{id(TreeNode)}",
    "a long number in plain text": lambda: f"a description that holds {10**12} and no reference",
}


@pytest.mark.parametrize("case", sorted(_CANNOT_BE_CARRIED))
def test_what_cannot_be_carried_is_refused(case: str) -> None:
    """A long number in a string that is not a reference this module can carry: the schema is not
    kept (its writer's id would be read as this process's)."""
    with pytest.raises(ValueError, match="reference"):
        _schema_refs.dumps({"ref": _CANNOT_BE_CARRIED[case]()}, "shard.protocol.")


def test_a_class_outside_the_files_header_is_refused() -> None:
    """The file's header sees only the protocol's sources: a schema naming another module's class
    could go stale unseen."""
    with pytest.raises(ValueError, match="outside"):
        _schema_refs.dumps({"ref": _ref(TreeNode)}, "shard.agent.")
