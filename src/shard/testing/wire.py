"""Check what test clients receive against the protocol: every message must parse as its event
model (``parse_event``) *and* validate against the JSON Schema ``shard schema`` publishes for its
``type``; the ``data`` of a successful response must fit its command's result model
(``shard.protocol.results.RESULT_MODELS``).

    with checking_wire() as check:
        ...  # every UnixClient / WsClient reads through it
    assert not check.problems(), check.problems()

Messages are only collected while the test runs and checked afterwards: a reader slowed by the check
would fall behind a streaming agent and be cut off by the daemon's outbound cap.

The schema check needs ``jsonschema`` (a dev dependency), imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from pydantic import ValidationError

from shard.protocol.codec import parse_event
from shard.protocol.errors import FrameError
from shard.protocol.results import RESULT_MODELS
from shard.protocol.schema import protocol_schema
from shard.testing.reader import MessageReader

_WIRE = {"wire": True}


class WireCheck:
    """Called with each received message; :meth:`problems` checks them all."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    def __call__(self, message: dict[str, Any]) -> None:
        self.received.append(message)

    def problems(self) -> list[str]:
        """A line for each received message that does not validate."""
        out = []
        for message in self.received:
            why = problem_with(message)
            if why is not None:
                out.append(f"{why}: {str(message)[:300]}")
        return out


def problem_with(message: dict[str, Any]) -> str | None:
    """Why ``message`` is not a valid event of the protocol, or None."""
    try:
        parse_event(message)
    except FrameError as exc:
        return f"parse_event refused it ({exc.message})"
    error = next(iter(_validator(message["type"]).iter_errors(message)), None)
    if error is not None:
        return f"shard schema refused it at {list(error.absolute_path)}: {error.message[:200]}"
    if message["type"] == "response" and message.get("success") and "data" in message:
        return _result_problem(message.get("command"), message["data"])
    return None


def _result_problem(command: Any, data: Any) -> str | None:
    models = RESULT_MODELS.get(command) if isinstance(command, str) else None
    if models is None:
        return f"a {command!r} response carries data, but that command has no result model"
    errors = []
    for model in models:
        try:
            model.model_validate(data, context=_WIRE)
            return None
        except ValidationError as exc:
            errors.append(f"{model.__name__}: {exc.errors(include_url=False)[0]['msg']}")
    return f"the {command} result fits no model ({'; '.join(errors)})"


@cache
def _validator(event_type: str) -> Any:
    """A Draft 2020-12 validator for one event type: its own definition, with every shared one."""
    from jsonschema import Draft202012Validator

    schema = _schema()
    # the schema's top level is one union per catalog: per-agent commands, orchestrator commands,
    # events; the events' is the one that has hello
    events = next(u for u in schema["anyOf"] if "hello" in u["discriminator"]["mapping"])
    target = events["discriminator"]["mapping"][event_type]
    return Draft202012Validator({"$defs": schema["$defs"], "$ref": target})


@cache
def _schema() -> dict[str, Any]:
    """``shard schema``'s document, built once per process (~0.2 CPU-s each time; a worker's tests
    receive some thirty event types)."""
    return protocol_schema()


@contextmanager
def checking_wire() -> Iterator[WireCheck]:
    """Every message any :class:`MessageReader` receives meanwhile goes through one WireCheck."""
    check = WireCheck()
    observers: list[Callable[[dict[str, Any]], None]] = MessageReader.observers
    observers.append(check)
    try:
        yield check
    finally:
        observers.remove(check)


def wire_checked() -> Iterator[None]:
    """The body of an autouse fixture: run the test, then fail it on any message a test client
    received that is not a valid event of ``shard schema`` (or whose success data does not fit its
    command's result)."""
    with checking_wire() as check:
        yield
    problems = check.problems()
    assert not problems, "the daemon sent messages that do not validate:\n" + "\n".join(problems)
