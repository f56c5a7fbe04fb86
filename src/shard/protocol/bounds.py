"""Bounds on what a client names things with (PROTOCOL §10.1 ``agent.create``, §10.3
``subagent.create``): in the models, so ``shard schema`` shows them and a longer or malformed value is
INVALID_REQUEST naming its field before the daemon looks at it — and long before anything is written.

Whether a model, mode or tool *exists* is the daemon's question (it knows the catalog); these are
only the shapes every value must have.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_NAME_CHARS = 128  # an agent's display name
MAX_ALIAS_CHARS = 64  # a task's name, which becomes its child's alias
MAX_CHOICE_CHARS = 256  # a model (``provider/model``), a provider or a mode
MAX_TOOL_CHARS = 64  # a tool name (the longest every provider accepts)
MAX_TOOLS = 256  # names in a tool (or skill) allow-list
MAX_PATH_CHARS = 4096  # a working directory (Linux's PATH_MAX)
MAX_CLIENT_NAME_CHARS = 64  # what a client calls itself (``client.identify``)

AgentName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
TaskName = Annotated[str, Field(min_length=1, max_length=MAX_ALIAS_CHARS)]
Choice = Annotated[str, Field(min_length=1, max_length=MAX_CHOICE_CHARS)]
ToolName = Annotated[str, Field(min_length=1, max_length=MAX_TOOL_CHARS)]
ToolList = Annotated[list[ToolName], Field(max_length=MAX_TOOLS)]
# Shown to people as who answered a request ("Allowed by my-bot"); the daemon makes it printable.
ClientName = Annotated[str, Field(min_length=1, max_length=MAX_CLIENT_NAME_CHARS)]
# No NUL: no system call takes one, so it could only ever be refused later and less clearly.
DirectoryPath = Annotated[str, Field(max_length=MAX_PATH_CHARS, pattern=r"^[^\x00]*$")]
# A [[hosts]] entry's name: what a person types in `host = "…"` and sees beside an agent (whether
# it names an entry is the daemon's question: an unknown one is INVALID_REQUEST naming the hosts).
MAX_HOST_CHARS = 64
HostName = Annotated[str, Field(min_length=1, max_length=MAX_HOST_CHARS)]
