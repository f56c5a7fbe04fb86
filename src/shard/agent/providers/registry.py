"""Build the provider object for a catalog entry. SDK-backed kinds import their module lazily."""

from __future__ import annotations

from shard.agent.catalog import DEMO_SCRIPT, ModelEntry
from shard.agent.config.settings import Config
from shard.agent.providers.base import Provider
from shard.protocol.errors import ErrorCode, ShardError


def build_provider(entry: ModelEntry, config: Config) -> Provider:
    """Construct without any network traffic; a bad entry raises NOT_FOUND naming what to fix."""
    kind = entry.provider.kind
    if kind == "scripted":
        from shard.agent.providers.scripted import ScriptedProvider, ScriptError

        script = entry.model.script or entry.provider.script
        if script is None and entry.provider.builtin:
            path = DEMO_SCRIPT
        elif script is None:
            raise ShardError(
                ErrorCode.NOT_FOUND,
                f"scripted provider {entry.provider.name!r} has no 'script' for model {entry.model.id!r}",
            )
        else:
            path = config.resolve_path(script)
        record = config.resolve_path(entry.provider.record) if entry.provider.record else None
        try:
            return ScriptedProvider(entry.provider.name, path, record)
        except ScriptError as exc:
            raise ShardError(ErrorCode.NOT_FOUND, str(exc)) from None
    if kind == "anthropic":
        from shard.agent.providers.anthropic import AnthropicProvider

        return AnthropicProvider(entry)
    if kind == "openai":
        from shard.agent.providers.openai import OpenAIProvider

        return OpenAIProvider(entry)
    raise ShardError(
        ErrorCode.NOT_FOUND, f"provider kind {kind!r} (provider {entry.provider.name!r}) is unknown"
    )
