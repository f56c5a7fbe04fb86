"""The terminal client's application: the agent list, one agent's conversation, the prompt box, the
request dialogs and the pickers, wired to a connected :class:`~shard.client.ShardClient`.

State lives in the pure folds (:class:`~shard.tui.view.AgentView`, :class:`~shard.tui.roster.Roster`);
this module only feeds them events and sends what the user decides. One agent is attached at a time
(the selected one, interactive, as the web client does, R4.1.2.29); the others are watched through
the orchestrator events every client receives. A background child's request (asked of this client
as its parent's, PROTOCOL §6.3) shows in the open view of an ancestor, saying who asks.

Keys: Enter sends (a follow-up while the agent is busy), ctrl+s steers, Escape aborts the turn,
F2 / F3 / F4 open the mode / model / reasoning-level pickers (only when the capabilities allow),
F7 takes the last queued message back into the prompt box, ctrl+r reopens a request closed without
answering, ctrl+n goes to the new-agent field, ctrl+a to
the agent list, ctrl+t terminates the open agent, F5 lists its folder's sessions (open one, or fork
this one, as a new agent), F6 shows earlier entries, F8 kills it after a confirmation, ctrl+c (or q
in the agent list) quits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, OptionList, Static

from shard.client import Agent, ShardClient, ShardClientError, StaleRuntime, State
from shard.protocol.events import PermissionRequest, Sync, UiRequest
from shard.tui.agents import AgentList, NewAgent
from shard.tui.asks import Asks
from shard.tui.conversation import Conversation
from shard.tui.dialogs import Answer, PermissionDialog, RequestDialog, UiDialog
from shard.tui.lifecycle import Lifecycle
from shard.tui.pickers import Catalog, Kind, Picker, fetch, switch
from shard.tui.queue import QueueLine, take_back_returned, withdraw_last
from shard.tui.roster import Roster
from shard.tui.view import AgentView, window

log = logging.getLogger("shard.tui")

_LINK = {
    State.OPEN: "connected",
    State.CONNECTING: "connecting…",
    State.RECONNECTING: "reconnecting…",
    State.CLOSED: "disconnected",
}
_WITH_AGENT = frozenset({"abort", "steer", "reopen", "terminate", "sessions", "earlier", "kill", "unqueue"})
# Delete removes the highlighted agent; in a text field it is the field's own key, which comes first
_GATED: dict[str, Kind] = {"pick_mode": "mode", "pick_model": "model", "pick_reasoning": "reasoning"}


class ShardApp(Lifecycle):
    TITLE = "shard"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #side { width: 35%; min-width: 20; max-width: 38; border-right: solid $primary; }
    #new-agent { dock: bottom; }
    #status { height: auto; max-height: 2; background: $primary-background; padding: 0 1; }
    #waiting { height: auto; color: $warning; padding: 0 1; display: none; }
    #prompt { dock: bottom; }
    #hint { height: 1; color: $text-muted; padding: 0 1; }
    """
    BINDINGS = [
        Binding("ctrl+c", "quit", "Quit", priority=True),
        Binding("q", "leave", "Quit", show=False),
        Binding("escape", "abort", "Abort"),
        Binding("ctrl+s", "steer", "Steer"),
        Binding("f2", "pick_mode", "Mode"),
        Binding("f3", "pick_model", "Model"),
        Binding("f4", "pick_reasoning", "Reasoning"),
        Binding("ctrl+r", "reopen", "Requests"),
        Binding("ctrl+a", "focus_agents", "Agents", priority=True),  # before the text field's "home"
        Binding("ctrl+n", "focus_new", "New agent"),
        Binding("ctrl+t", "terminate", "Terminate"),
        Binding("f5", "sessions", "Sessions"),
        Binding("f6", "earlier", "Earlier"),
        Binding("f8", "kill", "Kill"),
        Binding("delete", "remove", "Remove"),
        Binding("f7", "unqueue", "Unqueue"),
    ]

    def __init__(
        self, client: ShardClient, *, agent_id: str | None = None, cwd: str | None = None, poll: float = 0.2
    ) -> None:
        super().__init__()
        self.client = client
        self.initial_agent = agent_id
        self.cwd = cwd or str(Path.cwd())
        self.poll = poll
        self.roster = Roster({})
        self._keys: tuple[bool | None, ...] = ()  # what check_action said at the last footer redraw
        self.asks = Asks(mine=client.answered_here)  # background children's requests (delegated stream)
        self.views: dict[str, AgentView] = {}
        self.selected: str | None = None
        self.link = "connected"
        self._generation = client.generation
        self._dialog: RequestDialog | None = None
        self._hidden: set[str] = set()  # requests closed without an answer (ctrl+r reopens them)
        self._answered: set[str] = set()  # answered here, waiting for the resolution to arrive
        self.earlier = False  # the open agent has entries above the ones shown
        self._pages: dict[str, int] = {}  # agent_id -> pages of earlier entries shown (F6)
        self.updated = asyncio.Event()  # set on every change shown: tests wait on it, never sleep

    # --- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="side"):
                yield AgentList()
                yield NewAgent(self.cwd)
            with Vertical(id="main"):
                yield Static(Text("no agent selected"), id="status")
                yield Static(Text(""), id="waiting")  # what the agent waits for: a provider retry
                yield Conversation()
                yield QueueLine()
                yield Static(Text("Select an agent (Enter) or create one on a directory (ctrl+n)"), id="hint")
                yield Input(placeholder="Enter: send", id="prompt")
        yield Footer()

    async def on_mount(self) -> None:
        self.set_interval(self.poll, self._watch_link)
        self.run_worker(self._follow_orchestrator(), group="orchestrator")
        self.run_worker(self._follow_delegated(), group="delegated")
        await self._relist()
        if self.initial_agent:
            await self.select(self.initial_agent)
        else:
            self.query_one(AgentList).focus()

    @property
    def view(self) -> AgentView | None:
        return self.views.get(self.selected) if self.selected else None

    async def _follow_delegated(self) -> None:
        with contextlib.suppress(ShardClientError):
            async for event in self.client.delegated_requests():
                self.asks.apply(event)
                if self.view is not None:
                    self._refresh(self.view)

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if isinstance(event.option_list, AgentList) and event.option.id:
            await self.select(event.option.id)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if isinstance(event.input, NewAgent):
            await self._create(event.value.strip())
        elif event.input.id == "prompt":
            await self._send(event.value, steer=False)

    async def _create(self, cwd: str, session_id: str | None = None) -> None:
        if not cwd:
            return
        try:
            fields = {"session_id": session_id} if session_id else {}
            agent_id = await self.client.create_agent_id(cwd, **fields)
        except ShardClientError as exc:
            self.notify(f"cannot create an agent in {cwd}: {exc}", severity="error")
            return
        await self._relist()
        await self.select(agent_id)

    # --- one agent ------------------------------------------------------------------------------------

    async def select(self, agent_id: str) -> None:
        """Attach ``agent_id`` (interactive) and show it; the previously shown agent is detached."""
        if agent_id == self.selected and agent_id in self.client.agents:
            self.query_one("#prompt", Input).focus()
            return
        previous, self.selected = self.selected, agent_id
        self.query_one(Conversation).clear()
        if previous is not None and previous in self.client.agents:
            with contextlib.suppress(ShardClientError):
                await self.client.detach(previous)
        view = self.views.setdefault(agent_id, AgentView(agent_id, mine=self.client.answered_here))
        row = self.roster.rows.get(agent_id)
        if view.model is None and row is not None:
            view.model = row.model  # until a model_changed says otherwise
        self._show_roster()
        self._refresh(view)
        self.query_one("#prompt", Input).focus()  # before the sync shows: typing goes to the prompt
        try:
            agent = await self.client.attach(agent_id)
        except ShardClientError as exc:
            self.notify(f"cannot attach {agent_id}: {exc}", severity="error")
            return
        self.run_worker(self._follow(agent, view), group=f"agent-{agent_id}")

    async def _follow(self, agent: Agent, view: AgentView) -> None:
        """Fold the agent's stream (sync first, then each event once, across reconnects)."""
        try:
            async for event in agent.events():
                view.apply(event)
                if isinstance(event, Sync) and view.model is None and view.supports("model-catalog"):
                    self.run_worker(self._learn_model(agent, view), group="models")
                self._changed(view)
        except ShardClientError as exc:
            self.notify(f"{view.agent_id}: {exc}", severity="error")

    async def _learn_model(self, agent: Agent, view: AgentView) -> None:
        """An agent created without a model runs the configured default, which the registry does
        not name: the runtime's catalog says which it is, for the list and the status line."""
        with contextlib.suppress(ShardClientError):
            active = (await agent.list_models()).active
            if active is not None and view.model is None:
                view.model = active.id
                self._changed(view)

    def _changed(self, view: AgentView) -> None:
        if view.model and self.roster.know_model(view.agent_id, view.model):
            self._show_roster()
        if view.agent_id == self.selected:
            self._refresh(view)

    def _refresh(self, view: AgentView) -> None:
        entries = view.entries()
        self.earlier = len(entries) > self.shown_limit(view.agent_id)
        self.query_one(Conversation).show(window(entries, self.shown_limit(view.agent_id)))
        self.query_one("#status", Static).update(Text(self._headline(view)))
        waiting = self.query_one("#waiting", Static)  # wraps: whole at 80 columns too
        waiting.update(Text(view.status_detail or ""))
        waiting.display = view.status_detail is not None
        hint = "Enter: follow-up · ctrl+s: steer · Esc: abort" if view.busy else "Enter: send"
        self.query_one("#hint", Static).update(Text(hint))
        self.query_one(QueueLine).show(view)
        if (handed_back := take_back_returned(view, self.query_one("#prompt", Input))) is not None:
            self.notify(handed_back, severity="warning")
        self._keys_changed()
        self._show_requests(view)
        self.updated.set()

    def _headline(self, view: AgentView) -> str:
        return view.headline(self.link, asked=len(self.asks.shown_in(self.roster, view.agent_id)))

    def _watch_link(self) -> None:
        link = _LINK[self.client.connection.state]
        error = self.client.connection.error
        if link == "disconnected" and error is not None:
            link = f"disconnected: {error}"
        if self.client.generation != self._generation:  # a new hello: what happened meanwhile
            self._generation = self.client.generation
            self.run_worker(self._relist(), group="relist")
        if link != self.link:
            self.link = link
            view = self.view
            status = self._headline(view) if view else link
            self.query_one("#status", Static).update(Text(status))
            self.updated.set()

    # --- the prompt box --------------------------------------------------------------------------------

    def _agent(self) -> Agent | None:
        return self.client.agents.get(self.selected) if self.selected else None

    async def _send(self, text: str, *, steer: bool) -> None:
        agent = self._agent()
        if agent is None or not text.strip():
            return
        self.query_one("#prompt", Input).value = ""
        try:
            if steer and agent.status not in (None, "idle"):
                await agent.steer(text)
            else:
                await agent.prompt(text)  # the SDK adds follow_up mid-turn, nothing when idle
        except ShardClientError as exc:
            self.notify(f"not sent: {exc}", severity="error")

    async def action_steer(self) -> None:
        await self._send(self.query_one("#prompt", Input).value, steer=True)

    async def action_unqueue(self) -> None:
        agent, view = self._agent(), self.view
        if agent is None or view is None:
            return
        if (notice := await withdraw_last(agent, view, self.query_one("#prompt", Input))) is not None:
            self.notify(notice)

    async def action_abort(self) -> None:
        agent = self._agent()
        if agent is not None and agent.status not in (None, "idle"):
            with contextlib.suppress(ShardClientError):
                await agent.abort()

    def action_leave(self) -> None:
        """q quits from the agent list only: in a dialog or a text field it is just a letter."""
        if isinstance(self.focused, AgentList):
            self.exit()

    def action_focus_agents(self) -> None:
        self.query_one(AgentList).focus()

    def action_focus_new(self) -> None:
        self.query_one(NewAgent).focus()

    # --- requests -----------------------------------------------------------------------------------

    def _show_requests(self, view: AgentView) -> None:
        """The agent's own open requests, then its background children's (§6.3), one dialog at a time."""
        theirs = self.asks.shown_in(self.roster, view.agent_id)
        asked = {r.request_id: r for r in [*view.pending.values(), *theirs]}
        dialog = self._dialog
        if dialog is not None:
            request_id = dialog.request.request_id
            if request_id in asked:
                return
            self._dialog = None  # answered elsewhere (or here): first response wins
            if dialog.is_current:
                dialog.dismiss(None)
            said = view.resolved.get(request_id) or self.asks.resolved.get(request_id)
            if said and request_id not in self._answered:
                self.notify(said)  # "Allowed by Chrome on Linux"
        if len(self.screen_stack) > 1:
            return  # a picker is open: the request waits for it
        for request in asked.values():
            if request.request_id not in self._hidden | self._answered:
                self._open(view.agent_id, request)
                return

    def _open(self, agent_id: str, request: PermissionRequest | UiRequest) -> None:
        dialog: RequestDialog
        asker = self.roster.asker(request.agent_id) if request.agent_id not in (None, agent_id) else None
        dialog = (
            PermissionDialog(request, asker)
            if isinstance(request, PermissionRequest)
            else UiDialog(request, asker)
        )
        self._dialog = dialog

        def answered(answer: Answer | None) -> None:
            if self._dialog is dialog:
                self._dialog = None
            view = self.views.get(agent_id)
            if answer is None:
                mine = view is not None and request.request_id in view.pending
                if mine or request.request_id in self.asks.pending:
                    self._hidden.add(request.request_id)
                return
            self._answered.add(request.request_id)
            self.run_worker(self._answer(agent_id, request, answer), group="answers")

        self.push_screen(dialog, answered)

    async def _answer(self, agent_id: str, request: PermissionRequest | UiRequest, answer: Answer) -> None:
        """Answer under the asker's ``agent_id``: the open agent's own (a request from a ``sync``
        carries none), or a background child's (R6.3.10)."""
        asker = request.agent_id or agent_id
        agent = self.client.agents.get(asker)
        if agent is None and asker == agent_id:
            return  # the open agent was detached meanwhile
        kind, value = answer
        fields: dict[str, Any] = {"choice_id": value} if kind == "choice" else {"decision": value}
        try:
            if isinstance(request, PermissionRequest):
                if agent is not None:
                    await agent.answer_permission(request.request_id, **fields)
                else:
                    await self.client.answer_delegated(request, **fields)
            elif agent is not None:
                await agent.answer_ui(request.request_id, value)
            else:
                await self.client.answer_delegated_ui(request, value)
        except ShardClientError as exc:
            self._answered.discard(request.request_id)
            self.notify(f"answer not taken: {exc}", severity="warning")

    def action_reopen(self) -> None:
        self._hidden.clear()
        if self.view is not None:
            self._show_requests(self.view)

    # --- pickers (capability-gated, R9.1.10; stale answers discarded, R9.1.17) ------------------------

    def _keys_changed(self) -> None:
        """Redraw the footer only when a key came or went: its redraw restyles every key, and an
        event can come every few milliseconds (a streamed tool call: hundreds for one write)."""
        keys = tuple(self.check_action(b.action, ()) for b in self.BINDINGS if isinstance(b, Binding))
        if keys != self._keys:
            self._keys = keys
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which keys exist now (False: not in the footer, and the key does nothing)."""
        view = self.view
        gate = _GATED.get(action)
        if gate is not None:
            return view is not None and view.pickers()[gate]
        if action == "unqueue":  # F7 in the footer only while something is queued
            return view is not None and bool(view.queue) and view.supports("message-queue")
        if action == "earlier":
            return view is not None and self.earlier  # F6 in the footer only when it shows something
        if action in _WITH_AGENT:
            return view is not None
        if action == "remove":  # only where the daemon has agent.remove (PROTOCOL §7)
            hello = self.client.connection.hello
            return bool(self.roster.rows) and hello is not None and "agent-remove" in hello.capabilities
        return True

    async def action_pick_mode(self) -> None:
        await self._pick("mode")

    async def action_pick_model(self) -> None:
        await self._pick("model")

    async def action_pick_reasoning(self) -> None:
        await self._pick("reasoning")

    async def _pick(self, what: Kind) -> None:
        agent, view = self._agent(), self.view
        if agent is None or view is None or not view.pickers()[what] or len(self.screen_stack) > 1:
            return  # not offered, or a dialog or picker is already open
        token = view.token(self.client.generation)
        row = self.roster.rows.get(view.agent_id)
        if row is not None and row.runtime_state == "stopped":
            # a catalog read never wakes a runtime (docs/protocol.md); attaching again restores it
            try:
                agent = await self.client.attach(view.agent_id)
            except ShardClientError as exc:
                self.notify(f"no {what} catalog: {exc}", severity="error")
                return
            assert agent.last_sync is not None  # attach returns once the new runtime's sync came
            token = (self.client.generation, agent.last_sync.runtime_epoch)
        try:
            catalog = await fetch(agent, what)
        except StaleRuntime:
            log.info("shard tui: a %s catalog from a superseded runtime was discarded", what)
            return
        except ShardClientError as exc:
            self.notify(f"no {what} catalog: {exc}", severity="error")
            return
        if not view.current(token, self.client.generation) or self.selected != view.agent_id:
            return  # answered under another connection or runtime: discarded (R9.1.17)

        def chosen(choice: str | None) -> None:
            if choice is not None and choice != catalog.active:
                self.run_worker(self._switch(agent, catalog, choice), group="switch")
            self._show_requests(view)  # a request that came while the picker was open

        self.push_screen(Picker(f"Choose a {what}", catalog.entries, catalog.active), chosen)

    async def _switch(self, agent: Agent, catalog: Catalog, choice: str) -> None:
        try:
            await switch(agent, catalog, choice)
        except ShardClientError as exc:
            self.notify(f"{catalog.kind} not changed: {exc}", severity="error")
