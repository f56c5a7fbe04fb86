"""The order in which ``./test`` hands modules to the xdist workers: the longest first.

A module stays on one worker (``--dist loadscope``). xdist's own order is by test count, largest
first, so a module of one or two long tests (the ``--wheels`` setup, a bench, the hosts setup: a
minute or two each) went out last and ran alone at the end while the other workers had finished:
the cores idled through that tail. Handing out the longest modules first (the classic longest-
processing-time rule) leaves the short ones to fill in at the end. How long a module takes is
recorded in ``module_seconds.json`` (``--record-module-seconds`` rewrites it from a run); a module
not recorded there counts ``PER_TEST`` seconds a test. The order changes nothing inside a module."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

SECONDS = Path(__file__).with_name("module_seconds.json")
PER_TEST = 0.5  # a module with no recorded time: roughly the suite's mean per test


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def ranks(modules: Iterable[str], seconds: Mapping[str, float]) -> dict[str, int]:
    """Each module's place (0 first), given the module of every collected test in collection
    order: the longest expected first; equal ones keep their collection order."""
    counts: dict[str, int] = {}
    for module in modules:
        counts[module] = counts.get(module, 0) + 1
    expected = {module: seconds.get(module, PER_TEST * count) for module, count in counts.items()}
    ordered = sorted(counts, key=lambda module: -expected[module])
    return {module: place for place, module in enumerate(ordered)}


def load(path: Path = SECONDS) -> dict[str, float]:
    """The recorded seconds, or none when the file is missing or unreadable (the order then falls
    back to test counts)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))}


def merged(old: Mapping[str, float], measured: Mapping[str, float], root: Path) -> dict[str, float]:
    """The file's new contents: this run's figures over the old ones, without modules that no
    longer exist under ``root``."""
    both = {**old, **{module: round(value, 1) for module, value in measured.items()}}
    return {module: both[module] for module in sorted(both) if (root / module).is_file()}
