"""The base every wire model derives from.

Wire habits decided here once:

* Unknown extra fields are accepted and kept (PROTOCOL §7: additive evolution), so a message from a
  newer peer round-trips unchanged.
* Types are strict: ``"5"`` is not a number and ``1`` is not ``true`` — a wrong type is INVALID_REQUEST
  naming the field, never silently converted (R8.7).
* An optional field may be left out but is never ``null`` ("when present, a string", R5.0.3). Fields
  that are required *and* nullable (``ui_response.value``) and fields typed as any JSON keep ``null``.
* On input from the wire (validation context ``{"wire": True}``) the ``type``/``kind`` tags must be
  present; Python code may leave them to their defaults.
* A model is dumped with ``exclude_unset``: an optional field that was never given is absent on the
  wire. A field whose default is a value (the tags, ``effective: "next_provider_call"``,
  ``compacted: false``) is always written, and the JSON Schema marks it required.
* A module that defines wire models does not use ``from __future__ import annotations``: pydantic
  would evaluate every field's annotation from a string when the class is made — about 1,200 of
  them, nearly half of the protocol's import time in every daemon, runtime and ``shard run`` start
  (issue 31). The few forward references are quoted.
* A model's first build builds the models inside it first (``WireModel.model_rebuild``). Built on
  its own, a deferred model generates every part's schema again, inline: a one-shot run generated
  ``ToolCallBlock``'s three times, and the warm template's build of every model took twice as long.
"""

from typing import TYPE_CHECKING, Any, ClassVar, get_args

from shard import _schema_code
from shard._pydantic_plugins import skip_plugin_discovery

skip_plugin_discovery()  # before pydantic builds a model: no entry-point scan (_pydantic_plugins)

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator  # noqa: E402
from pydantic_core import PydanticCustomError  # noqa: E402

_TAGS = ("type", "kind")


def _schema_extra(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """Make the schema say what the wire does: always-written fields are required, optional
    fields are never null."""
    cls: Any = model
    props = schema.get("properties", {})
    required = set(schema.get("required", [])) | set(cls._always_written)
    if required:
        schema["required"] = [name for name in props if name in required]
    for name in cls._not_null:
        prop = props.get(name)
        if prop and "anyOf" in prop:
            options = [o for o in prop["anyOf"] if o != {"type": "null"}]
            if len(options) == 1:
                rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
                props[name] = {**options[0], **rest}
            else:
                prop["anyOf"] = options
                prop.pop("default", None)
        elif prop:
            prop.pop("default", None)


class WireModel(BaseModel):
    """A JSON object on the wire: strict types, extra keys allowed, value-defaults always written."""

    model_config = ConfigDict(
        extra="allow",
        strict=True,
        defer_build=True,
        validate_default=False,
        json_schema_extra=_schema_extra,
    )

    if TYPE_CHECKING:  # set below and by each subclass: pydantic evaluates every annotation of
        # every base again for each subclass (~5 ms of ~180 classes, at every start)
        _always_written: ClassVar[frozenset[str]]
        _not_null: ClassVar[frozenset[str]]
        _tags: ClassVar[frozenset[str]]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        always: list[str] = []
        not_null: list[str] = []
        for name, f in cls.__pydantic_fields__.items():  # one pass: ~180 classes at every start
            if f.is_required():
                continue
            if f.default is not None:
                always.append(name)
            elif f.annotation is not Any:
                not_null.append(name)
        cls._always_written = frozenset(always)
        cls._not_null = frozenset(not_null)
        cls._tags = frozenset(n for n in _TAGS if n in cls._always_written)

    @model_validator(mode="before")
    @classmethod
    def _wire_rules(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict):
            for name in cls._not_null:
                if name in data and data[name] is None:
                    raise PydanticCustomError(
                        "null_not_allowed",
                        "field '{field}' may be left out but cannot be null",
                        {"field": name},
                    )
            if info.context and info.context.get("wire"):
                for name in cls._tags:
                    if name not in data:
                        raise PydanticCustomError(
                            "missing_tag", "field '{field}' is required", {"field": name}
                        )
        return data

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Any = None,
    ) -> bool | None:
        if not cls.__pydantic_complete__ and not force:
            for part in _parts_first(cls):  # complete parts are reused, not generated again
                part.model_rebuild(raise_errors=False)
            if _schema_code.complete(cls):  # its schema kept from an earlier run
                return True
        built = super().model_rebuild(
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=_parent_namespace_depth + 1,
            _types_namespace=_types_namespace,
        )
        if built and not force:
            _schema_code.keep(cls)
        return built

    def model_post_init(self, context: Any, /) -> None:
        if self._always_written:
            self.__pydantic_fields_set__.update(self._always_written)

    def to_wire(self) -> dict[str, Any]:
        """The plain-JSON dict of this model, as it goes on the wire."""
        return self.model_dump(mode="json", exclude_unset=True)

    def to_json(self) -> bytes:
        """One JSON document (no trailing newline) for this model."""
        return self.__pydantic_serializer__.to_json(self, exclude_unset=True)


WireModel._always_written = WireModel._not_null = WireModel._tags = frozenset()


def _parts_first(model: type[BaseModel]) -> list[type[BaseModel]]:
    """The models ``model``'s fields hold, at any depth, not built yet: each after its own parts."""
    order: list[type[BaseModel]] = []
    seen = {model}

    def visit(tp: Any) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp in seen:
                return
            seen.add(tp)
            for f in tp.__pydantic_fields__.values():
                visit(f.annotation)
            if not tp.__pydantic_complete__:
                order.append(tp)
            return
        for arg in get_args(tp):
            visit(arg)

    for f in model.__pydantic_fields__.values():
        visit(f.annotation)
    return order
