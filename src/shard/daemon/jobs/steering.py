"""Strict active steer (PROTOCOL §10.3 ``subagent.steer``, the lease guard's human steer), sans-I/O.

A steer is accepted only while its run is ``active`` (its child's turn is running, possibly waiting
on a permission or UI answer). The child's runtime gets it as the internal ``runtime.steer``, which
binds it to the turn running at that moment: it is injected at that turn's next provider boundary,
or, when the turn ends first, dropped and answered ``conflict`` — never kept for a later turn, a
follow-up or a relaunch (R10.3.36 to R10.3.38). The answer goes out when the runtime gives it; the
connection is not held meanwhile (other commands on it are answered as they come). The message is
the parent's private words: it is never logged or echoed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from shard.daemon import wire
from shard.daemon.desk import Desk
from shard.daemon.effects import Client
from shard.daemon.jobs import handles
from shard.daemon.jobs.model import Run
from shard.daemon.slot import Answer
from shard.protocol import commands as cmd
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.ids import new_id
from shard.protocol.results import SubagentSteerResult

Outcome = tuple[str, str | None]  # ("injected" | "conflict", turn_id)


def steerable(target: handles.Target, leases: Mapping[str, Run]) -> Run:
    """The run a ``subagent.steer`` target names, when it may be steered now; CONFLICT otherwise
    (R10.3.34, R10.3.35). Unknown and other parents' targets were NOT_FOUND already."""
    if target.job is not None:
        raise ShardError(ErrorCode.INVALID_REQUEST, "steer takes a run_id, agent_id or alias, not a job")
    run = target.run
    if run is None:
        raise ShardError(ErrorCode.CONFLICT, f"{target.agent_id} has no run to steer")
    if run.state != "active" or leases.get(run.agent_id) is not run:
        raise ShardError(ErrorCode.CONFLICT, f"run {run.run_id} is {run.state}, not active: nothing to steer")
    return run


def send(desk: Desk, run: Run, message: str, then: Callable[[Outcome | ShardError], None]) -> None:
    """Hand the steer to the run's child; ``then`` gets how it ended, or the runtime's error."""
    slot = desk.agents.get(run.agent_id)
    if slot is None:
        then(("conflict", None))
        return

    def answered(answer: Answer) -> None:
        data, error = answer.data, answer.error
        if answer.success:
            injected = data.get("status") == "injected"
            then(("injected", data.get("turn_id")) if injected else ("conflict", None))
        elif error is not None and error.get("code") in ErrorCode.__members__:
            then(ShardError(ErrorCode(error["code"]), str(error.get("message", ""))))
        else:  # the runtime went away: its turn is over
            then(("conflict", None))

    desk.ask(slot, cmd.RuntimeSteer(message=message), answered)


def subagent_steer(desk: Desk, client: Client, c: cmd.SubagentSteer, run: Run) -> None:
    """Answer ``subagent.steer`` once the child's runtime has (R10.3.39)."""
    correlation_id = new_id("steer")

    def then(outcome: Outcome | ShardError) -> None:
        if isinstance(outcome, ShardError):
            desk.send(client, wire.failure(outcome, id=c.id, command=c.type))
            return
        status, turn_id = outcome
        result = SubagentSteerResult.model_validate(
            {"status": status, "run_id": run.run_id, "correlation_id": correlation_id}
            | ({"turn_id": turn_id} if turn_id else {})
        )
        desk.send(client, wire.reply(c, result))

    send(desk, run, c.message, then)


def human_steer(desk: Desk, client: Client, command: cmd.Steer, run: Run) -> None:
    """A person's ``steer`` to a leased child goes the same strict way: answered with success once it
    was injected into the run's turn, CONFLICT when that turn ended first (R10.3.70)."""
    if command.images:
        raise ShardError(ErrorCode.INVALID_REQUEST, "a steer into a job's run takes text only, no images")
    if run.state != "active":
        raise ShardError(ErrorCode.CONFLICT, f"the run of {run.agent_id} is not active; nothing to steer")

    def then(outcome: Outcome | ShardError) -> None:
        if isinstance(outcome, ShardError):
            error = outcome
        elif outcome[0] == "injected":
            desk.send(client, wire.reply(command, agent_id=run.agent_id))
            return
        else:
            error = ShardError(ErrorCode.CONFLICT, f"the turn of run {run.run_id} ended before the steer")
        desk.send(client, wire.failure(error, id=command.id, command=command.type))

    send(desk, run, command.message, then)
