"""Shard: a local daemon that hosts LLM coding agents, driven and watched by many clients at once.

Layers (imports point down only; ``tests/test_layers.py`` enforces it):

* L0 ``shard.protocol`` — the wire contract as typed models, framing, error codes.
* L1 ``shard.agent`` (the runtime), ``shard.daemon``, ``shard.web``.
* L2 ``shard.client`` — the Python SDK.
* L3 ``shard.cli`` — the ``shard`` command.
"""

from shard._version import PROTOCOL_VERSION, __version__

__all__ = ["PROTOCOL_VERSION", "__version__"]
