"""Shard: a local daemon that hosts LLM coding agents, driven and watched by many clients at once.

Layers (imports point down only; ``tests/test_layers.py`` enforces it):

* L0 ``shard.protocol`` — the wire contract as typed models, framing, error codes.
* L1 ``shard.agent`` (the runtime), ``shard.daemon``, ``shard.web``.
* L2 ``shard.client`` — the Python SDK.
* L3 ``shard.cli`` — the ``shard`` command.

Importing the package runs nothing else: it is the first module of the ``shard`` command, before
``shard.cli`` takes Ctrl-C, and an import here was a window where Ctrl-C was a traceback. The two
version strings are read from ``shard._version`` when asked for.
"""

__all__ = ["PROTOCOL_VERSION", "__version__"]


def __getattr__(name: str) -> str:
    if name in __all__:
        from shard import _version

        return str(getattr(_version, name))
    raise AttributeError(f"module 'shard' has no attribute {name!r}")
