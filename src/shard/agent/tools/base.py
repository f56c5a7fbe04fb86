"""The tool contract: a name, JSON-schema parameters from one pydantic model, ``read_only``, render
descriptors for the start and the result, and ``execute`` (cancellable: it is awaited in the turn
task, and abort cancels that task).

A tool reports an expected failure (missing file, bad offset) by raising :class:`ToolFailure`; the
loop turns it into a ``tool_result`` with ``is_error: true``. Any other exception is a crash: the same
tool_result plus an ``error`` event with code TOOL_ERROR.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict

from shard.agent.providers.base import ToolSpec
from shard.agent.sandbox.bwrap import Sandbox
from shard.agent.tools.paths import display
from shard.agent.tools.schema_cache import schema
from shard.protocol.content import ErrorContent, Image, JsonContent, TextContent
from shard.protocol.permissions import PermissionDetail
from shard.protocol.render import RenderDescriptor

ToolContent = TextContent | JsonContent | ErrorContent


class ToolParams(BaseModel):
    """Base of every tool's parameter model: unknown arguments are an error the model sees. Built on
    first use: a start-up offers the cached schemas (``schema_cache``) and validates nothing yet."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


P = TypeVar("P", bound=ToolParams)


class ToolFailure(Exception):
    """An expected, explained failure; the message is what the model reads."""


class UiAsker(Protocol):
    async def __call__(self, kind: str, **fields: Any) -> Any:
        """Ask the user (a ``ui_request``); the answer, or None when dismissed or nobody can answer."""
        ...


@dataclass(slots=True)
class ToolContext:
    cwd: Path
    spill_dir: Path | None = None  # where tools put full outputs they had to truncate
    env: dict[str, str] | None = None  # environment for subprocesses (secrets removed); None: inherit
    tool_call_id: str = ""
    ui: UiAsker | None = None  # how a tool asks the user something
    sandbox: Sandbox | None = None  # where commands run (shard.agent.sandbox.bwrap); None: no sandbox
    # Whether the sandbox can confine a command in ``cwd``, decided once per call (None: not yet), so
    # that the gate's decision and the run agree: a call allowed as confined never runs unconfined.
    confinable: bool | None = None


@dataclass(slots=True)
class ToolOutput:
    content: ToolContent
    is_error: bool = False
    render: RenderDescriptor | None = None
    exit_code: int | None = None
    images: list[Image] | None = None  # pictures for the model (read on a png, jpg, gif, webp)


class Tool(ABC, Generic[P]):
    name: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[type[ToolParams]]
    read_only: ClassVar[bool]

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=schema(self.params))

    def parse(self, args: dict[str, Any]) -> P:
        return self.params.model_validate(args)  # type: ignore[return-value]

    def confined(self, args: P, ctx: ToolContext) -> bool:
        """True when this call runs inside the sandbox (what ``auto`` lets run without asking)."""
        return False

    def escapes(self, args: P, ctx: ToolContext) -> bool:
        """True when a sandbox is in use and this call, which it could confine, runs outside it (bash
        with ``sandbox: false``, or in a working directory it cannot confine): no stored grant
        allows that (``permissions.gate``)."""
        return False

    def touched_paths(self, args: P, ctx: ToolContext) -> list[Path]:
        """Paths the call reads or writes, for the permission gate's containment check."""
        return []

    def start_render(self, args: P, ctx: ToolContext) -> RenderDescriptor | None:
        return None

    def describe(self, args: P, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        """What a permission request for this call shows: a one-line prompt and the details.

        May raise ToolFailure when the call cannot succeed (an edit that does not apply), so nobody
        is asked to approve it.
        """
        shown = ", ".join(display(ctx.cwd, p) for p in self.touched_paths(args, ctx))
        prompt = f"Allow {self.name}" + (f" on {shown}?" if shown else "?")
        value = orjson.dumps(args.model_dump(exclude_none=True), option=orjson.OPT_INDENT_2).decode()
        return prompt, [PermissionDetail(label="input", value=value, format="code")]

    def describe_outside(self, args: P, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        """What a permission request shows for a call that touches paths outside the working
        directory: built from the arguments alone, since nothing there may be opened, listed or even
        ``stat``-ed before the person allows it (the answer would otherwise tell the model whether a
        file exists or what it holds). Tools override it to show their arguments better."""
        return Tool.describe(self, args, ctx)

    @abstractmethod
    async def execute(self, args: P, ctx: ToolContext) -> ToolOutput: ...
