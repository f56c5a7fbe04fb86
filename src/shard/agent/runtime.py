"""The direct runtime: one agent's state and the per-agent commands of PROTOCOL §9.2 / §9.5.

A Runtime is transport-free. It takes inbound records through :meth:`Runtime.handle`, and sends every
outbound message through one ``sink`` callable, in order. It answers commands and runs the agent's
work — a run of turns (``shard.agent.turn``) or a manual compaction — as its one task at a time. The
pieces it holds do the rest: the transcript (``transcript.py``), the status line and event sink
(``sink.py``), the model selection (``selection.py``), and the request board (``permissions/``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from shard._version import PROTOCOL_VERSION, __version__
from shard.agent import ui
from shard.agent.catalog import ModelCatalog, ModelEntry
from shard.agent.compaction.tiers import manual_compact
from shard.agent.config.settings import Config
from shard.agent.mcp.host import McpHost
from shard.agent.message_queue import MessageQueue
from shard.agent.modes import ModeController
from shard.agent.permissions.board import RequestBoard, Responders
from shard.agent.permissions.gate import Gate
from shard.agent.permissions.headless import HeadlessPolicy
from shard.agent.sandbox.bwrap import for_config
from shard.agent.selection import ModelSelection, describe_model
from shard.agent.session.store import SessionStore
from shard.agent.session_ops import forked, listed
from shard.agent.sink import EventSink, Sink
from shard.agent.steering import StrictSteers
from shard.agent.tools.base import Tool, ToolContext
from shard.agent.tools.environment import tool_environment
from shard.agent.tools.recall import RecallTool
from shard.agent.tools.registry import build_tools, subagent_tools_for
from shard.agent.transcript import Transcript
from shard.agent.turn import Failed, Fatal, UserInput, drive, uncancel
from shard.agent.turn_context import TurnContext
from shard.protocol import agent_commands as cmd
from shard.protocol.agent_events import ErrorEvent, Hello, ModeChanged, Response, Sync
from shard.protocol.agent_results import (
    ListModesResult,
    QueuedResult,
    RuntimeSteerResult,
    SetModeResult,
    UnqueueResult,
)
from shard.protocol.agents import ModeDescriptor
from shard.protocol.base import WireModel
from shard.protocol.codec import error_response, parse_command
from shard.protocol.errors import ErrorCode, FrameError, ShardError
from shard.protocol.framing import Oversized
from shard.protocol.queue import Behavior

if TYPE_CHECKING:
    from shard.agent.boot import Prepared

DEFERRED = object()  # a command whose response is sent later, by the work it started


@dataclass(slots=True)
class _Work:
    """The runtime's one task: a run of turns, or a manual compaction."""

    kind: Literal["turns", "compaction"]
    task: asyncio.Task[None] = field(init=False)


class Runtime:
    def __init__(
        self,
        *,
        config: Config,
        catalog: ModelCatalog,
        store: SessionStore,
        cwd: Path,
        mode: str,
        model: ModelEntry | None,
        reasoning: str | None,
        tools: dict[str, Tool[Any]],
        sink: Sink,
        headless_policy: str = "deny",
        headless_timeout: float = 300.0,
        has_responder: bool = True,
        instructions: str | None = None,
        mcp: McpHost | None = None,
    ) -> None:
        self.config = config
        self.cwd = cwd
        self.tools = tools
        self.modes = ModeController(active=mode)
        self.events = EventSink(sink)
        self.emit = self.events.emit
        self.transcript = Transcript(store, config.home)
        self.models = ModelSelection(
            config=config,
            catalog=catalog,
            model=model,
            reasoning=reasoning,
            record=self.transcript.record,
            emit=self.emit,
        )
        self.queue = MessageQueue(self.events, self.transcript.record)  # steers and follow-ups
        self.strict = StrictSteers()
        self.work: _Work | None = None
        self.idle = asyncio.Event()
        self.idle.set()
        self.failed_turns = 0
        # Permission and UI requests (PROTOCOL §9.5) and who can answer them.
        self.board = RequestBoard(
            self.events,
            responders=Responders(present=has_responder),
            headless=HeadlessPolicy(headless_policy, headless_timeout),
            record=self.transcript.record_answer,  # answers are kept for a reloaded client's cards
        )
        self.gate = Gate(self.modes, self.board, self.transcript)
        self.spill_dir = store.path.parent / "spill"
        self.tool_env = tool_environment(config)
        self.tools.setdefault("recall", RecallTool(self.transcript.entries_of))
        self._turns = TurnContext(
            transcript=self.transcript,
            events=self.events,
            models=self.models,
            tools=self.tools,
            approve=self.gate.check,
            tool_context=self.tool_context,
            queue=self.queue,
            strict=self.strict,
            cwd=cwd,
            modes=self.modes,
            retry=config.retry,
            compaction=config.compaction,
            instructions=instructions,
            context=store.header.get("context"),
            prepare=mcp.prepare if mcp is not None else None,
        )

    @classmethod
    def from_prepared(
        cls,
        prepared: Prepared,
        *,
        sink: Sink,
        has_responder: bool = True,
        tools: dict[str, Tool[Any]] | None = None,
        mcp: McpHost | None = None,
    ) -> Runtime:
        """The runtime for what start-up decided (``shard agent --stdio``, ``shard run``, tests)."""
        runtime = cls(
            config=prepared.config,
            catalog=prepared.catalog,
            store=prepared.store,
            cwd=prepared.cwd,
            mode=prepared.mode,
            model=prepared.model,
            reasoning=prepared.reasoning,
            tools=tools
            if tools is not None
            else build_tools(
                prepared.config.tool_extensions,
                allow=list(prepared.options.tools) if prepared.options.tools is not None else None,
                hosted=subagent_tools_for(prepared.options.agent_id, prepared.cwd, prepared.config.home),
            ),
            sink=sink,
            headless_policy=prepared.options.headless_policy,
            headless_timeout=prepared.config.headless_timeout,
            has_responder=has_responder,
            instructions=prepared.instructions,
            mcp=mcp,
        )
        runtime.transcript.record_planned(prepared.unfinished)  # what a dead runtime left open
        return runtime

    # --- outbound -----------------------------------------------------------------------------

    @property
    def fatal(self) -> ShardError | None:
        return self.events.fatal

    def hello(self) -> Hello:
        caps = self.models.capabilities()
        return Hello(protocol_version=PROTOCOL_VERSION, server_version=__version__, capabilities=caps)

    def sync(self) -> Sync:
        files = self.transcript.store.header.get("context_files")  # validated into models, not kept as dicts
        sync = Sync(
            status=self.events.status,
            mode=self.modes.active.name,
            capabilities=self.models.capabilities(),
            live_window=self.transcript.live_window(),
            pending_requests=self.board.pending(),
            session_id=self.transcript.session_id,
            queue=self.queue.snapshot(),
            **({"instructions": files} if files else {}),
            **({"model": describe_model(self.models.model)} if self.models.model else {}),  # its window
        )
        if self.transcript.streaming is not None:
            sync.streaming = self.transcript.streaming.snapshot()
        if self.events.detail is not None:
            sync.status_detail = self.events.detail
        return sync

    def respond(self, command: cmd.CommandBase, data: WireModel | None) -> None:
        response = Response(success=True)
        if command.id is not None:
            response.id = command.id
        response.command = command.type
        if data is not None:
            response.data = data.to_wire()
        self.emit(response)

    def start_background_work(self) -> None:
        """After sync: begin importing the active provider's SDK so the first prompt need not wait."""
        self.models.preload()

    # --- inbound ------------------------------------------------------------------------------

    async def handle(self, record: bytes | Oversized) -> None:
        """Answer one inbound record. Never raises for bad input: that is an INVALID_REQUEST."""
        try:
            command = parse_command(record)
        except FrameError as exc:
            self.emit(error_response(exc, id=exc.id, command=exc.command))
            return
        try:
            data = await self._dispatch(command)
        except ShardError as exc:
            self.emit(error_response(exc, id=command.id, command=command.type))
            return
        if data is not DEFERRED:
            self.respond(command, data)

    async def _dispatch(self, command: cmd.CommandBase) -> Any:
        if isinstance(command, cmd.Prompt | cmd.Steer):
            behavior = command.streaming_behavior if isinstance(command, cmd.Prompt) else "steer"
            source = (command.model_extra or {}).get("source")  # the daemon's name for the sender
            inp = UserInput(command.message, command.images)
            return self._accept_input(inp, behavior, source if isinstance(source, str) else None)
        if isinstance(command, cmd.SessionActivate):  # the daemon answers it; alone, no agents to make
            raise ShardError(
                ErrorCode.INVALID_REQUEST,
                "session.activate makes an agent of the daemon's (shard daemon); "
                "without one, start `shard agent --session ID`",
            )
        if isinstance(command, cmd.Unqueue):
            return UnqueueResult(withdrawn=self.queue.withdraw(command.queue_id))
        if isinstance(command, cmd.Abort):
            await self.abort()
            return None
        if isinstance(command, cmd.ListModes):
            return ListModesResult(
                modes=[ModeDescriptor(name=m.name, description=m.description) for m in self.modes.catalog()],
                active=self.modes.active.name,
            )
        if isinstance(command, cmd.SetMode):
            return self._set_mode(command.mode)
        if isinstance(command, cmd.ListModels):
            return await self.models.list_models()
        if isinstance(command, cmd.SetModel):
            return self.models.set_model(command.model)
        if isinstance(command, cmd.ListReasoningLevels):
            return self.models.list_reasoning_levels()
        if isinstance(command, cmd.SetReasoningLevel):
            return self.models.set_reasoning_level(command.model, command.effort)
        if isinstance(command, cmd.SessionOp):
            return self._session_op(command)
        if isinstance(command, cmd.RuntimeSync):
            return self.sync()
        if isinstance(command, cmd.RuntimeSteer):
            held = self.strict.accept(command.message, lambda result: self.respond(command, result))
            return DEFERRED if held else RuntimeSteerResult(status="conflict")
        if isinstance(command, cmd.RuntimeResponders):
            if command.present:
                self.board.responders.arrive()
            else:
                self.lose_responder(final=False)
            return None
        if isinstance(command, cmd.PermissionResponse | cmd.UiResponse):
            self.board.answer(command)  # an answer that does not fit raises INVALID_REQUEST
            return None
        raise ShardError(ErrorCode.INVALID_REQUEST, f"'{command.type}' is not handled here")

    def _set_mode(self, name: str) -> SetModeResult:
        previous = self.modes.active
        mode = self.modes.get(name)  # NOT_FOUND leaves the old mode in place
        if mode.name != previous.name:
            self.transcript.record("mode_change", mode=mode.name, previous=previous.name)
            self.modes.set(name)
            self.emit(ModeChanged(previous_mode=previous.name, mode=mode.name))
        return SetModeResult(previous_mode=previous.name, mode=mode.name)

    # --- prompt / steer / follow_up / abort (PROTOCOL §9.2) -----------------------------------

    @property
    def busy(self) -> bool:
        return self.work is not None

    @property
    def compacting(self) -> bool:
        """A manual compaction, or an automatic one inside the turns."""
        if self.work is None:
            return False
        return self.work.kind == "compaction" or self.events.status == "compacting"

    def _accept_input(self, inp: UserInput, behavior: Behavior | None, source: str | None) -> Any:
        """Start a turn, or queue the message while the agent works (the response's data says so)."""
        if self.fatal is not None:
            raise ShardError(self.fatal.code, f"the agent cannot continue: {self.fatal.message}")
        if self.busy:
            queued = self.queue.accept(inp.text, inp.images, behavior, self.compacting, source)
            return QueuedResult(queued=queued)
        self.models.require_model()
        self._start_turns(inp)
        return None

    def _start_turns(self, first: UserInput) -> None:
        async def turns() -> None:
            outcomes = await drive(self._turns, first)
            self.failed_turns += sum(isinstance(o, Failed | Fatal) for o in outcomes)

        self._start("turns", turns, on_unstarted=lambda: None)

    def _start(
        self,
        kind: Literal["turns", "compaction"],
        body: Callable[[], Awaitable[None]],
        on_unstarted: Callable[[], None],
    ) -> None:
        """Run ``body`` as the runtime's one task, wound down in one place (:meth:`_wind_down`).

        A task cancelled before its first step (an abort right behind the prompt) never runs a line
        of its coroutine, so its completion callback winds it down instead (``on_unstarted`` answers
        what the work owed); the callback also reports a crash rather than letting it pass unseen."""
        self.idle.clear()
        work = _Work(kind)

        async def run() -> None:
            try:
                await body()
            finally:
                self._wind_down(work)

        def finished(task: asyncio.Task[None]) -> None:
            if not task.cancelled() and (exc := task.exception()) is not None:
                sys.stderr.write(f"shard: the agent's work failed: {type(exc).__name__}: {exc}\n")
                self.emit(ErrorEvent(code=ErrorCode.INTERNAL_ERROR.value, message=str(exc), fatal=False))
            if self.work is work:
                on_unstarted()
                self._wind_down(work)

        work.task = asyncio.get_running_loop().create_task(run())
        work.task.add_done_callback(finished)
        self.work = work

    def _wind_down(self, work: _Work) -> None:
        """The work is over: idle (unless fatal), and a follow-up queued behind it starts. A fatal
        error hands back what is queued: the agent will deliver nothing more."""
        if self.work is not work:
            return
        self.work = None
        self.strict.end()
        if self.fatal is None:
            self.events.set_status("idle")
        else:
            self.queue.hand_back(self.queue.take_all(), "agent_failed", record=False)
        self.idle.set()
        if self.fatal is None and (follow_up := self.queue.take_follow_up()) is not None:
            self._start_turns(UserInput(follow_up.message, follow_up.images))

    async def abort(self, cause: Literal["aborted", "interrupted"] = "aborted") -> None:
        """Cancel the current work (a reply cut short records ``cause``) and wait until it has wound
        down; idle → nothing to do.

        Abort delivers nothing more: every queued message, steer or follow-up, is handed back to
        the clients (after the aborted turn's own entries, so the session reads in order)."""
        queued = self.queue.take_all()  # taken first: no follow-up starts as the work winds down
        self.strict.end()
        if self.work is not None:
            self._turns.stopping.cause = cause
            task = self.work.task
            task.cancel()
            await asyncio.wait({task})
        self.queue.hand_back(queued, cause, record=self.fatal is None)

    async def wait_idle(self) -> None:
        await self.idle.wait()

    def lose_responder(self, *, final: bool = True) -> None:
        """The last client able to answer requests is gone: the headless policy takes over.

        ``final`` (stdin closed: nobody can ever come back) settles waiting requests at once; a
        daemon client that dropped may reconnect, so requests already waiting then stay open until
        answered or the headless timeout (PROTOCOL §6.4); new ones get the headless answer at once.
        """
        self.board.responders.leave(final=final)

    # --- tools --------------------------------------------------------------------------------

    def tool_context(self, tool_call_id: str) -> ToolContext:
        async def ask_user(kind: str, **fields: Any) -> Any:
            return await ui.ask(self.board, kind, **fields)

        return ToolContext(
            cwd=self.cwd,
            spill_dir=self.spill_dir,
            env=self.tool_env,
            tool_call_id=tool_call_id,
            ui=ask_user,
            sandbox=for_config(self.config),
        )

    # --- session_op: list / compact / fork (PROTOCOL §9.2) ----------------------------------------

    def _session_op(self, command: cmd.SessionOp) -> Any:
        args = command.typed_args
        if command.op == "list":
            return listed(self.config.home, self.cwd)
        if self.busy:
            raise ShardError(
                ErrorCode.CONFLICT,
                f"session_op {command.op} runs between turns; a turn is queued or running (nothing was done)",
            )
        if command.op == "fork":
            assert isinstance(args, cmd.ForkArgs)
            return forked(
                self.transcript.store, args.from_entry_id, self.models.model, self.modes.active.name
            )
        assert isinstance(args, cmd.CompactArgs)
        self.models.summarizer()  # NOT_FOUND now, before any status change, if nothing can summarize

        def aborted() -> None:
            error = ShardError(ErrorCode.INTERNAL_ERROR, "compaction aborted; nothing was appended")
            self.emit(error_response(error, id=command.id, command=command.type))

        async def compaction() -> None:
            self.events.set_status("compacting")
            try:
                self.respond(command, await manual_compact(self._turns, args.keep_recent_tokens))
            except ShardError as exc:
                self.emit(error_response(exc, id=command.id, command=command.type))
            except asyncio.CancelledError:
                uncancel()
                aborted()

        self._start("compaction", compaction, on_unstarted=aborted)
        return DEFERRED
