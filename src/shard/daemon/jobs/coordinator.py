"""The job coordinator (PROTOCOL §10.3, §12.5), sans-I/O: it answers ``subagent.*`` commands and
drives runs through its desk (``shard.daemon.desk``), a department like the orchestrator.

* **Who is the parent.** ``parent_agent_id`` (payload, R5.2.5) names the owning durable parent; it
  must be an agent of the registry (NOT_FOUND). The daemon has one trust level (§4.3), so any daemon
  connection may speak for a parent — a runtime's own ``subagent`` tool and a plain client alike. A
  connection that sends a ``subagent.*`` command for a parent becomes one of that parent's *job
  connections* until it closes; ``subagent_run_changed`` goes to those and to the connections
  attached to the parent.
* **create** validates everything first, then commits the job, its runs and its children's Agent rows
  in one transaction (a full disk leaves nothing), answers, and only then starts runs (R10.3.17 to R10.3.19).
* **A run**: ``queued → starting`` (its child's runtime is started) ``→ active`` (the runtime
  accepted the task as a ``prompt``) ``→ completed`` at the turn's ``turn_end`` (``failed`` when the
  turn reported an ``error`` or the runtime exited). Every transition is persisted, then told; a
  terminal one is then reported into the parent's conversation (``delivery.py``).
* **Children** take a definition when their task's name has one (``children.py``).
* **Steer** is strict: only into the active run's current turn (``steering.py``).
* **Stop** cancels at once (the record is ``cancelled`` when the response goes) and then brings a
  live child to rest: ``abort`` now, closing its stdin after :data:`GRACE` seconds if it is still
  busy, ``SIGKILL`` after another :data:`GRACE`.
* **Lease guard**: a child with a queued or live run refuses a direct ``prompt`` (CONFLICT); a
  direct ``abort`` stops the run through the same path as ``subagent.stop``; a ``steer`` takes the
  strict path of ``subagent.steer``; permission and UI answers are never held.
* **Restart**: a daemon that starts with nonterminal runs marks them ``interrupted`` (the rest of a
  chain ``cancelled``), replays nothing, and reports them to their parents once it serves. A
  daemon shutting down ends no run, starts none and reports nothing: the turns its runtimes' stop
  cuts short are not completions, so it leaves them to the next daemon.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from shard.daemon import wire
from shard.daemon.desk import Department, Desk
from shard.daemon.effects import CancelTimer, Client, Effect, Log, Send, StartTimer, TimerKey
from shard.daemon.jobs import children, handles, requests, steering, views
from shard.daemon.jobs.delivery import Delivery
from shard.daemon.jobs.model import Job, Run, reconcile
from shard.daemon.jobs.settings import DEFAULT_MAX_CHILDREN, DEFAULT_POLICY, JobSettings
from shard.daemon.jobs.store import JobStore
from shard.daemon.jobs.timers import Deadline, Kill, Quiet, Report, WaitEnd
from shard.daemon.jobs.waits import Waits
from shard.daemon.lifecycle import ACTIVE_STATUSES
from shard.daemon.slot import AgentSlot, Answer
from shard.protocol import commands as cmd
from shard.protocol.agents import AgentStatus
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.figures import tokens_in
from shard.protocol.ids import new_id
from shard.protocol.jobs import RunState
from shard.protocol.results import (
    CancelledRun,
    SubagentCreateResult,
    SubagentRelaunchResult,
    SubagentRunHandle,
    SubagentStopResult,
)

GRACE = 5.0  # seconds between abort, closing stdin and SIGKILL when a live run is stopped


class Coordinator(Department):
    def __init__(self, desk: Desk, store: JobStore) -> None:
        self.desk = desk
        self.store = store
        self.policy = DEFAULT_POLICY
        self.run_timeout: float | None = None  # seconds a run may take; None: no deadline
        self.max_children = DEFAULT_MAX_CHILDREN  # durable children per parent
        self.jobs: dict[str, Job] = {}  # oldest first
        self.leases: dict[str, Run] = {}  # child agent_id -> its queued or live run
        self.job_conns: dict[str, set[Client]] = {}  # parent agent_id -> its job connections
        self.waits = Waits(desk)
        for job in sorted(store.load_jobs(), key=lambda j: j.created_at):
            self.jobs[job.job_id] = job
            self._reconcile(job)
        self.delivery = Delivery(desk, self.jobs, self._persist)

    def configure(self, settings: JobSettings) -> None:
        self.policy, self.run_timeout = settings.policy, settings.run_timeout
        self.max_children = settings.max_children

    def startup(self) -> None:
        """The daemon is serving: tell parents of runs that ended unreported (interrupted by the
        restart, or ended just before a crash)."""
        self.delivery.undelivered()

    # --- commands -------------------------------------------------------------------------------

    def handle(self, client: Client, command: cmd.SubagentCommand) -> None:
        parent = self.desk.slot(command.parent_agent_id)  # NOT_FOUND: no such durable parent
        self.job_conns.setdefault(parent.agent_id, set()).add(client)
        if isinstance(command, cmd.SubagentCreate):
            self._create(client, command, parent)
        elif isinstance(command, cmd.SubagentStatus):
            self._status(client, command, parent)
        elif isinstance(command, cmd.SubagentWait):
            self._wait(client, command, parent)
        elif isinstance(command, cmd.SubagentStop):
            self._stop_command(client, command, parent)
        elif isinstance(command, cmd.SubagentRelaunch):
            self._relaunch(client, command, parent)
        elif isinstance(command, cmd.SubagentSteer):
            run = steering.steerable(
                handles.resolve(command.target, *self._scope(parent.agent_id)), self.leases
            )
            steering.subagent_steer(self.desk, client, command, run)
        else:
            raise ShardError(
                ErrorCode.INVALID_REQUEST, f"'{command.type}' is not available in this daemon yet"
            )

    def _create(self, client: Client, c: cmd.SubagentCreate, parent: AgentSlot) -> None:
        b, p = self.desk, parent.record
        specs = requests.create_specs(c, p.depth, self.policy)  # everything checked, nothing done
        siblings = [s.record.alias for s in b.agents.values() if s.record.parent_agent_id == p.agent_id]
        requests.check_room(p.agent_id, len(siblings), len(specs), self.max_children)
        strategy, catalog = c.strategy or "single", b.manifests.catalog()
        launch = children.launch(c.model, c.provider, c.mode, catalog, c.host)
        taken = [a for a in siblings if a is not None]
        now = b.now()
        job = Job(new_id("job"), p.agent_id, strategy, now)
        records = []
        for i, (name, task) in enumerate(specs):
            spec = children.checked(self.store.definition(p.cwd, name), launch, catalog)
            alias = children.alias_for(name, spec, taken)
            taken.append(alias)
            record = children.child_record(p, alias, spec, launch, now)
            records.append(record)
            job.runs.append(
                Run(
                    new_id("run"),
                    job.job_id,
                    i,
                    name,
                    task,
                    record.agent_id,
                    alias,
                    definition_name=record.definition_name,
                    display_name=record.display_name,
                )
            )
        self.store.commit_job(job, records)  # first: a refusal leaves nothing behind
        self.jobs[job.job_id] = job
        for record in records:
            b.admit(record)
        for run in job.runs:
            self.leases[run.agent_id] = run
        runs = [
            SubagentRunHandle.model_validate({"index": r.index, "name": r.name, **views.handle(r)})
            for r in job.runs
        ]
        b.send(client, wire.reply(c, SubagentCreateResult(job_id=job.job_id, strategy=strategy, runs=runs)))
        self._pump(p.agent_id)

    def _relaunch(self, client: Client, c: cmd.SubagentRelaunch, parent: AgentSlot) -> None:
        """A new job of one run on the same durable child — its session, configuration and alias —
        once it has no queued or live run (R10.3.40 to R10.3.47)."""
        jobs, kids = self._scope(parent.agent_id)
        target = handles.resolve(c.target, jobs, kids)
        if target.agent_id is None:  # a job id names no single child
            raise ShardError(
                ErrorCode.INVALID_REQUEST, "relaunch takes an agent_id, run_id or alias, not a job"
            )
        if target.agent_id in self.leases:
            raise ShardError(ErrorCode.CONFLICT, f"{target.agent_id} already has a queued or active run")
        requests.check_task(c.task, 0)
        alias = kids[target.agent_id]
        record = self.desk.agents[target.agent_id].record
        job = Job(new_id("job"), parent.agent_id, "single", self.desk.now())
        run = Run(
            new_id("run"),
            job.job_id,
            0,
            target.run.name if target.run else alias,
            c.task,
            target.agent_id,
            alias,
            definition_name=record.definition_name,
            display_name=record.display_name,
        )
        job.runs.append(run)
        self.store.commit_job(job, [])  # first: a refusal leaves nothing behind
        self.jobs[job.job_id] = job
        self.leases[run.agent_id] = run
        result = SubagentRelaunchResult.model_validate({"job_id": job.job_id, **views.handle(run)})
        self.desk.send(client, wire.reply(c, result))
        self._pump(parent.agent_id)

    def _status(self, client: Client, c: cmd.SubagentStatus, parent: AgentSlot) -> None:
        jobs, children = self._scope(parent.agent_id)
        self.desk.send(client, wire.reply(c, views.status(parent.agent_id, jobs, children, c.targets)))

    def _wait(self, client: Client, c: cmd.SubagentWait, parent: AgentSlot) -> None:
        jobs, kids = self._scope(parent.agent_id)
        self.waits.start(client, c, views.wait_runs(c.handles, jobs, kids))  # fixed: no later relaunch

    def _stop_command(self, client: Client, c: cmd.SubagentStop, parent: AgentSlot) -> None:
        jobs, children = self._scope(parent.agent_id)
        target = handles.resolve(c.handle, jobs, children)
        if target.job is not None:
            job: Job | None = target.job
            runs = [r for r in target.job.runs if not r.terminal]
            if target.job.stopped_at is None:
                target.job.stopped_at = self.desk.now()
        else:
            run = target.run
            job = self.jobs[run.job_id] if run else None
            runs = self._with_dependents(job, run) if job and run and not run.terminal else []
        cancelled = self._cancel(job, runs, "stopped by its parent") if job else []
        result = SubagentStopResult(
            cancelled=[CancelledRun(run_id=r.run_id, agent_id=r.agent_id, state=r.state) for r in cancelled],
            **({"job_id": job.job_id} if job else {}),
        )
        self.desk.send(client, wire.reply(c, result))
        self._settled(job.parent_agent_id if job else parent.agent_id)

    # --- runs -----------------------------------------------------------------------------------

    def _pump(self, parent_id: str) -> None:
        """Start every queued run that may start: a chain's next step once the one before it has
        completed; other runs while the parent has fewer than ``maxTasks`` runs live."""
        if self.desk.shutting_down:
            return  # nothing starts while the daemon goes down; the next one settles what is left
        for job in [j for j in self.jobs.values() if j.parent_agent_id == parent_id]:
            for run in job.runs:
                live = sum(
                    1
                    for r in self.leases.values()
                    if r.state in ("starting", "active") and self.jobs[r.job_id].parent_agent_id == parent_id
                )
                if live >= self.policy.maxTasks:
                    return
                if run.state == "queued" and (job.strategy != "chain" or job.chain_step == run.index):
                    self._start(job, run)

    def _start(self, job: Job, run: Run) -> None:
        slot = self.desk.agents.get(run.agent_id)
        if slot is None:
            self._end(job, run, "failed", "the child agent is gone")
            return
        self._transition(job, run, "starting")
        if self.run_timeout is not None:
            run.deadline = self.desk.now() + self.run_timeout
            self.desk.emit(StartTimer(Deadline(run.run_id), self.run_timeout))

        def started(error: ShardError | None) -> None:
            if run.state != "starting":
                return  # stopped or timed out meanwhile: the runtime comes up idle and is reaped
            if error is not None:
                self._end(job, run, "failed", f"the child's runtime did not start ({error.code})")
                return
            parent, mode = (
                self.desk.agents.get(job.parent_agent_id),
                slot.record.mode or children.DEFAULT_MODE,
            )
            narrowed = children.stricter_mode(parent.record.mode if parent else None, mode)
            if (
                narrowed is not None and narrowed != mode
            ):  # the parent is stricter now (a relaunch, a chain step)
                self.desk.ask(slot, cmd.SetMode(mode=narrowed))  # before the task
            self.desk.ask(slot, cmd.Prompt(message=run.task), lambda answer: self._accepted(job, run, answer))

        try:
            self.desk.ensure_running(slot, started)
        except ShardError as exc:
            self._end(job, run, "failed", f"the child's runtime could not start ({exc.code})")

    def _accepted(self, job: Job, run: Run, answer: Answer) -> None:
        if run.state != "starting":
            return
        if answer.success:
            self._transition(job, run, "active")
        else:
            self._end(job, run, "failed", "the child's runtime did not accept the task")

    def event(self, agent_id: str, status: AgentStatus, event: Mapping[str, Any]) -> Iterable[Effect]:
        """Every agent's events (an internal subscriber): a leased child's turn ends its run."""
        run = self.leases.get(agent_id)
        if run is None or run.state != "active":
            return ()
        kind = event.get("type")
        if kind == "message_complete":
            message = event.get("message") or {}
            if message.get("role") == "assistant":
                texts = [b.get("text", "") for b in message.get("content", []) if b.get("type") == "text"]
                run.final_text = "".join(texts) or run.final_text
        elif kind == "error" and not run.error:
            run.error = f"the child's turn failed ({event.get('code')})"  # the code only: messages may quote
        elif kind == "turn_end":
            usage = event.get("usage") or {}
            run.usage_in += tokens_in(usage)  # every input token, those read from a cache included
            run.usage_out += int(usage.get("output", 0))
            self._end(self.jobs[run.job_id], run, "failed" if run.error else "completed", run.error)
            self._settled(self.jobs[run.job_id].parent_agent_id)
        return ()

    def removing(self, agent_ids: Sequence[str]) -> None:
        """agent.remove: the queued or live runs of these agents are cancelled, their parents told."""
        runs = [r for a in agent_ids if (r := self.leases.get(a)) is not None]
        for run in runs:
            job = self.jobs[run.job_id]
            rest = [r for r in self._with_dependents(job, run) if not r.terminal]
            self._cancel(job, rest, "its agent was removed")
        for parent_id in {self.jobs[r.job_id].parent_agent_id for r in runs}:
            self._settled(parent_id)

    def child_exited(self, agent_id: str) -> None:
        """A leased child's runtime exited while its run was live: the run failed."""
        run = self.leases.get(agent_id)
        if run is not None and run.state == "active":
            job = self.jobs[run.job_id]
            self._end(job, run, "failed", "the child's runtime exited during the run")
            self._settled(job.parent_agent_id)

    def _end(self, job: Job, run: Run, state: RunState, error: str | None = None) -> None:
        """A run reached a terminal state; a chain's remaining steps are cancelled unless it completed."""
        if self.desk.shutting_down:
            return  # its runtime is being stopped with the daemon: the next daemon marks it interrupted
        if error:
            run.error = error
        if job.strategy == "chain" and state != "completed":
            rest = [r for r in job.runs if r.index > run.index and not r.terminal]
            self._transition(job, run, state)
            self._cancel(job, rest, f"step {run.index} of the chain did not complete")
        else:
            self._transition(job, run, state)

    def _with_dependents(self, job: Job, run: Run) -> list[Run]:
        if job.strategy != "chain":
            return [run]
        return [run, *[r for r in job.runs if r.index > run.index and not r.terminal]]

    def _cancel(self, job: Job, runs: list[Run], why: str) -> list[Run]:
        for run in runs:
            live = run.state in ("starting", "active")
            run.error = run.error or why
            self._transition(job, run, "cancelled")
            if live:
                self._quiet(run.agent_id)
        return runs

    def _transition(self, job: Job, run: Run, state: RunState) -> None:
        """Move, persist, then tell the parent's connections (R10.3.61)."""
        previous = run.move(state, self.desk.now())
        if run.terminal:
            if self.leases.get(run.agent_id) is run:
                del self.leases[run.agent_id]
            self.desk.emit(CancelTimer(Deadline(run.run_id)))
        self._persist(job, [run])  # first: the event tells of a persisted transition
        conns = self._parent_conns(job.parent_agent_id)
        if conns:
            self.desk.emit(Send(conns, views.run_changed(job, run, previous)))
        if run.terminal:
            self.delivery.ended(run)

    def _persist(self, job: Job, runs: list[Run]) -> None:
        try:
            self.store.save_runs(job, runs)
        except ShardError as exc:  # a runtime's event cannot be refused: said, and memory goes on
            self.desk.emit(Log(f"shard daemon: job {job.job_id}: {exc.message}"))

    def _settled(self, parent_id: str) -> None:
        """Runs ended: answer the waits now complete, and start what may start."""
        self.waits.settled()
        self._pump(parent_id)

    # --- stopping a live child: abort, then graceful, then kill (R10.3.58) ----------------------

    def _quiet(self, agent_id: str) -> None:
        slot = self.desk.agents.get(agent_id)
        if slot is not None and slot.live:
            self.desk.ask(slot, cmd.Abort())
            self.desk.emit(StartTimer(Quiet(agent_id), GRACE))

    def timer(self, key: TimerKey) -> None:
        if isinstance(key, Report):
            self.delivery.timer(key)
        elif isinstance(key, WaitEnd):
            self.waits.timer(key)
        elif isinstance(key, Deadline):
            run = next((r for r in self.leases.values() if r.run_id == key.run_id), None)
            if run is not None:
                job = self.jobs[run.job_id]
                live = run.state in ("starting", "active")
                self._end(job, run, "timed_out", "the run passed its deadline")
                if live:
                    self._quiet(run.agent_id)
                self._settled(job.parent_agent_id)
        elif isinstance(key, Quiet | Kill):
            slot = self.desk.agents.get(key.agent_id)
            if slot is None or self.leases.get(slot.agent_id) is not None:
                return  # gone, or leased again by new work
            if isinstance(key, Quiet) and slot.live and slot.status in ACTIVE_STATUSES:
                self.desk.stop(slot)
                self.desk.emit(StartTimer(Kill(slot.agent_id), GRACE))
            elif isinstance(key, Kill) and slot.gen is not None:
                self.desk.kill(slot, force=True)

    # --- the lease guard (R10.3.68 to R10.3.71) ----------------------------------------------------

    def guard(self, client: Client, slot: AgentSlot, command: cmd.AgentCommand) -> bool:
        """True when the command was handled here (a leased child's abort); raises when refused."""
        run = self.leases.get(slot.agent_id)
        if run is None:
            return False
        if isinstance(command, cmd.Prompt):
            raise ShardError(
                ErrorCode.CONFLICT, f"{slot.agent_id} is running a job's run; it takes no prompt"
            )
        if isinstance(command, cmd.Steer):
            steering.human_steer(self.desk, client, command, run)
            return True
        if isinstance(command, cmd.Abort):
            job = self.jobs[run.job_id]
            self._cancel(job, self._with_dependents(job, run), "aborted by a client")
            self.desk.send(client, wire.reply(command, agent_id=slot.agent_id))
            self._settled(job.parent_agent_id)
            return True
        return False

    # --- connections, scope, restart ------------------------------------------------------------

    def disconnected(self, client: Client) -> None:
        """A closed connection: its waits end (never the runs, R10.3.29)."""
        for conns in self.job_conns.values():
            conns.discard(client)
        self.waits.disconnected(client)

    def _parent_conns(self, parent_id: str) -> tuple[Client, ...]:
        parent = self.desk.agents.get(parent_id)
        attached = set(parent.attachments) if parent else set()
        return tuple(c for c in attached | self.job_conns.get(parent_id, set()) if not c.closed)

    def _scope(self, parent_id: str) -> tuple[list[Job], dict[str, str]]:
        """The parent's own jobs (oldest first) and direct children (agent_id → alias)."""
        jobs = [j for j in self.jobs.values() if j.parent_agent_id == parent_id]
        children = {
            s.agent_id: s.record.alias or s.agent_id
            for s in self.desk.agents.values()
            if s.record.parent_agent_id == parent_id
        }
        return jobs, children

    def _reconcile(self, job: Job) -> None:
        """After a daemon restart: live work was lost with the old process (R10.3.75, R10.3.76)."""
        changed = reconcile(job, self.desk.now())
        if changed:
            self._persist(job, changed)
