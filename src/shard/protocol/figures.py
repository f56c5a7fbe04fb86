"""How the figures of a Usage and a ModelDescriptor's context window read to a person (PROTOCOL
§11). Stdlib only, so that ``shard run`` through a daemon can say them without pydantic.

``input`` counts the tokens a model read fresh; the tokens it read from its prompt cache are
``cache_read`` and those written to it ``cache_write`` (both provider kinds report them so — the
openai kind takes the cached tokens out of ``prompt_tokens``). A person asking how much went in
means all three: a 2,174-token request that llama.cpp answered mostly from its cache is 2,174
tokens in, not the 10 it read fresh.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tokens_in(usage: Any) -> int:
    """Every input token of a usage (a Usage model or its wire dict): fresh, read from the cache and
    written to it."""
    total = 0
    for name in ("input", "cache_read", "cache_write"):
        value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
        total += int(value or 0)
    return total


# Where a context window came from (ModelDescriptor.context_window_source), as said to a person.
WINDOW_SOURCES = {
    "config": "from config.toml",
    "builtin": "from Shard's catalog",
    "server": "from the server",
    "default": "Shard's default",
}


def window_said(tokens: int, source: str | None) -> str:
    """``8,192 from the server``."""
    return f"{tokens:,} {WINDOW_SOURCES.get(source or '', source or '')}".rstrip()
