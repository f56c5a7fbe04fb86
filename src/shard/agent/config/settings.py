"""``$SHARD_HOME/config.toml`` (DESIGN §5), read with the stdlib only so start-up stays cheap
(NamedTuples rather than dataclasses: ``dataclasses`` pulls in ``inspect``, 20 ms before hello).

Every mistake is a :class:`ConfigError`, one line naming the file, the line and the key: an unknown
key or table (with the closest known name: a typo must not pass silently and surface later as "model
not in the catalog"), a wrong type, a missing required key, a bad value. ``models = ["m1"]`` is
shorthand for ``models = [{ id = "m1" }]``.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from shard._home import HomeError, read_config
from shard._home import shard_home as shard_home
from shard.agent.config.hosts import HostConfig, parse_hosts
from shard.agent.config.mistakes import KeyPath, Mistake
from shard.agent.mcp.config import McpServerConfig, parse_servers
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


class SubagentConfig(NamedTuple):
    """``[subagents]``: the daemon's launch policy, run deadline and children per parent (None: its
    defaults)."""

    max_tasks: int | None = None
    max_depth: int | None = None
    run_timeout: float | None = None
    max_children: int | None = None


class SandboxConfig(NamedTuple):
    """``[sandbox]``: how bash is confined (``shard.agent.sandbox.bwrap``)."""

    mode: str = "off"  # off | ask | auto
    network: bool = False
    writable: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()  # network = ["host", "*.domain"]: only these, through a proxy
    hidden: tuple[str, ...] = ()  # more paths commands inside may not read (absolute)


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
    warm_start: bool = True  # [daemon]: fork runtimes from the pre-imported template (issue 16)
    subagents: SubagentConfig = SubagentConfig()
    sandbox: SandboxConfig = SandboxConfig()
    mcp_servers: tuple[McpServerConfig, ...] = ()  # [[mcp_servers]] (shard.agent.mcp.config)
    hosts: tuple[HostConfig, ...] = ()  # [[hosts]] (shard.agent.config.hosts)
    source: Path | None = None

    def resolve_path(self, value: str) -> Path:
        """A path from the config: absolute, or relative to SHARD_HOME."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.home / p


def load_config(home: Path) -> Config:
    path = home / "config.toml"
    try:
        raw = read_config(path)
    except HomeError as exc:
        raise ConfigError(exc.message) from None
    if raw is None:
        return Config(home=home)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    return config_from_text(text, home, path)


def config_from_text(text: str, home: Path, path: Path) -> Config:
    """``text`` as config.toml (``path`` names it in messages): what a remote runtime is handed by
    its daemon instead of reading its host's own file."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    try:
        return _parse(data, home, path)
    except Mistake as bad:
        raise ConfigError(bad.explain(text, path)) from None


# How each top-level name is written, for messages: a table's header, or the key.
_TOP_LEVEL = {
    "default_model": "default_model",
    "providers": "[[providers]]",
    "retry": "[retry]",
    "permissions": "[permissions]",
    "compaction": "[compaction]",
    "limits": "[limits]",
    "tools": "[tools]",
    "daemon": "[daemon]",
    "subagents": "[subagents]",
    "sandbox": "[sandbox]",
    "mcp_servers": "[[mcp_servers]]",
    "hosts": "[[hosts]]",
}
_TABLES = {
    "retry": ("max_attempts", "base_delay", "max_delay"),
    "permissions": ("headless_timeout",),
    "compaction": ("enabled", "threshold", "keep_recent_tokens"),
    "limits": ("max_input_bytes",),
    "tools": ("extensions",),
    "daemon": ("max_runtimes", "warm_start"),
    "subagents": ("max_tasks", "max_depth", "run_timeout", "max_children"),
    "sandbox": ("mode", "network", "writable", "hidden"),
}
_PROVIDER_KEYS = ("name", "kind", "base_url", "api_key_env", "script", "record", "models")
_MODEL_KEYS = (
    "id",
    "context_window",
    "max_output_tokens",
    "reasoning_levels",
    "default_reasoning",
    "script",
    "input_price",
    "output_price",
    "cache_read_price",
    "cache_write_price",
)
_LEVEL_KEYS = ("id", "label", "description", "budget_tokens", "effort")


def _only(table: dict[str, Any], known: tuple[str, ...] | dict[str, str], at: KeyPath) -> None:
    for key, value in table.items():
        if key not in known:
            spelled = known if isinstance(known, dict) else {k: k for k in known}
            raise Mistake((*at, key), known=spelled, value=value)


def _parse(data: dict[str, Any], home: Path, path: Path) -> Config:
    _only(data, _TOP_LEVEL, ())
    default_model = _opt(data, "default_model", str, ())
    providers: list[ProviderConfig] = []
    seen: set[str] = set()
    raw_providers = _opt(data, "providers", list, (), "a list of tables ([[providers]])") or []
    for i, p in enumerate(raw_providers):
        at: KeyPath = ("providers", i)
        if not isinstance(p, dict):
            raise Mistake(at, f"must be a table, got {_a(p)}")
        _only(p, _PROVIDER_KEYS, at)
        name = _req(p, "name", str, at)
        kind = _req(p, "kind", str, at)
        if kind not in PROVIDER_KINDS:
            raise Mistake((*at, "kind"), f"must be one of {', '.join(PROVIDER_KINDS)}, got {kind!r}")
        if "/" in name or not name:
            raise Mistake((*at, "name"), "must be non-empty and contain no '/'")
        if name in seen:
            raise Mistake((*at, "name"), f"{name!r} is defined twice")
        seen.add(name)
        raw_models = _opt(p, "models", list, at, "a list of model ids or tables") or []
        models = tuple(_parse_model(m, (*at, "models", j)) for j, m in enumerate(raw_models))
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
    tables = {name: _table(data, name) for name in _TABLES}
    limits = tables["limits"]
    max_input = _opt(limits, "max_input_bytes", int, ("limits",))
    if max_input is not None and max_input < 1024:
        raise Mistake(("limits", "max_input_bytes"), "must be at least 1024")
    extensions = _opt(tables["tools"], "extensions", list, ("tools",), "a list of 'module:attribute' strings")
    if not all(isinstance(e, str) and ":" in e for e in extensions or []):
        raise Mistake(("tools", "extensions"), "must be a list of 'module:attribute' strings")
    retry_table = tables["retry"]
    max_attempts = _opt(retry_table, "max_attempts", int, ("retry",))
    if max_attempts is not None and max_attempts < 1:
        raise Mistake(("retry", "max_attempts"), "must be at least 1")
    retry = RetryConfig(
        max_attempts=DEFAULT_RETRY.max_attempts if max_attempts is None else max_attempts,
        base_delay=_number(retry_table, "base_delay", ("retry",), DEFAULT_RETRY.base_delay),
        max_delay=_number(retry_table, "max_delay", ("retry",), DEFAULT_RETRY.max_delay),
    )
    headless_timeout = _number(tables["permissions"], "headless_timeout", ("permissions",), 300.0)
    table = tables["compaction"]
    enabled = _opt(table, "enabled", bool, ("compaction",))
    threshold = _number(table, "threshold", ("compaction",), 0.8)
    if not 0 < threshold <= 1:
        raise Mistake(("compaction", "threshold"), "must be in (0, 1]")
    keep = _opt(table, "keep_recent_tokens", int, ("compaction",))
    if keep is not None and keep <= 0:
        raise Mistake(("compaction", "keep_recent_tokens"), "must be positive")
    compaction = CompactionConfig(
        enabled=True if enabled is None else enabled, threshold=threshold, keep_recent_tokens=keep or 20_000
    )
    max_runtimes = _opt(tables["daemon"], "max_runtimes", int, ("daemon",))
    if max_runtimes is not None and max_runtimes < 1:
        raise Mistake(("daemon", "max_runtimes"), f"must be a positive integer, got {max_runtimes}")
    warm_start = _opt(tables["daemon"], "warm_start", bool, ("daemon",))
    subagents = _subagents(tables["subagents"])
    sandbox = _sandbox(tables["sandbox"])
    return Config(
        home=home,
        default_model=default_model,
        providers=tuple(providers),
        max_input_bytes=max_input or DEFAULT_MAX_LINE_BYTES,
        tool_extensions=tuple(extensions or ()),
        retry=retry,
        headless_timeout=headless_timeout,
        compaction=compaction,
        max_runtimes=max_runtimes,
        warm_start=True if warm_start is None else warm_start,
        subagents=subagents,
        sandbox=sandbox,
        mcp_servers=parse_servers(data.get("mcp_servers")),
        hosts=parse_hosts(data.get("hosts")),
        source=path,
    )


def _subagents(table: dict[str, Any]) -> SubagentConfig:
    counts = {}
    for key in ("max_tasks", "max_depth", "max_children"):
        value = _opt(table, key, int, ("subagents",))
        if value is not None and value < 1:
            raise Mistake(("subagents", key), f"must be a positive integer, got {value}")
        counts[key] = value
    timeout = _number(table, "run_timeout", ("subagents",), None)
    if timeout == 0:
        raise Mistake(("subagents", "run_timeout"), "must be positive (leave it out for no deadline)")
    return SubagentConfig(**counts, run_timeout=timeout)


def _sandbox(table: dict[str, Any]) -> SandboxConfig:
    mode = _opt(table, "mode", str, ("sandbox",)) or "off"
    if mode not in ("off", "ask", "auto"):
        raise Mistake(("sandbox", "mode"), f"must be one of off, ask, auto, got {mode!r}")
    network = table.get("network", "off")
    hosts: tuple[str, ...] = ()
    if isinstance(network, list):
        if not network or not all(isinstance(h, str) and h and " " not in h for h in network):
            raise Mistake(("sandbox", "network"), "must be off, on, or a list of host names")
        hosts, network = tuple(network), "off"
    elif network not in ("off", "on"):
        raise Mistake(("sandbox", "network"), f"must be off, on, or a list of host names, got {network!r}")
    lists = {}
    for key in ("writable", "hidden"):
        value = _opt(table, key, list, ("sandbox",), "a list of paths") or []
        if not all(isinstance(p, str) and os.path.isabs(os.path.expanduser(p)) for p in value):
            raise Mistake(("sandbox", key), "must be a list of absolute paths")
        lists[key] = tuple(os.path.expanduser(p) for p in value)
    return SandboxConfig(
        mode=mode,
        network=network == "on",
        writable=lists["writable"],
        allow_hosts=hosts,
        hidden=lists["hidden"],
    )


def _table(data: dict[str, Any], name: str) -> dict[str, Any]:
    table = _opt(data, name, dict, ()) or {}
    _only(table, _TABLES[name], (name,))
    return table


def _parse_model(m: object, at: KeyPath) -> ModelConfig:
    if isinstance(m, str):  # models = ["m1"]: the shorthand for [{ id = "m1" }]
        if not m:
            raise Mistake(at, "must not be an empty model id")
        return ModelConfig(id=m)
    if not isinstance(m, dict):
        raise Mistake(at, f"must be a model id or a table, got {_a(m)}")
    _only(m, _MODEL_KEYS, at)
    levels = []
    for k, lv in enumerate(_opt(m, "reasoning_levels", list, at, "a list of level ids or tables") or []):
        lat: KeyPath = (*at, "reasoning_levels", k)
        if isinstance(lv, str):
            levels.append(ReasoningLevelConfig(id=lv, label=lv))
            continue
        if not isinstance(lv, dict):
            raise Mistake(lat, f"must be a string or a table, got {_a(lv)}")
        _only(lv, _LEVEL_KEYS, lat)
        budget = _opt(lv, "budget_tokens", int, lat)
        if budget is not None and budget < 0:
            raise Mistake((*lat, "budget_tokens"), "must not be negative")
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
        raise Mistake((*at, "default_reasoning"), f"{default_reasoning!r} is not one of its reasoning_levels")
    context_window = _opt(m, "context_window", int, at)
    if context_window is not None and context_window <= 0:
        raise Mistake((*at, "context_window"), "must be positive")
    max_output = _opt(m, "max_output_tokens", int, at)
    if max_output is not None and max_output <= 0:
        raise Mistake((*at, "max_output_tokens"), "must be positive")
    model_id = _req(m, "id", str, at)
    if not model_id:
        raise Mistake((*at, "id"), "must not be empty")
    return ModelConfig(
        id=model_id,
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


_KINDS = {str: "a string", int: "an integer", bool: "true or false", list: "a list", dict: "a table"}


def _a(value: object) -> str:
    """What a TOML value is, for "got …"."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"


def _number(table: dict[str, Any], key: str, at: KeyPath, default: float | None) -> Any:
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise Mistake((*at, key), "must be a non-negative number")
    return float(value)


def _req(table: dict[str, Any], key: str, typ: type, at: KeyPath) -> Any:
    if key not in table:
        raise Mistake((*at, key), "is required", line_at=at)
    return _opt(table, key, typ, at)


def _opt(table: dict[str, Any], key: str, typ: type, at: KeyPath, what: str | None = None) -> Any:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise Mistake((*at, key), f"must be {what or _KINDS[typ]}, got {_a(value)}")
    return value
