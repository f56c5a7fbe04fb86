"""What the turn loop works with (:class:`TurnContext`): the loop gets these, never the runtime. Its
own module so that the loop's helpers (``compaction/tiers.py``) can name it without importing the
loop that calls them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shard.agent.config.settings import CompactionConfig, RetryConfig
from shard.agent.message_queue import MessageQueue
from shard.agent.modes import ModeController
from shard.agent.selection import ModelSelection
from shard.agent.sink import EventSink
from shard.agent.steering import StrictSteers
from shard.agent.tool_runs import Approve, Stopping
from shard.agent.tools.base import Tool, ToolContext
from shard.agent.transcript import Transcript

Prepare = Callable[[dict[str, Tool[Any]], EventSink], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class TurnContext:
    """What the turn loop works with."""

    transcript: Transcript
    events: EventSink
    models: ModelSelection  # the provider handle: take_provider at each call, the reasoning level
    tools: dict[str, Tool[Any]]
    approve: Approve  # the gate in front of every tool call
    tool_context: Callable[[str], ToolContext]
    queue: MessageQueue  # the steers and follow-ups sent while the agent works
    strict: StrictSteers  # the daemon's runtime.steer: only ever for the turn that is running
    cwd: Path
    modes: ModeController
    retry: RetryConfig
    compaction: CompactionConfig
    instructions: str | None = None  # appended to the system prompt (a delegated child's)
    context: str | None = None  # the session's environment and project instructions (instructions.py)
    prepare: Prepare | None = None  # before a turn's first model call: MCP servers add their tools
    stopping: Stopping = field(default_factory=Stopping)  # why a cancellation came
