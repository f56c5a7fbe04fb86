"""``session_op list`` and ``fork`` (PROTOCOL §9.2): pure enough to live apart from the runtime,
which only decides whether they may run now."""

from __future__ import annotations

from pathlib import Path

from shard.agent.catalog import ModelEntry
from shard.agent.session.fork import fork
from shard.agent.session.listing import list_sessions
from shard.agent.session.store import SessionStore
from shard.protocol.agent_results import ForkResult, SessionListResult, SessionSummary


def listed(home: Path, cwd: Path) -> SessionListResult:
    return SessionListResult(sessions=[SessionSummary(**s) for s in list_sessions(home, str(cwd))])


def forked(store: SessionStore, from_entry_id: str, model: ModelEntry | None, mode: str) -> ForkResult:
    fork_id, session_id, head = fork(store, from_entry_id, model=model.id if model else None, mode=mode)
    return ForkResult(fork_id=fork_id, session_id=session_id, head_entry_id=head)
