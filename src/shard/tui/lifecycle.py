"""The open agent's lifecycle keys, a base of :class:`~shard.tui.app.ShardApp`: ctrl+t terminates,
F8 kills after a confirmation, F5 opens the sessions view (open a saved session, or fork this one,
as a new agent, as the web client does), F6 pages back through the conversation's earlier entries.

The app provides the state and the two hooks (``_create``, ``_refresh``); this module only decides
what to send and sends it.
"""

from __future__ import annotations

from textual import work
from textual.app import App

from shard.client import Agent, ShardClient, ShardClientError
from shard.tui.conversation import Conversation
from shard.tui.roster import Roster
from shard.tui.sessions import Choice, KillConfirm, SessionsScreen, fork, list_sessions
from shard.tui.view import AgentView

SHOWN_ENTRIES = 300  # conversation entries on screen at once, per F6 page (the rest stays data)


class Lifecycle(App[None]):
    client: ShardClient
    roster: Roster
    views: dict[str, AgentView]
    selected: str | None
    _pages: dict[str, int]  # agent_id -> how many SHOWN_ENTRIES its pane shows
    earlier: bool  # the open agent has entries above the ones shown

    async def _create(self, cwd: str, session_id: str | None = None) -> None:
        raise NotImplementedError

    def _refresh(self, view: AgentView) -> None:
        raise NotImplementedError

    async def select(self, agent_id: str) -> None:
        raise NotImplementedError

    def shown_limit(self, agent_id: str) -> int:
        return SHOWN_ENTRIES * self._pages.get(agent_id, 1)

    async def action_terminate(self) -> None:
        """agent.terminate the open agent: it stops now if idle, else when its work is done."""
        if self.selected is None:
            return
        try:
            result = await self.client.terminate(self.selected)
        except ShardClientError as exc:
            self.notify(f"not terminated: {exc}", severity="error")
            return
        self.notify("terminating when the turn ends" if result.deferred else "terminated")

    @work(group="lifecycle", exclusive=True)
    async def action_kill(self) -> None:
        """agent.kill the open agent once confirmed (y): its runtime stops now, its session stays."""
        agent_id = self.selected
        if agent_id is None or len(self.screen_stack) > 1:
            return
        if not await self.push_screen_wait(KillConfirm(self.roster.asker(agent_id))):
            return
        try:
            await self.client.kill(agent_id)
        except ShardClientError as exc:
            self.notify(f"not killed: {exc}", severity="error")
            return
        self.notify(f"killed {agent_id}")

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
