"""The base every wire model derives from.

Two wire habits are decided here once:

* Unknown extra fields are accepted and kept (PROTOCOL §7: additive evolution), so a message from a
  newer peer round-trips unchanged.
* A model is dumped with ``exclude_unset``: an optional field that was never given is absent on the
  wire, while one given as ``null`` stays ``null`` (``ui_response.value: null`` means something). A
  field whose default is a value (the ``type``/``kind`` tags, ``effective: "next_provider_call"``,
  ``compacted: false``) is always written, default or not.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """A JSON object on the wire: extra keys allowed, tags always serialized."""

    model_config = ConfigDict(extra="allow", defer_build=True, validate_default=False)

    _always_written: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._always_written = frozenset(
            name
            for name, field in cls.model_fields.items()
            if not field.is_required() and field.default is not None
        )

    def model_post_init(self, context: Any, /) -> None:
        if self._always_written:
            self.__pydantic_fields_set__.update(self._always_written)

    def to_wire(self) -> dict[str, Any]:
        """The plain-JSON dict of this model, as it goes on the wire."""
        return self.model_dump(mode="json", exclude_unset=True)

    def to_json(self) -> bytes:
        """One JSON document (no trailing newline) for this model."""
        return self.__pydantic_serializer__.to_json(self, exclude_unset=True)
