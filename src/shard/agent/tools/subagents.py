"""The subagent tools (issue 14; PROTOCOL §10.3, §12.5): launch, wait, steer, status, stop and
relaunch background child agents. Each is a thin client of one daemon ``subagent.*`` command sent
over :class:`~shard.agent.daemon_link.DaemonLink` with this runtime's agent id as
``parent_agent_id``; its result is compact text (:mod:`~shard.agent.tools.subagent_text`), and a
refusal is one line with the protocol error code.

They exist only in a runtime the daemon hosts (``--agent-id`` and ``SHARD_DAEMON_SOCKET``; see
:func:`hosted_tools`). The gate runs them without asking (``read_only``): they touch no file and run
no command here, and each child is an agent of its own whose tool calls pass its own gate, asking the
nearest person up the hierarchy (PROTOCOL §6.3). Plan mode refuses launch and relaunch
(:mod:`shard.agent.modes`): they start new work.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from shard.agent.daemon_link import DaemonLink, LinkError
from shard.agent.prompting.definitions import Definition, load_definitions
from shard.agent.providers.base import ToolSpec
from shard.agent.tools import subagent_text as text
from shard.agent.tools.base import P, Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.protocol.codec import describe_validation_error
from shard.protocol.content import TextContent

HANDLE = "a job id, run id, agent id or alias"


class _SubagentTool(Tool[P]):
    read_only = True  # for the gate: nothing here touches a file (see the module docstring)
    # The command's class in ``shard.protocol.daemon_commands`` (not the catalog: a runtime loads no
    # orchestrator command), imported at the first call: ~12 ms of every daemon runtime's start.
    command: str
    summary: Callable[[dict[str, Any]], str]  # the response data as text for the model

    def __init__(self, link: DaemonLink) -> None:
        self.link = link

    def fields(self, args: P) -> dict[str, Any]:
        """The command's payload from the tool's arguments (absent when None)."""
        return args.model_dump(exclude_none=True)

    async def execute(self, args: P, ctx: ToolContext) -> ToolOutput:
        from shard.protocol import daemon_commands

        make = getattr(daemon_commands, self.command)
        try:
            command = make(parent_agent_id=self.link.agent_id, **self.fields(args))
        except ValidationError as exc:
            raise ToolFailure(f"{self.name}: {describe_validation_error(exc)}") from None
        try:
            data = await self.link.call(command)
        except LinkError as exc:
            raise ToolFailure(f"{self.name} failed: {exc.code}: {exc.message}") from None
        return ToolOutput(content=TextContent(text=self.summary(data)))


class TaskItem(ToolParams):
    name: str = Field(description="The child's name (an agent definition's name makes it that agent).")
    task: str = Field(description="Everything the child needs to know to do its part.")


class LaunchParams(ToolParams):
    name: str | None = Field(
        default=None, description="One child: its name (an agent definition's name makes it that agent)."
    )
    task: str | None = Field(default=None, description="One child: its task.")
    tasks: list[TaskItem] | None = Field(default=None, description="Several children, instead of name/task.")
    strategy: Literal["parallel", "chain"] | None = Field(
        default=None,
        description="With tasks: parallel (the default) runs them at once; chain runs each after the "
        "previous one completed, and a failed step cancels the rest.",
    )
    model: str | None = Field(default=None, description="Model for the children (default: inherited).")
    mode: str | None = Field(default=None, description="Mode for the children: build or plan.")
    host: str | None = Field(
        default=None,
        description="Run the children on this configured host (its name in config.toml [[hosts]]), "
        "in the same folder path there; default: where this agent runs.",
    )


class LaunchTool(_SubagentTool[LaunchParams]):
    name = "subagent_launch"
    description = (
        "Start background child agents: one (name, task) or several (tasks, strategy). Returns at once "
        "with a job id and each child's alias; each child's completion report reaches you by itself, "
        "and subagent_wait blocks until they finish. A child sees only its task: say what it needs."
    )
    params = LaunchParams
    command = "SubagentCreate"
    summary = staticmethod(text.launched)

    def __init__(self, link: DaemonLink, definitions: Mapping[str, Definition]) -> None:
        super().__init__(link)
        self.definitions = dict(definitions)

    def spec(self) -> ToolSpec:
        spec = super().spec()
        if self.definitions:
            listed = "\n".join(f"- {d.name}: {d.description}" for d in self.definitions.values())
            more = f"\n\nAgent definitions (give one as a child's name to make it that agent):\n{listed}"
        else:
            more = "\n\nNo agent definitions exist here: every child is a general-purpose agent."
        return ToolSpec(name=spec.name, description=spec.description + more, parameters=spec.parameters)

    def fields(self, args: LaunchParams) -> dict[str, Any]:
        fields = args.model_dump(exclude_none=True)
        if args.tasks is not None:
            fields["strategy"] = args.strategy or "parallel"
        elif args.strategy is not None:
            raise ToolFailure("subagent_launch: strategy goes with tasks, not with a single name and task")
        return fields


class WaitParams(ToolParams):
    handles: list[str] = Field(min_length=1, description=f"What to wait for: each {HANDLE}.")
    mode: Literal["any", "all"] | None = Field(
        default=None, description="all (default): until every one is done; any: until one is."
    )
    timeout: float | None = Field(
        default=None, ge=0, description="Seconds to wait at most (0: just look); omitted: until done."
    )


class WaitTool(_SubagentTool[WaitParams]):
    name = "subagent_wait"
    description = (
        "Wait until background children finish, then get each one's state and final text. A timeout "
        "only stops the waiting: the children go on."
    )
    params = WaitParams
    command = "SubagentWait"
    summary = staticmethod(text.waited)


class SteerParams(ToolParams):
    target: str = Field(description="The child: its run id, agent id or alias.")
    message: str = Field(description="What to tell it.")


class SteerTool(_SubagentTool[SteerParams]):
    name = "subagent_steer"
    description = (
        "Tell a running child something while it works: delivered before its next model call, or not "
        "at all if its turn ends first (then relaunch it with a new task)."
    )
    params = SteerParams
    command = "SubagentSteer"
    summary = staticmethod(text.steered)


class StatusParams(ToolParams):
    targets: list[str] | None = Field(
        default=None, description=f"Each {HANDLE}; omitted: your latest jobs, newest first."
    )


class StatusTool(_SubagentTool[StatusParams]):
    name = "subagent_status"
    description = "The state of your background children and jobs (also recovers their ids and aliases)."
    params = StatusParams
    command = "SubagentStatus"
    summary = staticmethod(text.status)


class StopParams(ToolParams):
    handle: str = Field(description="A job id (all its runs), or a run id or alias (that run only).")


class StopTool(_SubagentTool[StopParams]):
    name = "subagent_stop"
    description = "Cancel a background job or one child's run. The children and what they did are kept."
    params = StopParams
    command = "SubagentStop"
    summary = staticmethod(text.stopped)


class RelaunchParams(ToolParams):
    target: str = Field(description="The child: its agent id, run id or alias.")
    task: str = Field(description="Its new task.")


class RelaunchTool(_SubagentTool[RelaunchParams]):
    name = "subagent_relaunch"
    description = (
        "Give a finished or stopped child a new task. It keeps its conversation, alias and settings."
    )
    params = RelaunchParams
    command = "SubagentRelaunch"
    summary = staticmethod(text.relaunched)


TOOL_NAMES = tuple(t.name for t in (LaunchTool, WaitTool, SteerTool, StatusTool, StopTool, RelaunchTool))


def subagent_tools(link: DaemonLink, definitions: Mapping[str, Definition]) -> list[Tool[Any]]:
    return [
        LaunchTool(link, definitions),
        WaitTool(link),
        SteerTool(link),
        StatusTool(link),
        StopTool(link),
        RelaunchTool(link),
    ]


def hosted_tools(
    agent_id: str | None, cwd: Path, home: Path, environ: Mapping[str, str] = os.environ
) -> list[Tool[Any]]:
    """The subagent tools of a runtime the daemon hosts; none without both the agent id and the
    daemon's socket. A definition file that cannot be used is one line on stderr."""
    link = DaemonLink.hosted(agent_id, environ)
    if link is None:
        return []
    definitions, problems = load_definitions(cwd, home)
    for problem in problems:
        sys.stderr.write(f"shard: {problem}\n")
    return subagent_tools(link, definitions)
