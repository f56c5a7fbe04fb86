"""Workspaces: agents in their own git worktrees (PROTOCOL §10.1a)."""
