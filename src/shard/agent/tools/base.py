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
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from shard.agent.providers.base import ToolSpec
from shard.protocol.content import ErrorContent, JsonContent, TextContent
from shard.protocol.render import RenderDescriptor

ToolContent = TextContent | JsonContent | ErrorContent


class ToolParams(BaseModel):
    """Base of every tool's parameter model: unknown arguments are an error the model sees."""

    model_config = ConfigDict(extra="forbid")


P = TypeVar("P", bound=ToolParams)


class ToolFailure(Exception):
    """An expected, explained failure; the message is what the model reads."""


@dataclass(slots=True)
class ToolContext:
    cwd: Path


@dataclass(slots=True)
class ToolOutput:
    content: ToolContent
    is_error: bool = False
    render: RenderDescriptor | None = None
    exit_code: int | None = None


class Tool(ABC, Generic[P]):
    name: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[type[ToolParams]]
    read_only: ClassVar[bool]

    def spec(self) -> ToolSpec:
        schema = self.params.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(name=self.name, description=self.description, parameters=schema)

    def parse(self, args: dict[str, Any]) -> P:
        return self.params.model_validate(args)  # type: ignore[return-value]

    def touched_paths(self, args: P, ctx: ToolContext) -> list[Path]:
        """Paths the call reads or writes, for the permission gate's containment check."""
        return []

    def start_render(self, args: P, ctx: ToolContext) -> RenderDescriptor | None:
        return None

    @abstractmethod
    async def execute(self, args: P, ctx: ToolContext) -> ToolOutput: ...
