"""The order the workers get the suite's modules in (``--dist loadscope --no-loadscope-reorder``).

The suite is CPU-bound on two cores, so its wall time is its CPU over the cores, plus whatever runs
alone at the end. xdist's own order (``--loadscope-reorder``: the most tests first) put a module of
one long test last, and a full run ended with one worker on it for half a minute while the other
core sat idle. So the modules that hold a test marked ``long`` go first (the longest job first is
what keeps the end short), then the rest by their number of tests, as xdist would. A module's tests
keep their order and stay together: some modules build on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar


class _Item(Protocol):
    nodeid: str

    def get_closest_marker(self, name: str) -> Any: ...


T = TypeVar("T", bound=_Item)


def long_modules_first(items: Sequence[T]) -> list[T]:
    """``items`` by module: those with the most ``long`` tests first, then the most tests."""
    modules: dict[str, list[T]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)

    def weight(module: list[T]) -> tuple[int, int]:
        return (-sum(item.get_closest_marker("long") is not None for item in module), -len(module))

    return [item for module in sorted(modules.values(), key=weight) for item in module]
