"""The one cap on images a tool hands the model (``read``'s picture files, an MCP tool's image
content): a result over it would make a provider request too large to send (an 8 MB image is an
11 MB request once base64-encoded), so it is refused in words the model can act on."""

from __future__ import annotations

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # per tool call


def too_large(what: str, size: int, before: int = 0) -> str | None:
    """The line the model reads instead of an image of ``size`` bytes that would take the call's
    images (``before`` bytes so far) over the cap; None when it fits."""
    if before + size <= MAX_IMAGE_BYTES:
        return None
    earlier = f" after {before} bytes of images before it" if before else ""
    return (
        f"{what} is an image of {size} bytes{earlier}; images over {MAX_IMAGE_BYTES // (1024 * 1024)} MB"
        f" ({MAX_IMAGE_BYTES} bytes) in one tool call are not sent to the model"
    )


def base64_size(data: str) -> int:
    """The number of bytes ``data`` (base64 text) decodes to, without decoding it."""
    text = data.rstrip()
    return len(text) * 3 // 4 - (len(text) - len(text.rstrip("=")))
