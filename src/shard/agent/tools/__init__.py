"""Tools the model can call. Each is a :class:`~shard.agent.tools.base.Tool`; the registry builds the
set a runtime offers (built-ins plus ``tools.extensions`` from config.toml)."""
