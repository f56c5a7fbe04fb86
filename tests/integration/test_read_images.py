"""read on an image hands the picture to the model (issue: tools; PROTOCOL §9.4 tool_result)."""

from __future__ import annotations

import base64

from shard.agent.providers.anthropic import convert_messages as anthropic_messages
from shard.agent.providers.openai import convert_messages as openai_messages
from shard.protocol.content import Message
from shard.testing import recorded_requests, text_step, tool_step

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 17


async def test_reading_a_png_attaches_it_for_the_model(start, home, project):
    """The tool result says what was attached, carries the image, and the model's next request has
    it inside the tool result; the session keeps it for a restore."""
    (project / "shot.png").write_bytes(PNG)
    agent = await start([tool_step("read", {"path": "shot.png"}), text_step("I see it.")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "look"})
    read = await agent.idle()
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is False
    assert "image/png" in result["content"]["text"]
    assert result["images"] == [
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mime_type": "image/png"}
    ]
    block = recorded_requests(home)[1]["messages"][-1]["content"][0]
    assert block["type"] == "tool_result"
    assert block["images"][0]["data"] == base64.b64encode(PNG).decode()


async def test_a_file_named_png_that_is_not_one_is_refused(start, project):
    """The extension alone does not make an image: the bytes are checked."""
    (project / "fake.png").write_text("not a picture")
    agent = await start([tool_step("read", {"path": "fake.png"}), text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "look"})
    read = await agent.idle()
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is True
    assert "does not look like" in result["content"]["message"]


def _history() -> list[Message]:
    data = base64.b64encode(PNG).decode()
    return [
        Message.model_validate({"id": "m1", "role": "user", "content": [{"type": "text", "text": "look"}]}),
        Message.model_validate(
            {
                "id": "m2",
                "role": "assistant",
                "content": [{"type": "tool_call", "id": "tc-1", "name": "read", "args": {"path": "a.png"}}],
            }
        ),
        Message.model_validate(
            {
                "id": "m3",
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_call_id": "tc-1",
                        "content": {"kind": "text", "text": "Image a.png"},
                        "is_error": False,
                        "images": [{"type": "image", "data": data, "mime_type": "image/png"}],
                    }
                ],
            }
        ),
    ]


def test_anthropic_sends_tool_result_images_as_image_blocks():
    """Anthropic: the tool_result's content becomes [text, image] blocks."""
    turns = anthropic_messages(_history())
    content = turns[-1]["content"][0]["content"]
    assert content[0] == {"type": "text", "text": "Image a.png"}
    assert content[1]["type"] == "image"
    assert content[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }


def test_openai_sends_tool_result_images_in_a_following_user_message():
    """OpenAI: the tool message keeps its text, and the picture follows as a user image_url part."""
    out = openai_messages("sys", _history())
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "user"]
    assert out[3] == {"role": "tool", "tool_call_id": "tc-1", "content": "Image a.png"}
    parts = out[4]["content"]
    assert parts[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
