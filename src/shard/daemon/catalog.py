"""What a new agent may be configured with, pure: the models, modes and tool names its runtime will
accept (PROTOCOL §10.1 ``agent.create``, §10.3 ``subagent.create``).

The daemon checks a request against this before it writes any row (R10.3.17): a model, provider,
mode or tool the runtime would not know is INVALID_REQUEST naming the field, not an Agent whose
runtime can never start. The daemon's layer may not import the agent's, so the CLI builds the
catalog from config.toml (``shard.cli.daemon``) and hands it in through the Manifests port, read
afresh when config.toml changes.

Tool extensions (``[tools] extensions``) are imported by each runtime from its agent's working
directory, which the daemon does not share: with any configured, a tool name that is well formed
but unknown here is taken on trust (the runtime alone can tell).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from shard.protocol.errors import ErrorCode, ShardError, shown

MCP_SEPARATOR = "__"  # an MCP server's tool is named <server>__<tool> (shard.agent.mcp.names)
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what every provider accepts as a tool's name


@dataclass(frozen=True, slots=True)
class Catalog:
    models: tuple[tuple[str, str], ...] = ()  # (provider, model id); the catalog id is provider/model
    modes: tuple[str, ...] = ("build", "plan")
    tools: frozenset[str] = frozenset()  # the built-ins, recall and the subagent tools
    mcp_servers: frozenset[str] = frozenset()
    open_tools: bool = False  # tool extensions are configured: only runtimes know their names
    # the runtime's own line for a model it lacks (the CLI gives ModelCatalog.unknown): said alike
    unknown_model: Callable[[str], str] | None = None
    hosts: frozenset[str] = frozenset()  # the [[hosts]] entries an agent may run on
    own_config_hosts: frozenset[str] = frozenset()  # those whose runtimes read the host's own config

    def host(self, name: str | None) -> None:
        """INVALID_REQUEST unless ``name`` (when given) is a [[hosts]] entry of config.toml."""
        if name is not None and name not in self.hosts:
            known = ", ".join(sorted(self.hosts)) or "none: add a [[hosts]] entry to config.toml"
            _refuse(f"unknown host {shown(name)} (hosts: {known})")

    @property
    def providers(self) -> frozenset[str]:
        return frozenset(provider for provider, _ in self.models)

    def resolve(self, selection: str) -> str | None:
        """The catalog id of ``provider/model``, or of a model id only one provider offers."""
        ids = [f"{p}/{m}" for p, m in self.models]
        if selection in ids:
            return selection
        if "/" not in selection:
            matches = [f"{p}/{m}" for p, m in self.models if m == selection]
            if len(matches) == 1:
                return matches[0]
        return None

    def check(
        self, model: str | None, provider: str | None, mode: str | None, tools: list[str] | None
    ) -> str | None:
        """Every choice of a new agent checked; its model as a catalog id (None: none named)."""
        self.mode(mode)
        self.tool_names(tools)
        return self.model(model, provider)

    def model(self, model: str | None, provider: str | None) -> str | None:
        """The catalog id a request's ``model`` (and ``provider``) name, None when it names none."""
        if provider is not None and provider not in self.providers:
            known = ", ".join(sorted(self.providers))
            _refuse(f"unknown provider {shown(provider)} (providers: {known})")
        if model is None:
            return None
        selection = f"{provider}/{model}" if provider is not None and "/" not in model else model
        found = self.resolve(selection)
        if found is None:
            if self.unknown_model is not None:
                _refuse(self.unknown_model(selection))
            _refuse(
                f"unknown model {shown(selection)} (models: {', '.join(f'{p}/{m}' for p, m in self.models)})"
            )
        if provider is not None and not found.startswith(provider + "/"):
            _refuse(f"provider {shown(provider)} does not offer model {shown(found)}")
        return found

    def mode(self, mode: str | None) -> None:
        if mode is not None and mode not in self.modes:
            _refuse(f"unknown mode {shown(mode)} (modes: {', '.join(self.modes)})")

    def tool_names(self, tools: list[str] | None) -> None:
        for i, name in enumerate(tools or ()):
            if name in self.tools:
                continue
            server, separator, rest = name.partition(MCP_SEPARATOR)
            if separator and rest and server in self.mcp_servers:
                continue
            if self.open_tools and _TOOL_NAME.fullmatch(name):
                continue
            _refuse(f"unknown tool {shown(name)} in tools[{i}] (tools: {', '.join(sorted(self.tools))})")


def _refuse(why: str) -> NoReturn:
    """INVALID_REQUEST: every message above names its field (model, provider, mode, tools[i])."""
    raise ShardError(ErrorCode.INVALID_REQUEST, why)


def selection(model: str | None, provider: str | None) -> str | None:
    """``model`` with ``provider`` in front when it has none: what is recorded when there is no catalog
    to resolve it with."""
    return f"{provider}/{model}" if model and provider and "/" not in model else model
