"""A wire model's first use builds the models it contains first (issue 31).

The models are deferred (``defer_build``): each is built the first time it validates or dumps. Built
on its own, a model generates the schema of every model inside it again, inline; a one-shot run then
generated ``ToolCallBlock``'s schema three times (inside ``Message``, inside ``ToolCall``, and for
itself). ``WireModel.model_rebuild`` builds the parts first, so each schema is generated once and the
containers reuse it. Each check runs in a fresh interpreter: in this one, other tests have built the
models already."""

import subprocess
import sys

_MESSAGE = """
from shard.protocol.content import Message, ToolCallBlock, ToolResultBlock
from shard.protocol.render import KvRender
assert not Message.__pydantic_complete__ and not ToolCallBlock.__pydantic_complete__
Message.model_validate({"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}]})
print(*(m.__pydantic_complete__ for m in (ToolCallBlock, ToolResultBlock, KvRender)))
"""


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_validating_a_message_first_builds_the_blocks_and_renders_inside_it() -> None:
    assert _run(_MESSAGE) == "True True True"


def test_a_model_built_after_its_container_is_not_generated_again() -> None:
    """The part built for the container is the part: its validator works on its own, and a second
    build is no build (``model_rebuild`` says None: complete already)."""
    code = _MESSAGE + (
        "print(ToolCallBlock.model_rebuild())\n"
        "b = ToolCallBlock.model_validate({'type': 'tool_call', 'id': 't', 'name': 'read', 'args': {}})\n"
        "print(b.name)\n"
    )
    assert _run(code).splitlines()[1:] == ["None", "read"]
