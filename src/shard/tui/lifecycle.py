"""The agent list and the agents' lifecycle keys, a base of :class:`~shard.tui.app.ShardApp`.

The list follows the orchestrator events: an agent removed anywhere leaves it, and the open one
leaves the screen. ctrl+t terminates the open agent, F8 kills it after a confirmation, Delete (in
the agent list) removes the highlighted agent after a confirmation, F5 opens the sessions view
(open a saved session, or fork this one, as a new agent, as the web client does), F6 pages back
through the conversation's earlier entries. Terminate and kill on an agent with no runtime say why
there is nothing to do instead of sending anything.

The app provides the state and the two hooks (``_create``, ``_refresh``); this module only decides
what to send and sends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from rich.text import Text
from textual import work
from textual.app import App
from textual.widgets import Static

from shard.client import Agent, ShardClient, ShardClientError
from shard.protocol.events import AgentRemoved
from shard.tui.agents import AgentList
from shard.tui.conversation import Conversation
from shard.tui.roster import Roster
from shard.tui.sessions import Choice, KillConfirm, RemoveConfirm, SessionsScreen, fork, list_sessions
from shard.tui.view import AgentView

SHOWN_ENTRIES = 300  # conversation entries on screen at once, per F6 page (the rest stays data)


class Lifecycle(App[None]):
    client: ShardClient
    updated: asyncio.Event
    roster: Roster
    views: dict[str, AgentView]
    selected: str | None
    _pages: dict[str, int]  # agent_id -> how many SHOWN_ENTRIES its pane shows
    earlier: bool  # the open agent has entries above the ones shown

    async def _create(self, cwd: str, session_id: str | None = None) -> None:
        raise NotImplementedError

    def _refresh(self, view: AgentView) -> None:
        raise NotImplementedError

    def _keys_changed(self) -> None:
        raise NotImplementedError

    async def select(self, agent_id: str) -> None:
        raise NotImplementedError

    def _idle_reason(self, agent_id: str, what: str) -> str | None:
        """Why ``what`` (terminate, kill) has nothing to do: the agent has no runtime."""
        row = self.roster.rows.get(agent_id)
        if row is None or not row.stopped:
            return None
        return (
            f"Agent is {row.runtime_state}: nothing to {what}. A prompt starts it again; Delete removes it."
        )

    # --- the agent list ---------------------------------------------------------------------------

    async def _relist(self) -> None:
        try:
            infos = await self.client.list_agents()
        except ShardClientError as exc:
            self.notify(f"cannot list agents: {exc}", severity="error")
            return
        self.roster = Roster.of(infos, seen=self.roster)
        self._show_roster()

    def _show_roster(self) -> None:
        listing = self.query_one(AgentList)
        listing.selected = self.selected
        listing.show(self.roster.ordered())
        self.updated.set()

    async def _follow_orchestrator(self) -> None:
        with contextlib.suppress(ShardClientError):
            async for event in self.client.orchestrator_events():
                if isinstance(event, AgentRemoved) and event.agent_id == self.selected:
                    self._unselect()  # removed from another client: nothing to show any more
                if self.roster.apply(event, at=time.time()):
                    self._show_roster()

    def _unselect(self) -> None:
        """The open agent is gone: show none."""
        if self.selected is not None:
            self.views.pop(self.selected, None)
        self.selected = None
        self.query_one(Conversation).clear()
        self.query_one("#status", Static).update(Text("no agent selected"))
        self._keys_changed()

    # --- the open agent's keys ----------------------------------------------------------------------

    def shown_limit(self, agent_id: str) -> int:
        return SHOWN_ENTRIES * self._pages.get(agent_id, 1)

    async def action_terminate(self) -> None:
        """agent.terminate the open agent: it stops now if idle, else when its work is done."""
        if self.selected is None:
            return
        why = self._idle_reason(self.selected, "terminate")
        if why is not None:
            self.notify(why, severity="warning")
            return
        try:
            result = await self.client.terminate(self.selected)
        except ShardClientError as exc:
            self.notify(f"Not stopped: {exc}", severity="error")
            return
        if result.forgotten:
            self.notify("Agent removed (it had never run; its session is kept)")
        else:
            self.notify("Agent stops when its turn ends" if result.deferred else "Agent stopped")

    @work(group="lifecycle", exclusive=True)
    async def action_kill(self) -> None:
        """agent.kill the open agent once confirmed (y): its runtime stops now, its session stays."""
        agent_id = self.selected
        if agent_id is None or len(self.screen_stack) > 1:
            return
        why = self._idle_reason(agent_id, "kill")
        if why is not None:
            self.notify(why, severity="warning")
            return
        if not await self.push_screen_wait(KillConfirm(self.roster.asker(agent_id))):
            return
        try:
            await self.client.kill(agent_id)
        except ShardClientError as exc:
            self.notify(f"Not killed: {exc}", severity="error")
            return
        self.notify("Agent killed")

    @work(group="lifecycle", exclusive=True)
    async def action_remove(self) -> None:
        """agent.remove the agent highlighted in the list (else the open one) once confirmed (y):
        it leaves the list with its subagents, a running one stopped first; its session stays."""
        listing = self.query_one(AgentList)
        agent_id = listing.highlighted_id if self.focused is listing else self.selected
        row = self.roster.rows.get(agent_id or "")
        if agent_id is None or row is None or len(self.screen_stack) > 1:
            return
        kids = len(self.roster.descendants(agent_id))
        if not await self.push_screen_wait(RemoveConfirm(self.roster.asker(agent_id), kids, not row.stopped)):
            return
        try:
            removed = await self.client.remove_agent(agent_id)
        except ShardClientError as exc:
            self.notify(f"Not removed: {exc}", severity="error")
            return
        if self.selected in removed:
            self._unselect()
        self.notify("Agent removed" + _with_subagents(len(removed) - 1))

    def action_earlier(self) -> None:
        """SHOWN_ENTRIES more of the earlier entries above the ones on screen, and scroll to them."""
        view = self.views.get(self.selected or "")
        if view is None or not self.earlier:
            return
        self._pages[view.agent_id] = self._pages.get(view.agent_id, 1) + 1
        self._refresh(view)
        self.query_one(Conversation).scroll_home(animate=False)

    @work(group="lifecycle", exclusive=True)
    async def action_sessions(self) -> None:
        """The open agent's folder's sessions; open one, or fork this one, as a new agent."""
        agent = self.client.agents.get(self.selected or "")
        row = self.roster.rows.get(self.selected or "")
        if agent is None or row is None or len(self.screen_stack) > 1:
            return
        try:
            rows = await list_sessions(agent)
        except ShardClientError as exc:
            self.notify(f"cannot list sessions: {exc}", severity="error")
            return
        choice: Choice | None = await self.push_screen_wait(SessionsScreen(row.cwd, rows, row.session_id))
        if choice is None:
            return
        kind, session_id = choice
        holder = next((r.agent_id for r in self.roster.rows.values() if r.session_id == session_id), None)
        if kind == "open" and holder is not None:
            await self.select(holder)  # the daemon lets one agent adopt a session: go to it
            return
        if kind == "fork":
            forked = await self._fork(agent)
            if forked is None:
                return
            session_id = forked
        await self._create(row.cwd, session_id)

    async def _fork(self, agent: Agent) -> str | None:
        """Fork at the last message of the open agent's window: the whole conversation so far."""
        view = self.views.get(agent.agent_id or "")
        if view is None or not view.transcript.messages:
            self.notify("nothing to fork yet", severity="warning")
            return None
        try:
            return await fork(agent, view.transcript.messages[-1].id)
        except ShardClientError as exc:
            self.notify(f"not forked: {exc}", severity="error")
            return None


def _with_subagents(count: int) -> str:
    return f" with its {count} subagent{'s' if count > 1 else ''}" if count else ""
