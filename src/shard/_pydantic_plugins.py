"""Pydantic's plugin discovery, skipped (issue 31).

The first time pydantic builds a model it looks for plugins among the entry points of every
installed distribution: ``pydantic.plugin._loader`` imports ``importlib.metadata`` (zipfile, csv,
email — 25 to 50 ms of one core here) and scans every ``*.dist-info``. Shard installs no pydantic
plugin and is an application, not a library another program's plugins should reach, so every Shard
process (daemon, template, runtime, one-shot) answers that question with "none" instead — what
``PYDANTIC_DISABLE_PLUGINS=__all__`` does, without putting a variable in the environment that the
agent's commands inherit. The stub is installed only while the real loader is not loaded; should a
pydantic release stop importing ``get_plugins`` from there, it is simply never read.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable
from typing import Any

_LOADER = "pydantic.plugin._loader"


def _get_plugins() -> Iterable[Any]:
    return ()


def skip_plugin_discovery() -> None:
    if _LOADER in sys.modules:
        return
    stub = types.ModuleType(_LOADER, "Shard: no pydantic plugins (shard._pydantic_plugins).")
    stub.get_plugins = _get_plugins  # type: ignore[attr-defined]
    sys.modules[_LOADER] = stub
