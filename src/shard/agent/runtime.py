"""The direct runtime: one agent's state and the per-agent commands of PROTOCOL §9.2 / §9.5.

A Runtime is transport-free. It takes inbound records through :meth:`Runtime.handle`, and sends every
outbound message through one ``sink`` callable, in order. The turn loop itself lives in
``shard.agent.turn``; this module owns the state it works on — status, mode, model selection, the
steer and follow-up queues — and answers commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shard import _secrets
from shard._version import PROTOCOL_VERSION, __version__
from shard.agent import ui
from shard.agent.assembler import MessageAssembler
from shard.agent.catalog import ModelCatalog, ModelEntry, capabilities_for, key_variables
from shard.agent.compaction import estimate_tokens
from shard.agent.config import Config
from shard.agent.modes import ModeController
from shard.agent.permissions.allowances import Allowances
from shard.agent.permissions.board import InvalidAnswer, RequestBoard
from shard.agent.providers.base import Provider
from shard.agent.providers.registry import build_provider
from shard.agent.providers.sdk import preload
from shard.agent.session.fork import fork
from shard.agent.session.history import LiveView
from shard.agent.session.listing import list_sessions, title_of, write_meta
from shard.agent.session.store import SessionStore, find_session, load_entries
from shard.agent.status import StatusMachine
from shard.agent.tools.base import Tool, ToolContext
from shard.agent.tools.recall import RecallTool
from shard.agent.tools.registry import build_tools
from shard.protocol import commands as cmd
from shard.protocol.agents import AgentStatus, ModeDescriptor, ModelDescriptor, ReasoningLevel
from shard.protocol.base import WireModel
from shard.protocol.codec import error_response, parse_command
from shard.protocol.content import Image, Message
from shard.protocol.errors import ErrorCode, FrameError, ShardError, shown
from shard.protocol.events import (
    ErrorEvent,
    EventBase,
    Hello,
    LiveWindow,
    ModeChanged,
    ModelChanged,
    ReasoningLevelChanged,
    Response,
    Status,
    Sync,
)
from shard.protocol.framing import Oversized
from shard.protocol.results import (
    ForkResult,
    ListModelsResult,
    ListModesResult,
    ListReasoningLevelsResult,
    SessionListResult,
    SessionSummary,
    SetModelResult,
    SetModeResult,
    SetReasoningLevelResult,
)

if TYPE_CHECKING:
    from shard.agent.boot import Prepared

Sink = Callable[[EventBase], None]

NO_MODEL_HELP = (
    "No model is configured, so there is nothing to send the prompt to. Configure a provider in "
    "{config} — for example a local OpenAI-compatible server:\n\n"
    '    default_model = "local/qwen2.5-coder"\n\n'
    "    [[providers]]\n"
    '    name = "local"\n'
    '    kind = "openai"\n'
    '    base_url = "http://127.0.0.1:11434/v1"\n'
    '    models = [{{ id = "qwen2.5-coder", context_window = 32768 }}]\n\n'
    "or pick a model with --model (the offline demo is scripted/demo)."
)


@dataclass(frozen=True, slots=True)
class UserInput:
    text: str
    images: list[Image] | None = None


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
        tools: dict[str, Tool],
        sink: Sink,
        headless_policy: str = "deny",
        headless_timeout: float = 300.0,
        has_responder: bool = True,
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.store = store
        self.cwd = cwd
        self.tools = tools
        self.modes = ModeController(active=mode)
        self.status = StatusMachine()
        self._sink = sink
        self.view = LiveView(store.entries)
        # The selection clients see is `model`; the provider the next call uses is swapped in only
        # at a provider-call boundary (PROTOCOL §9.2 set_model).
        self.model: ModelEntry | None = model
        self.reasoning: str | None = reasoning
        self.provider: Provider | None = None
        self.provider_entry: ModelEntry | None = None
        self._next_provider: tuple[ModelEntry, Provider] | None = None
        # A default model whose provider cannot be built (say its key variable is unset) must not
        # stop the agent from starting: the problem is reported when a prompt needs the provider.
        self.provider_problem: ShardError | None = None
        if model is not None:
            try:
                self._next_provider = (model, build_provider(model, config))
            except ShardError as exc:
                self.provider_problem = exc
        self._status_detail: str | None = None
        self.steers: deque[UserInput] = deque()
        self.follow_ups: deque[UserInput] = deque()
        self.turn_task: asyncio.Task[None] | None = None
        self.idle = asyncio.Event()
        self.idle.set()
        self.failed_turns = 0
        self.fatal: ShardError | None = None
        # Permission and UI requests (PROTOCOL §9.5) and who can answer them.
        self.board = RequestBoard(self.emit)
        self.grants: list[Any] = [e.get("rule") for e in store.entries if e["kind"] == "grant"]
        self.headless_policy = headless_policy
        self.headless_timeout = headless_timeout
        self.has_responder = has_responder
        self.streaming: MessageAssembler | None = None  # the assistant message in flight, for sync
        self.allowances: Allowances | None = None  # shard run --allow / --yes-to-all: this run only
        self.responders_final = True
        self.responder_lost = asyncio.Event()
        self.spill_dir = store.path.parent / "spill"
        self.tool_env = tool_environment(config)
        # Compaction and session bookkeeping.
        self.compacting = False
        self._context_reported: int | None = None
        self._context_since = 0
        self._message_count = sum(1 for e in store.entries if e["kind"] in ("message", "tool_result"))
        self.assistant_messages = sum(
            1 for e in store.entries if e["kind"] == "message" and e["message"].get("role") == "assistant"
        )
        self._title: str | None = next(
            (
                _first_text(e["message"])
                for e in store.entries
                if e["kind"] == "message" and e["message"].get("role") == "user"
            ),
            None,
        )
        self.tools.setdefault("recall", RecallTool(self._entries_of))

    @classmethod
    def from_prepared(
        cls,
        prepared: Prepared,
        *,
        sink: Sink,
        has_responder: bool = True,
        tools: dict[str, Tool] | None = None,
    ) -> Runtime:
        """The runtime for what start-up decided (``shard agent --stdio``, ``shard run``, tests)."""
        return cls(
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
            ),
            sink=sink,
            headless_policy=prepared.options.headless_policy,
            headless_timeout=prepared.config.headless_timeout,
            has_responder=has_responder,
        )

    def _entries_of(self, session_id: str | None) -> list[dict[str, Any]]:
        """Entries of this session, or of another (a fork's source) for recall."""
        if session_id is None or session_id == self.store.session_id:
            return self.store.entries
        return load_entries(find_session(self.config.home, session_id))

    # --- outbound -----------------------------------------------------------------------------

    def emit(self, event: EventBase) -> None:
        self._sink(event)

    def set_status(self, status: AgentStatus, detail: str | None = None) -> None:
        """Emit ``status`` on every transition, and when only the detail changes (e.g. retrying)."""
        if self.status.move(status) or detail != self._status_detail:
            self._status_detail = detail
            event = Status(status=status)
            if detail is not None:
                event.detail = detail
            self.emit(event)

    def capabilities(self) -> list[str]:
        return capabilities_for(self.model)

    def hello(self) -> Hello:
        return hello_event(self.model)

    def sync(self) -> Sync:
        sync = Sync(
            status=self.status.current,
            mode=self.modes.active.name,
            capabilities=self.capabilities(),
            live_window=self._live_window(),
            pending_requests=self.board.pending(),
            session_id=self.store.session_id,
        )
        if self.streaming is not None:
            sync.streaming = self.streaming.snapshot()
        return sync

    def _live_window(self) -> LiveWindow:
        window = LiveWindow(messages=list(self.view.messages))
        if self.view.compaction_index is not None:
            window.compaction_index = self.view.compaction_index
        return window

    @property
    def model_view(self) -> list[Message]:
        """What the next provider request carries."""
        return self.view.model_messages

    def fail(self, error: ShardError) -> None:
        """A fatal error: report it once and refuse further work (status ``error``)."""
        if self.fatal is None:
            self.fatal = error
            self.emit(ErrorEvent(code=error.code.value, message=error.message, fatal=True))
            self.set_status("error")

    # --- session ------------------------------------------------------------------------------

    def record(self, kind: str, /, **fields: Any) -> dict[str, Any]:
        """Append an entry (before the event that reports it is sent) and keep the views current."""
        entry = self.store.append(kind, **fields)
        self.view.add(entry)
        if kind in ("message", "tool_result"):
            self._message_count += 1
            self._context_since += estimate_tokens(self.view.messages[-1])
            role = fields["message"].get("role") if kind == "message" else None
            if role == "assistant":
                self.assistant_messages += 1
            if self._title is None and role == "user":
                self._title = _first_text(fields["message"])
        return entry

    def record_message(self, message: Message, **extra: Any) -> dict[str, Any]:
        return self.record("message", entry_id=message.id, message=message.to_wire(), **extra)

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

    def respond(self, command: cmd.CommandBase, data: WireModel | None) -> None:
        response = Response(success=True)
        if command.id is not None:
            response.id = command.id
        response.command = command.type
        if data is not None:
            response.data = data.to_wire()
        self.emit(response)

    async def _dispatch(self, command: cmd.CommandBase) -> Any:
        if isinstance(command, cmd.Prompt):
            self._accept_input(UserInput(command.message, command.images), command.streaming_behavior)
            return None
        if isinstance(command, cmd.Steer):
            self._accept_input(UserInput(command.message, command.images), "steer")
            return None
        if isinstance(command, cmd.Abort):
            await self.abort()
            return None
        if isinstance(command, cmd.ListModes):
            return self._list_modes()
        if isinstance(command, cmd.SetMode):
            return self._set_mode(command.mode)
        if isinstance(command, cmd.ListModels):
            return self._list_models()
        if isinstance(command, cmd.SetModel):
            return self._set_model(command.model)
        if isinstance(command, cmd.ListReasoningLevels):
            return self._list_reasoning_levels()
        if isinstance(command, cmd.SetReasoningLevel):
            return self._set_reasoning_level(command.model, command.effort)
        if isinstance(command, cmd.SessionOp):
            return self._session_op(command)
        if isinstance(command, cmd.RuntimeSync):
            return self.sync()
        if isinstance(command, cmd.RuntimeResponders):
            if command.present:
                self.has_responder = True
                self.responder_lost.clear()
            else:
                self.lose_responder(final=False)
            return None
        if isinstance(command, cmd.PermissionResponse | cmd.UiResponse):
            # First valid answer wins; a late or unknown one is dropped silently (PROTOCOL §6.3).
            # The daemon names who answered (extra field "source"); a direct client is "client".
            source = (command.model_extra or {}).get("source")
            source = source if isinstance(source, str) and source else "client"
            try:
                if isinstance(command, cmd.PermissionResponse):
                    self.board.answer_permission(command, source=source)
                else:
                    self.board.answer_ui(command, source=source)
            except InvalidAnswer as exc:
                raise ShardError(ErrorCode.INVALID_REQUEST, str(exc)) from None
            return None
        raise ShardError(ErrorCode.INVALID_REQUEST, f"'{command.type}' is not handled here")

    # --- prompt / steer / follow_up / abort (PROTOCOL §9.2) -----------------------------------

    @property
    def busy(self) -> bool:
        return self.turn_task is not None

    def _accept_input(self, inp: UserInput, behavior: str | None) -> None:
        if self.fatal is not None:
            raise ShardError(self.fatal.code, f"the agent cannot continue: {self.fatal.message}")
        if self.busy:
            if behavior is None and self.compacting:
                behavior = "follow_up"  # a prompt sent during a compaction runs right after it
            if behavior is None:
                raise ShardError(
                    ErrorCode.INVALID_REQUEST,
                    "the agent is mid-turn: send the prompt with streaming_behavior "
                    "'steer' (deliver before the next model call) or 'follow_up' (deliver when "
                    "the agent stops), or use steer",
                )
            if behavior == "steer" and self.compacting:
                behavior = "follow_up"  # nothing to steer: no turn is running
            (self.steers if behavior == "steer" else self.follow_ups).append(inp)
            return
        if self.model is None:
            raise ShardError(
                ErrorCode.PROVIDER_ERROR,
                NO_MODEL_HELP.format(config=self.config.home / "config.toml"),
            )
        self.start_turn(inp)

    def start_turn(self, inp: UserInput) -> None:
        from shard.agent.turn import drive

        self._start_work(drive(self, inp), on_unstarted=lambda: None)

    def _start_work(self, work: Coroutine[Any, Any, None], on_unstarted: Callable[[], None]) -> None:
        """Run a turn or a compaction as the runtime's one task.

        Its own ``finally`` winds it down — but a task cancelled before its first step (an abort
        right after the prompt) never runs a line of its coroutine, so the task's completion checks
        that the cleanup happened, does it if not (``on_unstarted`` answers what the work owed), and
        reports a crash instead of letting it pass unobserved."""
        self.idle.clear()
        task = asyncio.get_running_loop().create_task(work)
        self.turn_task = task

        def finished(done: asyncio.Task[None]) -> None:
            if not done.cancelled() and (exc := done.exception()) is not None:
                sys.stderr.write(f"shard: the agent's work failed: {type(exc).__name__}: {exc}\n")
                self.emit(ErrorEvent(code=ErrorCode.INTERNAL_ERROR.value, message=str(exc), fatal=False))
            if self.turn_task is not done:
                return  # it wound itself down
            on_unstarted()
            self.turn_task = None
            self.compacting = False
            if self.fatal is None and self.status.current != "idle":
                self.set_status("idle")
            self.idle.set()

        task.add_done_callback(finished)

    async def abort(self) -> None:
        """Cancel the current turn and wait until it has wound down; idle → nothing to do."""
        task = self.turn_task
        self.steers.clear()
        self.follow_ups.clear()
        if task is None:
            return
        task.cancel()
        await asyncio.wait({task})

    async def wait_idle(self) -> None:
        await self.idle.wait()

    def lose_responder(self, *, final: bool = True) -> None:
        """The last client able to answer requests is gone: the headless policy takes over.

        ``final`` (stdin closed: nobody can ever come back) settles waiting requests at once; a
        daemon client that dropped may reconnect, so requests already waiting then stay open until
        answered or the headless timeout (PROTOCOL §6.4); new ones get the headless answer at once.
        """
        self.has_responder = False
        self.responders_final = final
        self.responder_lost.set()

    def tool_context(self, tool_call_id: str) -> ToolContext:
        async def ask_user(kind: str, **fields: Any) -> Any:
            return await ui.ask(self, kind, **fields)

        return ToolContext(
            cwd=self.cwd, spill_dir=self.spill_dir, env=self.tool_env, tool_call_id=tool_call_id, ui=ask_user
        )

    # --- session_op: list / compact / fork (PROTOCOL §9.2) ----------------------------------------

    def _session_op(self, command: cmd.SessionOp) -> Any:
        args = command.typed_args
        if command.op == "list":
            sessions = [SessionSummary(**s) for s in list_sessions(self.config.home, str(self.cwd))]
            return SessionListResult(sessions=sessions)
        if self.busy:
            raise ShardError(
                ErrorCode.CONFLICT,
                f"session_op {command.op} runs between turns; a turn is queued or running (nothing was done)",
            )
        if command.op == "fork":
            assert isinstance(args, cmd.ForkArgs)
            fork_id, session_id, head = fork(
                self.store,
                args.from_entry_id,
                model=self.model.id if self.model else None,
                mode=self.modes.active.name,
            )
            return ForkResult(fork_id=fork_id, session_id=session_id, head_entry_id=head)
        assert isinstance(args, cmd.CompactArgs)
        self.summarizer()  # NOT_FOUND now, before any status change, when there is nothing to summarize with
        keep = args.keep_recent_tokens or self.config.compaction.keep_recent_tokens
        self.compacting = True

        def never_ran() -> None:
            aborted = ShardError(ErrorCode.INTERNAL_ERROR, "compaction aborted; nothing was appended")
            self.emit(error_response(aborted, id=command.id, command=command.type))

        self._start_work(self._manual_compaction(command, keep), on_unstarted=never_ran)
        return DEFERRED

    async def _manual_compaction(self, command: cmd.SessionOp, keep: int) -> None:
        from shard.agent.compaction import compact

        try:
            self.set_status("compacting")
            result = await compact(self, keep)
            self.respond(command, result)
        except ShardError as exc:
            self.emit(error_response(exc, id=command.id, command=command.type))
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            aborted = ShardError(ErrorCode.INTERNAL_ERROR, "compaction aborted; nothing was appended")
            self.emit(error_response(aborted, id=command.id, command=command.type))
        finally:
            self.compacting = False
            self.turn_task = None
            if self.fatal is None:
                self.set_status("idle")
            self.idle.set()
            if self.follow_ups and self.fatal is None:
                self.start_turn(self.follow_ups.popleft())

    def summarizer(self) -> tuple[ModelEntry, Provider]:
        """The provider compaction summarizes with: the active selection."""
        if self._next_provider is not None:
            return self._next_provider
        if self.provider is not None and self.provider_entry is not None:
            return self.provider_entry, self.provider
        if self.provider_problem is not None:
            raise ShardError(ErrorCode.NOT_FOUND, f"no model can summarize: {self.provider_problem.message}")
        raise ShardError(ErrorCode.NOT_FOUND, "no model is configured, so nothing can summarize the session")

    # --- context accounting (compaction triggers) -----------------------------------------------

    def context_tokens(self) -> int:
        """The provider's last report of the context, plus an estimate of what was added since."""
        if self._context_reported is None:
            return sum(estimate_tokens(m) for m in self.view.messages)
        return self._context_reported + self._context_since

    def note_usage(self, context_tokens: int) -> None:
        self._context_reported, self._context_since = context_tokens, 0

    def context_reset(self, tokens: int) -> None:
        self._context_reported, self._context_since = tokens, 0

    def _over(self, fraction: float) -> bool:
        window = self.model.model.context_window if self.model else None
        if not self.config.compaction.enabled or not window:
            return False
        return self.context_tokens() >= window * fraction

    def compaction_due(self) -> bool:
        """The default tier: above the threshold once the agent goes idle."""
        return self._over(self.config.compaction.threshold)

    def overflow_due(self) -> bool:
        """The emergency tier: the next call would not fit the window."""
        return self._over(1.0)

    def save_meta(self) -> None:
        """Refresh meta.json (what session listing reads instead of the whole file)."""
        if not self.store.exists:
            return
        header = self.store.header
        meta: dict[str, Any] = {
            "session_id": self.store.session_id,
            "cwd": header.get("cwd"),
            "created": header.get("ts"),
            "updated": time.time(),
            "message_count": self._message_count,
        }
        if self._title:
            meta["title"] = self._title
        if header.get("sourceSessionId"):
            meta["source_session_id"] = header["sourceSessionId"]
            meta["source_entry_id"] = header.get("sourceEntryId")
        with contextlib.suppress(OSError):
            write_meta(self.store.path, meta)

    # --- modes --------------------------------------------------------------------------------

    def _list_modes(self) -> ListModesResult:
        return ListModesResult(
            modes=[ModeDescriptor(name=m.name, description=m.description) for m in self.modes.catalog()],
            active=self.modes.active.name,
        )

    def _set_mode(self, name: str) -> SetModeResult:
        previous = self.modes.active
        mode = self.modes.get(name)  # NOT_FOUND leaves the old mode in place
        if mode.name != previous.name:
            self.record("mode_change", mode=mode.name, previous=previous.name)
            self.modes.set(name)
            self.emit(ModeChanged(previous_mode=previous.name, mode=mode.name))
        return SetModeResult(previous_mode=previous.name, mode=mode.name)

    # --- models and reasoning levels ----------------------------------------------------------

    def _list_models(self) -> ListModelsResult:
        return ListModelsResult(
            models=[describe_model(e) for e in self.catalog.entries],
            active=describe_model(self.model) if self.model else None,
        )

    def _set_model(self, selection: str) -> SetModelResult:
        entry = self.catalog.resolve(selection)
        if entry is None:
            known = ", ".join(e.id for e in self.catalog.entries)
            raise ShardError(ErrorCode.NOT_FOUND, f"unknown model {shown(selection)} (models: {known})")
        provider = build_provider(entry, self.config)  # a construction failure is NOT_FOUND
        previous = self.model
        result = SetModelResult(
            previous=describe_model(previous) if previous else None, active=describe_model(entry)
        )
        if previous is not None and previous.id == entry.id:
            return result
        reasoning = entry.default_reasoning
        self.record("model_change", model=entry.id, reasoning=reasoning)
        self.model, self.reasoning = entry, reasoning
        self._next_provider = (entry, provider)
        self.provider_problem = None
        preload(entry.provider.kind)
        self.emit(
            ModelChanged(
                previous=result.previous,
                active=result.active,
                capabilities=self.capabilities(),
            )
        )
        return result

    def take_provider(self) -> tuple[ModelEntry, Provider]:
        """At a provider-call boundary: swap in a pending selection, return what to call."""
        if self._next_provider is not None:
            self.provider_entry, self.provider = self._next_provider
            self._next_provider = None
        if self.provider is None or self.provider_entry is None:
            raise self.provider_problem or ShardError(ErrorCode.PROVIDER_ERROR, "no model is selected")
        return self.provider_entry, self.provider

    def start_background_work(self) -> None:
        """After sync: begin importing the active provider's SDK so the first prompt need not wait."""
        if self.model is not None and self.provider_problem is None:
            preload(self.model.provider.kind)

    def _reasoning_entry(self) -> ModelEntry:
        if self.model is None or not self.model.has_reasoning:
            name = self.model.id if self.model else "no model"
            raise ShardError(
                ErrorCode.CONFLICT,
                f"the active model ({name}) has no reasoning levels; check sync.capabilities",
            )
        return self.model

    def _list_reasoning_levels(self) -> ListReasoningLevelsResult:
        entry = self._reasoning_entry()
        return ListReasoningLevelsResult(
            model=describe_model(entry),
            levels=[
                ReasoningLevel(id=lv.id, label=lv.label, description=lv.description)
                if lv.description
                else ReasoningLevel(id=lv.id, label=lv.label)
                for lv in entry.model.reasoning_levels
            ],
            active=self.reasoning or entry.default_reasoning or "",
        )

    def _set_reasoning_level(self, model: str, effort: str) -> SetReasoningLevelResult:
        entry = self._reasoning_entry()
        if model != entry.id:
            raise ShardError(
                ErrorCode.CONFLICT,
                f"the active model is {entry.id}, not {shown(model)}: refresh the reasoning picker",
            )
        ids = [lv.id for lv in entry.model.reasoning_levels]
        if effort not in ids:
            raise ShardError(
                ErrorCode.NOT_FOUND,
                f"unknown reasoning level {shown(effort)} for {entry.id} (levels: {', '.join(ids)})",
            )
        previous = self.reasoning or entry.default_reasoning or ""
        result = SetReasoningLevelResult(model=describe_model(entry), previous=previous, active=effort)
        if effort != previous:
            self.record("reasoning_change", model=entry.id, reasoning=effort, previous=previous)
            self.reasoning = effort
            self.emit(ReasoningLevelChanged(model=result.model, previous=previous, active=effort))
        return result


DEFERRED = object()  # a command whose response is sent later, by the work it started


def _first_text(message: dict[str, Any]) -> str | None:
    for block in message.get("content", []):
        if block.get("type") == "text" and block.get("text"):
            return title_of(block["text"])
    return None


def tool_environment(config: Config) -> dict[str, str]:
    """What commands the agent runs see: this process's environment without provider keys (a model
    could otherwise print them), with pagers off and git never prompting."""
    secret = key_variables(config) | {_secrets.FD_VARIABLE}  # captured at start; filtered again here
    env = {k: v for k, v in os.environ.items() if k not in secret}
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


def describe_model(entry: ModelEntry) -> ModelDescriptor:
    desc = ModelDescriptor(id=entry.id, provider=entry.provider.name, model=entry.model.id)
    if entry.model.context_window is not None:
        desc.context_window = entry.model.context_window
    if entry.label is not None:
        desc.label = entry.label  # additive field: tells a picker this is not a real LLM
    return desc


def hello_event(model: ModelEntry | None) -> Hello:
    return Hello(
        protocol_version=PROTOCOL_VERSION,
        server_version=__version__,
        capabilities=capabilities_for(model),
    )
