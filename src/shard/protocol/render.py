"""RenderDescriptor (PROTOCOL §11): server-authored presentation data that clients render.

Pinned here (open question P6) because the first descriptors ship now:

* ``Hunk`` is one unified-diff hunk: ``old_start``/``old_lines``/``new_start``/``new_lines`` exactly as
  in a ``@@ -a,b +c,d @@`` header, and ``lines``, each starting with ``" "`` (context), ``"-"``
  (removed) or ``"+"`` (added), without its line terminator.
* ``TreeNode`` is ``{label, kind?: "file" | "dir", children?: TreeNode[]}``.
"""

from typing import Annotated, Literal

from pydantic import Field

from shard.protocol.base import WireModel


class KeyValue(WireModel):
    k: str
    v: str


class Hunk(WireModel):
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str]


class TreeNode(WireModel):
    label: str
    kind: Literal["file", "dir"] | None = None
    children: "list[TreeNode] | None" = None


class PathEntry(WireModel):
    path: str
    kind: Literal["file", "dir"]
    hint: str | None = None


class TextRender(WireModel):
    kind: Literal["text"] = "text"
    text: str


class KvRender(WireModel):
    kind: Literal["kv"] = "kv"
    pairs: list[KeyValue]


class DiffRender(WireModel):
    kind: Literal["diff"] = "diff"
    path: str
    hunks: list[Hunk]


class TreeRender(WireModel):
    kind: Literal["tree"] = "tree"
    root: TreeNode


class ProgressRender(WireModel):
    kind: Literal["progress"] = "progress"
    label: str
    current: int | float
    total: int | float | None = None


class StatusRender(WireModel):
    kind: Literal["status"] = "status"
    label: str
    tone: Literal["info", "warn", "error"]


class CommandRender(WireModel):
    kind: Literal["command"] = "command"
    command: str
    exitCode: int | None = None
    durationMs: int | float | None = None


class PathListRender(WireModel):
    kind: Literal["path_list"] = "path_list"
    paths: list[PathEntry]


class CodeRender(WireModel):
    kind: Literal["code"] = "code"
    path: str | None = None
    lang: str | None = None
    text: str


RenderDescriptor = Annotated[
    TextRender
    | KvRender
    | DiffRender
    | TreeRender
    | ProgressRender
    | StatusRender
    | CommandRender
    | PathListRender
    | CodeRender,
    Field(discriminator="kind"),
]
