"""Shard's wire protocol in ACP's words, both ways: pure functions, no I/O.

* tool calls: a title, an ACP ``ToolKind``, the locations its ``path`` names, and the content of its
  result — a ``diff`` RenderDescriptor (PROTOCOL §11, hunks pinned in ``shard.protocol.render``)
  becomes an ACP ``diff`` whose old and new texts are the hunks' two sides;
* permission requests: our ``choices`` (intents allow / persist / deny) or, from an older runtime,
  the legacy ``options`` become ACP ``PermissionOption``s, and the option the editor picked becomes
  our answer — by ``choice_id`` when the request offered choices, else by ``decision``;
* history: a transcript ``Message`` becomes the ``session/update``s that replay it (session/load);
* prompts: ACP content blocks become one message text and its images.
"""

from __future__ import annotations

import json
import os
from typing import Any, Literal, NamedTuple

from acp import helpers
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    ImageContentBlock,
    PermissionOption,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    ToolCallLocation,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
)

from shard.protocol.content import (
    ErrorContent,
    Image,
    ImageBlock,
    JsonContent,
    Message,
    TextBlock,
    TextContent,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultContent,
)
from shard.protocol.events import PermissionRequest, ToolResult
from shard.protocol.permissions import Decision
from shard.protocol.render import DiffRender, Hunk

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
Update = Any  # one of ACP's session/update payloads (the SDK's union has no public name)

# The built-in tools by name; an extension tool falls back on its read_only flag.
_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "recall": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
}
_TITLE_ARGS = ("path", "command", "pattern", "name", "task")
RESULT_CHARS = 20_000  # what an editor is shown of one tool's output (the model saw it all)


def tool_kind(name: str, read_only: bool | None = None) -> ToolKind:
    if name in _KINDS:
        return _KINDS[name]
    if name.startswith("subagent_"):
        return "other"
    return "read" if read_only else "other"


def tool_title(name: str, args: dict[str, Any]) -> str:
    """``read notes.txt``, ``bash: ls -la``: the tool and the one argument that says what it does."""
    for key in _TITLE_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value:
            line = value.splitlines()[0] if value.strip() else value
            short = line if len(line) <= 80 else line[:79] + "…"
            return f"{name}: {short}" if key == "command" else f"{name} {short}"
    return name


def locations(args: dict[str, Any], cwd: str) -> list[ToolCallLocation]:
    """The file a call names (``path``), absolute as ACP wants it; a line when it names one."""
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return []
    line = args.get("offset") if isinstance(args.get("offset"), int) else None
    where = ToolCallLocation(path=os.path.normpath(os.path.join(cwd, path)))
    if line is not None and line >= 0:
        where.line = line
    return [where]


def hunk_sides(hunks: list[Hunk]) -> tuple[str, str]:
    """The old and the new text the hunks show (context and removed lines; context and added)."""
    old_parts: list[str] = []
    new_parts: list[str] = []
    for hunk in hunks:
        old = [line[1:] for line in hunk.lines if line[:1] in (" ", "-")]
        new = [line[1:] for line in hunk.lines if line[:1] in (" ", "+")]
        old_parts.append("\n".join(old))
        new_parts.append("\n".join(new))
    gap = "\n…\n"  # the same in both: an editor's diff shows it as unchanged
    return gap.join(old_parts), gap.join(new_parts)


def diff_content(render: DiffRender, cwd: str) -> FileEditToolCallContent:
    old, new = hunk_sides(render.hunks)
    path = os.path.normpath(os.path.join(cwd, render.path))
    return helpers.tool_diff_content(path, new, old or None)


def result_text(content: ToolResultContent) -> str:
    if isinstance(content, TextContent):
        text = content.text
    elif isinstance(content, JsonContent):
        text = json.dumps(content.value, ensure_ascii=False, indent=2)
    else:
        assert isinstance(content, ErrorContent)
        text = content.message
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + "\n… (cut for the editor)"


def result_update(event: ToolResult, cwd: str) -> Update:
    """``tool_call_update``: the call finished (completed, or failed when it is an error)."""
    content: list[Any] = []
    if isinstance(event.render, DiffRender):
        content.append(diff_content(event.render, cwd))
    text = result_text(event.content)
    if event.exit_code not in (None, 0):
        text += f"\n[exit code: {event.exit_code}]"
    if text:
        content.append(helpers.tool_content(helpers.text_block(text)))
    raw: dict[str, Any] = {"is_error": event.is_error}
    if event.exit_code is not None:
        raw["exit_code"] = event.exit_code
    if event.duration_ms is not None:
        raw["duration_ms"] = event.duration_ms
    return helpers.update_tool_call(
        event.tool_call_id,
        status="failed" if event.is_error else "completed",
        content=content,
        raw_output=raw,
    )


def call_start(block: ToolCallBlock, cwd: str, status: Literal["pending", "in_progress"]) -> ToolCallStart:
    return helpers.start_tool_call(
        block.id,
        tool_title(block.name, block.args),
        kind=tool_kind(block.name),
        status=status,
        locations=locations(block.args, cwd),
        raw_input=block.args,
    )


# --- permissions ----------------------------------------------------------------------------------

_INTENT_KINDS = {"allow": "allow_once", "persist": "allow_always", "deny": "reject_once"}
_LEGACY = {
    "allow": ("allow_once", "Allow"),
    "allow_always": ("allow_always", "Always allow"),
    "deny": ("reject_once", "Deny"),
}
_LEGACY_PREFIX = "decision:"  # option ids of a request without choices: never a choice id of ours


class Answer(NamedTuple):
    choice_id: str | None = None
    decision: Decision | None = None


def permission_options(request: PermissionRequest) -> list[PermissionOption]:
    if request.choices:
        return [
            PermissionOption(option_id=c.id, name=c.label, kind=_INTENT_KINDS[c.intent])  # type: ignore[arg-type]
            for c in request.choices
        ]
    return [
        PermissionOption(option_id=_LEGACY_PREFIX + d, name=_LEGACY[d][1], kind=_LEGACY[d][0])  # type: ignore[arg-type]
        for d in request.options
    ]


def answer_for(request: PermissionRequest, option_id: str) -> Answer | None:
    """Our answer for the ACP option picked; None for an option the request never offered."""
    if request.choices:
        return Answer(choice_id=option_id) if any(c.id == option_id for c in request.choices) else None
    for decision in request.options:
        if option_id == _LEGACY_PREFIX + decision:
            return Answer(decision=decision)
    return None


def permission_text(request: PermissionRequest) -> str:
    """What the editor shows under the request: the prompt, then each detail."""
    parts = [request.prompt]
    for detail in request.details or []:
        value = f"```\n{detail.value}\n```" if detail.format in ("code", "command") else detail.value
        parts.append(f"{detail.label}: {value}" if detail.label else value)
    return "\n\n".join(parts)


# --- history and prompts ------------------------------------------------------------------------


def replay_updates(message: Message, cwd: str) -> list[Update]:
    """The session/updates that show ``message`` again, block by block (session/load)."""
    updates: list[Update] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            text = helpers.text_block(block.text)
            user = message.role == "user"
            updates.append(helpers.update_user_message(text) if user else helpers.update_agent_message(text))
        elif isinstance(block, ThinkingBlock) and block.text:
            updates.append(helpers.update_agent_thought_text(block.text))
        elif isinstance(block, ImageBlock):
            updates.append(helpers.update_user_message(helpers.image_block(block.data, block.mime_type)))
        elif isinstance(block, ToolCallBlock):
            updates.append(call_start(block, cwd, "pending"))
        elif isinstance(block, ToolResultBlock):
            output = helpers.tool_content(helpers.text_block(result_text(block.content)))
            status: ToolCallStatus = "failed" if block.is_error else "completed"
            updates.append(helpers.update_tool_call(block.tool_call_id, status=status, content=[output]))
    return updates


def prompt_input(blocks: list[PromptBlock]) -> tuple[str, list[Image]]:
    """One message text (resources as fenced text under their URI) and the prompt's images."""
    texts: list[str] = []
    images: list[Image] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            images.append(Image(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, ResourceContentBlock):
            texts.append(f"@{_uri_path(block.uri)}")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            texts.append(f"{_uri_path(block.resource.uri)}:\n```\n{block.resource.text}\n```")
    return "\n\n".join(t for t in texts if t), images


def _uri_path(uri: str) -> str:
    return uri.removeprefix("file://")
