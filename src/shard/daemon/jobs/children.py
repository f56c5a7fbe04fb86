"""A launched child's durable configuration (PROTOCOL §10.1 managed-child manifest, §10.3), pure.

A task's ``name`` selects an agent definition when one of that name exists (the project's
``.shard/agents/<name>.md``, else ``$SHARD_HOME/agents/<name>.md``; read by
``shard.agent.prompting.definitions`` and handed to the daemon as a :class:`ChildSpec` through the
``JobStore`` port). Otherwise the child is general-purpose: the parent's configuration, the name its
alias.

What a child gets, first match wins: the launch's own ``model`` / ``mode``, then the definition's,
then the parent's. Neither a definition nor the launch can widen what the parent has, only narrow
it: the mode is the stricter of the chosen one and the parent's (a ``mode: build`` definition under a
plan-mode parent makes a plan-mode child, silently, as for the other two), its tools are intersected
with a parent's allow-list, and the stricter of the two headless policies applies (a definition on
disk is the project's text, not the person's decision; a launch may come from the parent's model).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from shard.daemon.catalog import Catalog, selection
from shard.daemon.jobs import handles
from shard.daemon.record import AgentRecord
from shard.protocol.errors import ShardError
from shard.protocol.headless import BY_STRICTNESS
from shard.protocol.ids import new_id

# strictest first: deny never runs an ask; queue waits for a person; allow_if_rule_matches runs grants
# strictest first: plan runs read-only tools only; build (a runtime's default) runs any tool the gate allows
_MODES = ("plan", "build")
DEFAULT_MODE = "build"


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """What an agent definition prescribes for the children launched under its name."""

    name: str
    prompt: str
    model: str | None = None
    mode: str | None = None
    tools: tuple[str, ...] | None = None
    headless_policy: str | None = None
    names: tuple[str, ...] | None = None  # the friendly-alias pool for its children
    host: str | None = None  # the [[hosts]] entry its children run on (None: their parent's)


@dataclass(frozen=True, slots=True)
class Launch:
    """The request's own overrides, shared by its tasks."""

    model: str | None = None
    provider: str | None = None
    mode: str | None = None
    host: str | None = None  # where the children run (None: their definition's, else their parent's)


def launch(
    model: str | None,
    provider: str | None,
    mode: str | None,
    catalog: Catalog | None,
    host: str | None = None,
) -> Launch:
    """A request's overrides, checked against the catalog (INVALID_REQUEST naming the field); the
    model as its catalog id."""
    if catalog is None:  # nothing to check against (an in-memory broker): taken as given
        return Launch(selection(model, provider), provider, mode, host)
    catalog.host(host)
    return Launch(catalog.check(model, provider, mode, None), provider, mode, host)


def checked(spec: ChildSpec | None, given: Launch, catalog: Catalog | None) -> ChildSpec | None:
    """The definition, its model and mode checked against the catalog where the launch does not
    override them: one naming what no runtime would take refuses the launch before any row is
    written (INVALID_REQUEST naming the definition), rather than making a child that cannot start."""
    if spec is None or catalog is None:
        return spec
    try:
        if given.host is None:
            catalog.host(spec.host)
        if given.mode is None:
            catalog.mode(spec.mode)
        return spec if given.model else replace(spec, model=catalog.model(spec.model, None))
    except ShardError as exc:
        raise ShardError(exc.code, f"agent definition {spec.name}: {exc.message}") from None


def alias_for(name: str, spec: ChildSpec | None, taken: Iterable[str]) -> str:
    """The child's alias: the first free name of its definition's pool, else the task's name
    (``-2``, ``-3``… when taken)."""
    used = list(taken)
    keys = {handles.alias_key(t) for t in used}
    for candidate in spec.names or () if spec else ():
        if handles.alias_key(candidate) not in keys:
            return candidate
    return handles.allocate([name], used)[0]


def child_record(
    parent: AgentRecord, alias: str, spec: ChildSpec | None, launch: Launch, now: float
) -> AgentRecord:
    model = launch.model or (spec.model if spec else None)
    provider = launch.provider if launch.model else None
    if model is None:
        model, provider = parent.model, parent.provider
    return AgentRecord(
        agent_id=new_id("agent"),
        session_id=new_id("sess"),
        cwd=parent.cwd,
        name=alias,
        model=model,
        provider=provider,
        mode=stricter_mode(parent.mode, launch.mode or (spec.mode if spec else None)),
        tools=_tools(parent.tools, spec.tools if spec else None),
        headless_policy=_stricter(parent.headless_policy, spec.headless_policy if spec else None),
        parent_agent_id=parent.agent_id,
        depth=parent.depth + 1,
        alias=alias,
        definition_name=spec.name if spec else None,
        display_name=f"{spec.name} · {alias}" if spec else None,
        system_prompt=spec.prompt or None if spec else None,
        sandbox=parent.sandbox,  # a child is confined at least as its parent is
        # on another host it works in the same path there (the project checked out alike)
        host=launch.host or (spec.host if spec else None) or parent.host,
        created_at=now,
    )


def _tools(parent: list[str] | None, wanted: tuple[str, ...] | None) -> list[str] | None:
    if wanted is None:
        return None if parent is None else list(parent)
    return [t for t in wanted if parent is None or t in parent]


def _stricter(parent: str, wanted: str | None) -> str:
    if wanted not in BY_STRICTNESS or parent not in BY_STRICTNESS:
        return parent
    return min(parent, wanted, key=BY_STRICTNESS.index)


def stricter_mode(parent: str | None, wanted: str | None) -> str | None:
    """A child's mode: ``wanted`` (None: the parent's), unless the parent's is stricter."""
    if wanted is None:
        return parent
    have = parent or DEFAULT_MODE
    return have if _rank(have) < _rank(wanted) else wanted


def _rank(mode: str) -> int:
    """0 for the strictest mode; a mode unknown here counts as the least strict."""
    return _MODES.index(mode) if mode in _MODES else len(_MODES)
