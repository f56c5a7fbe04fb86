"""The base every wire model derives from.

Two wire habits are decided here once:

* Unknown extra fields are accepted and kept (PROTOCOL §7: additive evolution), so a message from a
  newer peer round-trips unchanged.
* A model is dumped with ``exclude_unset``: a field that was never given is absent on the wire, while a
  field given as ``null`` stays ``null`` (``ui_response.value: null`` means something). Tag fields
  (``type`` / ``kind``) are always written even when they came from their default.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

_TAG_FIELDS = ("type", "kind")


class WireModel(BaseModel):
    """A JSON object on the wire: extra keys allowed, tags always serialized."""

    model_config = ConfigDict(extra="allow", defer_build=True, validate_default=False)

    _wire_tags: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._wire_tags = frozenset(
            name
            for name, field in cls.model_fields.items()
            if name in _TAG_FIELDS and not field.is_required()
        )

    def model_post_init(self, context: Any, /) -> None:
        if self._wire_tags:
            self.__pydantic_fields_set__.update(self._wire_tags)

    def to_wire(self) -> dict[str, Any]:
        """The plain-JSON dict of this model, as it goes on the wire."""
        return self.model_dump(mode="json", exclude_unset=True)

    def to_json(self) -> bytes:
        """One JSON document (no trailing newline) for this model."""
        return self.__pydantic_serializer__.to_json(self, exclude_unset=True)
