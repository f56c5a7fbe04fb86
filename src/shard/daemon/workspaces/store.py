"""The workspaces' durable half (PROTOCOL §10.1a): what the service asks of ``state.db``, answered
before it goes on. ``shard.daemon.manifests`` has the real one, ``shard.testing.manifests`` one in
memory."""

from __future__ import annotations

from typing import Protocol

from shard.daemon.record import AgentRecord
from shard.daemon.workspaces.model import Workspace


class WorkspaceStore(Protocol):
    def add_workspace(self, ws: Workspace, record: AgentRecord) -> None:
        """Write a new workspace and its first agent's row in one transaction."""

    def save_workspace(self, ws: Workspace) -> None:
        """Update the workspace's row (INTERNAL_ERROR when the disk refuses)."""

    def load_workspaces(self) -> list[Workspace]:
        """Every workspace, retired ones included, oldest first."""
