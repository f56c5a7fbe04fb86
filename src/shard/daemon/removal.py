"""``agent.remove`` (additive to PROTOCOL §10.1), sans-I/O: an agent and its subagents leave the
registry; every session file stays, listed by ``session_op list`` and ``shard sessions`` and
reopened by ``agent.create {session_id}``.

The decisions, case by case:

* **A running agent** is stopped first, not refused: the command is a person's deliberate act
  (every client confirms it first), and refusing would leave them to find Kill, wait, and try again.
  The runtime gets SIGTERM — it aborts its turn, records the partial reply as ``aborted``, and
  exits — and SIGKILL after :data:`GRACE` seconds if it has not. A start under way is let finish and
  then stopped; a queued start is cancelled (its waiters get CONFLICT). The answer comes once every
  runtime of the removal has exited. From the command on the agent takes no new work: anything that
  would start its runtime (attach, prompt, a job's run, a completion report) is CONFLICT.
* **Subagents** go with it: every descendant (by ``parent_agent_id``), whose requests would
  otherwise be delegated to nobody and whose jobs could no longer be reached. They are removed
  deepest first, the named agent last; the answer lists them in that order.
* **Jobs**: a queued or live run of a removed agent is cancelled ("its agent was removed") through
  the coordinator's own path, so a parent that stays hears of it as of any cancelled run. Job and
  run records stay in ``state.db`` as history; a removed parent's reports are dropped.
* **Workspaces** stay, with their worktree and branch: an agent's binding to its workspace is only
  that agent, so the workspace lists one agent fewer (``workspace.attach`` adds a fresh one, and
  ``workspace.retire`` retires it as ever).
* **Telling**: each agent that leaves is told to every connection as ``agent_removed {agent_id,
  session_id}`` (plus the ``agent_status_changed {detail: "forgotten"}`` that older clients know);
  attachments to it end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from shard.daemon import wire
from shard.daemon.desk import OrchestratorDesk
from shard.daemon.effects import Client
from shard.daemon.slot import AgentSlot
from shard.protocol import commands as cmd
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.results import AgentRemoveResult

GRACE = 5.0  # seconds between SIGTERM and SIGKILL for a runtime being removed


def subtree(agents: Mapping[str, AgentSlot], root: AgentSlot) -> list[AgentSlot]:
    """``root``'s descendants deepest first, then ``root`` (a cycle cannot make it loop)."""
    levels: list[list[AgentSlot]] = [[root]]
    seen = {root.agent_id}
    while True:
        parents = {s.agent_id for s in levels[-1]}
        kids = [s for s in agents.values() if s.record.parent_agent_id in parents and s.agent_id not in seen]
        if not kids:
            break
        seen.update(s.agent_id for s in kids)
        levels.append(kids)
    return [slot for level in reversed(levels) for slot in level]


def remove(desk: OrchestratorDesk, client: Client, command: cmd.AgentRemove) -> None:
    b = desk
    root = b.slot(command.agent_id)
    if root.removing:
        raise ShardError(ErrorCode.CONFLICT, f"{root.agent_id} is already being removed")
    doomed = subtree(b.agents, root)
    for slot in doomed:
        slot.removing = True
    b.removing([s.agent_id for s in doomed])

    def done() -> bool:
        return all(s.gen is None and not s.start_pending for s in doomed)

    def finish() -> None:
        if not done() or not client.waiting:
            return
        removed = [s.agent_id for s in doomed if s.agent_id in b.agents]
        try:
            for slot in doomed:
                if slot.agent_id in b.agents:
                    b.forget(slot)
        except ShardError:  # the registry refused: what is left is an agent again, not a ghost
            for slot in doomed:
                slot.removing = False
            raise
        b.send(client, wire.reply(command, AgentRemoveResult(removed=removed)))
        b.resume(client)

    def stopped() -> None:
        b.step(client, command, finish)

    client.waiting = True
    for slot in doomed:
        _stop(b, slot, stopped)
    stopped()


def _stop(b: OrchestratorDesk, slot: AgentSlot, then: Callable[[], None]) -> None:
    """Bring ``slot`` to no process and no start; ``then`` once it has none (not called when it has
    none already)."""
    if slot.gen is None and slot.start_pending:  # queued, not spawned: nothing to wait for
        b.cancel_start(slot, ShardError(ErrorCode.CONFLICT, f"{slot.agent_id} was removed"))
        return
    if slot.gen is None:
        return
    if slot.runtime.state == "starting":  # stopped once it is ready; a failed start leaves nothing

        def ready(error: ShardError | None) -> None:
            if error is None:
                _stop(b, slot, then)
            else:
                then()

        slot.ready_waiters.append(ready)
        return
    slot.exit_waiters.append(then)
    b.stop_now(slot, GRACE)
