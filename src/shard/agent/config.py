"""``$SHARD_HOME/config.toml`` (DESIGN §5), read with the stdlib only so start-up stays cheap
(NamedTuples rather than dataclasses: ``dataclasses`` pulls in ``inspect``, 20 ms before hello).

Unknown keys are ignored (a newer config must not break an older shard); a wrong type or a missing
required key is a :class:`ConfigError` that names the key and the file.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from shard._home import HomeError, read_config
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.framing import DEFAULT_MAX_LINE_BYTES

PROVIDER_KINDS = ("openai", "anthropic", "scripted")


class ConfigError(ShardError):
    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message)


class ReasoningLevelConfig(NamedTuple):
    id: str
    label: str
    description: str | None = None
    budget_tokens: int | None = None  # anthropic: extended-thinking budget; 0 turns thinking off
    effort: str | None = None  # the value sent to the API (openai reasoning_effort); default: id


class ModelConfig(NamedTuple):
    id: str
    context_window: int | None = None
    reasoning_levels: tuple[ReasoningLevelConfig, ...] = ()
    default_reasoning: str | None = None
    script: str | None = None  # scripted provider only: this model's script file
    max_output_tokens: int | None = None
    # US dollars per million tokens; usage.cost is computed from these when they are known
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None


class RetryConfig(NamedTuple):
    """How provider calls are retried on 429 / 529 / 5xx / dropped connections."""

    max_attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 30.0


DEFAULT_RETRY = RetryConfig()


class CompactionConfig(NamedTuple):
    """``[compaction]``: when the automatic tiers run and how much recent context they keep."""

    enabled: bool = True
    threshold: float = 0.8  # fraction of the context window that triggers the idle-time compaction
    keep_recent_tokens: int = 20_000


class ProviderConfig(NamedTuple):
    name: str
    kind: str
    base_url: str | None = None
    api_key_env: str | None = None
    script: str | None = None  # scripted provider: default script for its models
    record: str | None = None  # scripted provider: append every request it receives here (JSONL)
    models: tuple[ModelConfig, ...] = ()
    builtin: bool = False


class Config(NamedTuple):
    home: Path
    default_model: str | None = None
    providers: tuple[ProviderConfig, ...] = ()
    max_input_bytes: int = DEFAULT_MAX_LINE_BYTES
    tool_extensions: tuple[str, ...] = ()
    retry: RetryConfig = DEFAULT_RETRY
    headless_timeout: float = 300.0  # [permissions]: how long a queued request waits with no client
    compaction: CompactionConfig = CompactionConfig()
    max_runtimes: int | None = None  # [daemon]: live runtimes at once (the daemon's default if unset)
    source: Path | None = None
    extra: dict[str, Any] | None = None

    def resolve_path(self, value: str) -> Path:
        """A path from the config: absolute, or relative to SHARD_HOME."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.home / p


def shard_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--home`` beats ``$SHARD_HOME`` beats ``~/.shard``."""
    raw = explicit or os.environ.get("SHARD_HOME") or "~/.shard"
    return Path(raw).expanduser().resolve()


def load_config(home: Path) -> Config:
    path = home / "config.toml"
    try:
        raw = read_config(path)
    except HomeError as exc:
        raise ConfigError(exc.message) from None
    if raw is None:
        return Config(home=home)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    return _parse(data, home, path)


def _parse(data: dict[str, Any], home: Path, path: Path) -> Config:
    where = str(path)
    default_model = _opt(data, "default_model", str, where)
    providers: list[ProviderConfig] = []
    seen: set[str] = set()
    for i, p in enumerate(_opt(data, "providers", list, where) or []):
        at = f"{where}: providers[{i}]"
        if not isinstance(p, dict):
            raise ConfigError(f"{at} must be a table")
        name = _req(p, "name", str, at)
        kind = _req(p, "kind", str, at)
        if kind not in PROVIDER_KINDS:
            raise ConfigError(f"{at}.kind must be one of {', '.join(PROVIDER_KINDS)}, got {kind!r}")
        if "/" in name or not name:
            raise ConfigError(f"{at}.name must be non-empty and contain no '/'")
        if name in seen:
            raise ConfigError(f"{at}.name {name!r} is defined twice")
        seen.add(name)
        models = tuple(
            _parse_model(m, f"{at}.models[{j}]") for j, m in enumerate(_opt(p, "models", list, at) or [])
        )
        providers.append(
            ProviderConfig(
                name=name,
                kind=kind,
                base_url=_opt(p, "base_url", str, at),
                api_key_env=_opt(p, "api_key_env", str, at),
                script=_opt(p, "script", str, at),
                record=_opt(p, "record", str, at),
                models=models,
            )
        )
    limits = _opt(data, "limits", dict, where) or {}
    max_input = _opt(limits, "max_input_bytes", int, f"{where}: limits")
    if max_input is not None and max_input < 1024:
        raise ConfigError(f"{where}: limits.max_input_bytes must be at least 1024")
    tools = _opt(data, "tools", dict, where) or {}
    extensions = _opt(tools, "extensions", list, f"{where}: tools") or []
    if not all(isinstance(e, str) and ":" in e for e in extensions):
        raise ConfigError(f"{where}: tools.extensions entries must be 'module:attribute' strings")
    retry_table = _opt(data, "retry", dict, where) or {}
    rat = f"{where}: retry"
    retry = RetryConfig(
        max_attempts=_opt(retry_table, "max_attempts", int, rat) or DEFAULT_RETRY.max_attempts,
        base_delay=_number(retry_table, "base_delay", rat, DEFAULT_RETRY.base_delay),
        max_delay=_number(retry_table, "max_delay", rat, DEFAULT_RETRY.max_delay),
    )
    if retry.max_attempts < 1:
        raise ConfigError(f"{rat}.max_attempts must be at least 1")
    permissions = _opt(data, "permissions", dict, where) or {}
    headless_timeout = _number(permissions, "headless_timeout", f"{where}: permissions", 300.0)
    table = _opt(data, "compaction", dict, where) or {}
    cat = f"{where}: compaction"
    enabled = _opt(table, "enabled", bool, cat)
    threshold = _number(table, "threshold", cat, 0.8)
    if not 0 < threshold <= 1:
        raise ConfigError(f"{cat}.threshold must be in (0, 1]")
    keep = _opt(table, "keep_recent_tokens", int, cat)
    if keep is not None and keep <= 0:
        raise ConfigError(f"{cat}.keep_recent_tokens must be positive")
    compaction = CompactionConfig(
        enabled=True if enabled is None else enabled, threshold=threshold, keep_recent_tokens=keep or 20_000
    )
    daemon = _opt(data, "daemon", dict, where) or {}
    max_runtimes = _opt(daemon, "max_runtimes", int, f"{where}: daemon")
    if max_runtimes is not None and max_runtimes < 1:
        raise ConfigError(f"{where}: daemon.max_runtimes must be a positive integer, got {max_runtimes}")
    known = {"default_model", "providers", "limits", "tools", "retry", "permissions", "compaction", "daemon"}
    return Config(
        home=home,
        default_model=default_model,
        providers=tuple(providers),
        max_input_bytes=max_input or DEFAULT_MAX_LINE_BYTES,
        tool_extensions=tuple(extensions),
        retry=retry,
        headless_timeout=headless_timeout,
        compaction=compaction,
        max_runtimes=max_runtimes,
        source=path,
        extra={k: v for k, v in data.items() if k not in known},
    )


def _parse_model(m: object, at: str) -> ModelConfig:
    if not isinstance(m, dict):
        raise ConfigError(f"{at} must be a table")
    levels = []
    for k, lv in enumerate(_opt(m, "reasoning_levels", list, at) or []):
        lat = f"{at}.reasoning_levels[{k}]"
        if isinstance(lv, str):
            levels.append(ReasoningLevelConfig(id=lv, label=lv))
            continue
        if not isinstance(lv, dict):
            raise ConfigError(f"{lat} must be a string or a table")
        budget = _opt(lv, "budget_tokens", int, lat)
        if budget is not None and budget < 0:
            raise ConfigError(f"{lat}.budget_tokens must not be negative")
        levels.append(
            ReasoningLevelConfig(
                id=_req(lv, "id", str, lat),
                label=_opt(lv, "label", str, lat) or lv["id"],
                description=_opt(lv, "description", str, lat),
                budget_tokens=budget,
                effort=_opt(lv, "effort", str, lat),
            )
        )
    default_reasoning = _opt(m, "default_reasoning", str, at)
    if default_reasoning is not None and default_reasoning not in {lv.id for lv in levels}:
        raise ConfigError(f"{at}.default_reasoning {default_reasoning!r} is not one of its reasoning_levels")
    context_window = _opt(m, "context_window", int, at)
    if context_window is not None and context_window <= 0:
        raise ConfigError(f"{at}.context_window must be positive")
    max_output = _opt(m, "max_output_tokens", int, at)
    if max_output is not None and max_output <= 0:
        raise ConfigError(f"{at}.max_output_tokens must be positive")
    return ModelConfig(
        id=_req(m, "id", str, at),
        context_window=context_window,
        reasoning_levels=tuple(levels),
        default_reasoning=default_reasoning,
        script=_opt(m, "script", str, at),
        max_output_tokens=max_output,
        input_price=_number(m, "input_price", at, None),
        output_price=_number(m, "output_price", at, None),
        cache_read_price=_number(m, "cache_read_price", at, None),
        cache_write_price=_number(m, "cache_write_price", at, None),
    )


def _number(table: dict[str, Any], key: str, at: str, default: float | None) -> Any:
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{at}.{key} must be a non-negative number")
    return float(value)


def _req(table: dict[str, Any], key: str, typ: type, at: str) -> Any:
    if key not in table:
        raise ConfigError(f"{at}.{key} is required")
    return _opt(table, key, typ, at)


def _opt(table: dict[str, Any], key: str, typ: type, at: str) -> Any:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise ConfigError(f"{at}.{key} must be a {typ.__name__}, got {type(value).__name__}")
    return value
