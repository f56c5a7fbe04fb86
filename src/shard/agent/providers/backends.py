"""What a process does before it imports a provider SDK (stdlib only: phase A calls it).

:func:`prepare_sdk_import` keeps the SDKs off aiohttp (below) and loads ``openai.types`` lazily
(:mod:`lazy_types`).

Both SDKs try ``from ._vendor.httpx_aiohttp import …`` when they are imported, an optional transport
that loads aiohttp (92 modules, 70 to 300 ms) whenever it is installed — and it is, for Shard's tests
and benches. Shard never asks for that transport: it talks through httpx. A ``None`` entry in
``sys.modules`` makes that one import fail with ImportError, which the SDKs catch and read as "not
installed", so aiohttp stays unloaded without being uninstalled.
"""

from __future__ import annotations

import sys

from shard.agent.providers import lazy_types

OPTIONAL_BACKENDS = ("openai._vendor.httpx_aiohttp", "anthropic._vendor.httpx_aiohttp")


def skip_aiohttp() -> None:
    """Before any SDK import in this process (idempotent)."""
    for name in OPTIONAL_BACKENDS:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def prepare_sdk_import() -> None:
    """Before any SDK import in this process (idempotent)."""
    skip_aiohttp()
    lazy_types.install()
