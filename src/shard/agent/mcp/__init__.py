"""MCP servers as tools (docs/mcp.md): ``[[mcp_servers]]`` in config.toml (:mod:`.config`), started by
the runtime before its first model call (:mod:`.host`), one connection each (:mod:`.connection`), and
each server tool offered to the model as ``server__tool`` (:mod:`.names`, :mod:`.tool`).

Only :mod:`.connection` imports the ``mcp`` SDK, and only a runtime whose config has servers loads it.
"""
